"""Behaviour of inspect / validate / derive on real fixture logs (DESIGN §3, §6, §7)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import FIXTURES, Sesstool

DSH = FIXTURES / "dsh"


def fixture_log(name: str, zstd: bool = False) -> Path:
    d = DSH / name
    return next(
        p for p in sorted(d.iterdir()) if p.name.startswith("session") and p.name.endswith(".zstd") == zstd
    )


# -- sources: directories, stdin, generations -----------------------------------------------


def test_directory_resolves_to_highest_generation(sesstool: Sesstool, tmp_path: Path) -> None:
    shutil.copy(fixture_log("v0-tiny"), tmp_path / "session.jsonl")
    shutil.copy(fixture_log("v2-tiny"), tmp_path / "session.v2.jsonl")
    (tmp_path / "session.v9.jsonl.tmp").write_bytes(b"garbage")  # temporaries never count
    (tmp_path / "session.v03.jsonl").write_bytes(b"garbage")  # not canonical
    result = sesstool("inspect", "--json", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["version"] == 2
    assert doc["file"]["path"].endswith("session.v2.jsonl")


def test_directory_with_both_encodings_is_refused(sesstool: Sesstool, tmp_path: Path) -> None:
    shutil.copy(fixture_log("v0-tiny"), tmp_path / "session.jsonl")
    shutil.copy(fixture_log("v0-tiny", zstd=True), tmp_path / "session.jsonl.zstd")
    result = sesstool("inspect", str(tmp_path))
    assert result.exit_code == 3
    assert "single-encoding" in result.stderr


def test_header_version_must_match_file_name(sesstool: Sesstool, tmp_path: Path) -> None:
    target = tmp_path / "session.v3.jsonl"
    shutil.copy(fixture_log("v2-tiny"), target)
    result = sesstool("validate", "--format", "json", str(target))
    assert result.exit_code == 1
    rules = [f["rule"] for f in json.loads(result.stdout)["files"][0]["findings"]]
    assert rules == ["header-filename-version"]


@pytest.mark.parametrize("zstd", [False, True])
def test_stdin_is_read_and_sniffed(sesstool: Sesstool, zstd: bool) -> None:
    data = fixture_log("crash-not-started", zstd).read_bytes()
    result = sesstool("inspect", "--json", "-", input=data)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["file"]["encoding"] == ("zstd" if zstd else "raw")
    assert doc["verdict"]["verdict"] == "interrupted"
    assert len(doc["repair"]["closers"]) == 3


def test_suffix_does_not_decide_encoding(sesstool: Sesstool, tmp_path: Path) -> None:
    disguised = tmp_path / "log.jsonl"  # zstd bytes under a raw name
    shutil.copy(fixture_log("v0-tiny", zstd=True), disguised)
    doc = json.loads(sesstool("inspect", "--json", str(disguised)).stdout)
    assert doc["file"]["encoding"] == "zstd" and doc["verdict"]["verdict"] == "clean"


# -- validate --------------------------------------------------------------------------------


def test_validate_walks_directories_and_globs(sesstool: Sesstool) -> None:
    result = sesstool(
        "validate", "--format", "json", "fixtures/dsh/v*-tiny/session*.jsonl", "fixtures/dsh/subagent"
    )
    doc = json.loads(result.stdout)
    paths = [f["path"] for f in doc["files"]]
    assert paths == [
        "fixtures/dsh/v0-tiny/session.jsonl",
        "fixtures/dsh/v1-tiny/session.v1.jsonl",
        "fixtures/dsh/v2-tiny/session.v2.jsonl",
        "fixtures/dsh/v3-tiny/session.v3.jsonl",
        "fixtures/dsh/v4-tiny/session.v4.jsonl",
        "fixtures/dsh/subagent/session.jsonl",
        "fixtures/dsh/subagent/session.jsonl.zstd",
    ]
    assert result.exit_code == 0 and not doc["failed"]


def test_validate_unreadable_path_fails(sesstool: Sesstool) -> None:
    result = sesstool("validate", "--format", "json", "fixtures/dsh/nope/session.jsonl")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["files"][0]["error"].endswith("no such file or directory")


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warning", 1), ("info", 1)])
def test_fail_on_threshold(sesstool: Sesstool, fail_on: str, code: int) -> None:
    # a torn log has warnings only
    result = sesstool("validate", "--fail-on", fail_on, "fixtures/dsh/torn-tail/session.jsonl")
    assert result.exit_code == code, result.stdout


def test_github_annotations(sesstool: Sesstool) -> None:
    result = sesstool("validate", "--format", "github", "fixtures/dsh/seq-gap/session.jsonl")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "::error file=fixtures/dsh/seq-gap/session.jsonl,line=8,title=sesstool seq-gap::session "
        "event seq 7 is not contiguous; expected 6 (a later turn/end proves this region was "
        "committed: corruption)"
    ]


def test_junit_is_well_formed(sesstool: Sesstool) -> None:
    result = sesstool(
        "validate",
        "--format",
        "junit",
        "fixtures/dsh/seq-gap/session.jsonl",
        "fixtures/dsh/v0-tiny/session.jsonl",
    )
    root = ET.fromstring(result.stdout)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.find("failure") is not None for c in cases] == [True, False]
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "seq-gap"


def test_fixture_mode_accepts_logs_without_seq_time_or_header(sesstool: Sesstool, tmp_path: Path) -> None:
    stripped = []
    for raw in fixture_log("clean-multiturn").read_bytes().splitlines()[1:]:
        ev = orjson.loads(raw)
        ev.pop("seq"), ev.pop("time")
        stripped.append(orjson.dumps(ev))
    log = tmp_path / "fixture.jsonl"
    log.write_bytes(b"\n".join(stripped) + b"\n")
    strict = sesstool("validate", str(log))
    assert strict.exit_code == 1
    relaxed = sesstool("validate", "--fixture", "--format", "json", str(log))
    assert relaxed.exit_code == 0, relaxed.stdout
    assert json.loads(relaxed.stdout)["files"][0]["verdict"]["verdict"] == "clean"


# -- derive ------------------------------------------------------------------------------------


def _derive(sesstool: Sesstool, *args: str) -> Any:
    result = sesstool("derive", "--format", "json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_derive_at_folds_a_prefix(sesstool: Sesstool) -> None:
    log = "fixtures/dsh/compaction/session.jsonl"
    full = _derive(sesstool, log)
    assert full["messages"] == _derive(sesstool, log, "--at", str(full["last_seq"]))["messages"]
    early = _derive(sesstool, log, "--at", "11")  # E1: user, assistant, tool result
    assert [m["id"] for m in early["messages"]] == ["m-u1", "m-a1", "m-t1"]
    assert early["at"] == 11 and early["last_seq"] == 11


def test_derive_at_past_the_end_is_an_error(sesstool: Sesstool) -> None:
    """The same usage error as fork's (issue 15 item 15): the log is fine, the argument is not."""
    log = "fixtures/dsh/v0-tiny/session.jsonl"
    result = sesstool("derive", "--at", "999", log)
    fork = sesstool("fork", "--dry-run", "--at", "999", log)
    assert result.exit_code == fork.exit_code == 2
    assert (
        result.stderr
        == fork.stderr
        == ("sesstool: --at 999 is past the end: the last committed event is seq 12\n")
    )


def test_derive_formats_agree(sesstool: Sesstool) -> None:
    log = "fixtures/dsh/clean-multiturn/session.jsonl"
    doc = _derive(sesstool, log)
    jsonl = sesstool("derive", "--format", "jsonl", log)
    assert [json.loads(x) for x in jsonl.stdout.splitlines()] == doc["messages"]
    text = sesstool("derive", "--format", "text", log)
    assert text.exit_code == 0
    assert text.stdout.count("\nassistant\n") + text.stdout.startswith("assistant\n") >= 1
    assert f"{len(doc['messages'])} message(s)" in text.stdout


@pytest.mark.parametrize(
    ("name", "code"),
    [("newer-version", 4), ("unknown-required", 4), ("corrupt-middle", 3), ("zstd-bitflip", 3)],
)
def test_derive_refuses(sesstool: Sesstool, name: str, code: int) -> None:
    log = fixture_log(name, zstd=name.startswith("zstd"))
    result = sesstool("derive", str(log))
    assert result.exit_code == code
    assert result.stdout == ""


def test_derive_v3_system_head(sesstool: Sesstool) -> None:
    doc = _derive(sesstool, "fixtures/dsh/v3-tiny/session.v3.jsonl")
    roles = [(m["role"], m["content"][0]["text"]) for m in doc["messages"]]
    assert roles == [("system", "Be brief."), ("user", "hi"), ("assistant", "Hello")]


# -- terminal safety ---------------------------------------------------------------------------

HOSTILE = "evil \x1b[31mred\x1b[0m \x07bell \u202eoverride\u202c \x9bcsi end"


def test_log_text_never_reaches_the_terminal_raw(sesstool: Sesstool, tmp_path: Path) -> None:
    lines = fixture_log("v0-tiny").read_bytes().splitlines()
    user = orjson.loads(lines[3])
    user["data"]["content"][0]["text"] = HOSTILE
    user["data"]["id"] = HOSTILE
    lines[3] = orjson.dumps(user)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    for args in (["inspect", "--timeline"], ["derive", "--format", "text"], ["validate"]):
        out = sesstool(*args, str(log))
        assert out.exit_code == 0, out.stderr
        for ch in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert ch not in out.stdout, (args, ch)
    assert "\\x1b[31mred" in sesstool("derive", "--format", "text", str(log)).stdout
    exact = _derive(sesstool, str(log))
    assert exact["messages"][0]["content"][0]["text"] == HOSTILE
