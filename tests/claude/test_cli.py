"""Every command on every Claude fixture, raw and zstd: goldens compared exactly.

Refresh with ``make goldens`` (SESSTOOL_UPDATE_GOLDENS=1) — and read the diff before committing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.claude._support import CLAUDE, RESUME_PROMPT, SCENARIOS, Scenario
from tests.claude.test_transcript import EXPECTED
from tests.claude_lane.judge import appended_by_cli, shape
from tests.conftest import ROOT, UPDATE_GOLDENS, Sesstool

EXPECTED_DIR = CLAUDE / "expected"
LOGS = [Scenario(n).transcript for n in SCENARIOS] + [
    CLAUDE / "zstd" / n / (Scenario(n).transcript.name + ".zstd") for n in SCENARIOS
]
IDS = [f"{p.parent.parent.name}/{p.parent.name}" for p in LOGS]


def _check(path: Path, actual: str | bytes) -> None:
    data = actual.encode() if isinstance(actual, str) else actual
    if UPDATE_GOLDENS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return
    assert path.exists(), f"missing golden {path.relative_to(ROOT)}: run make goldens"
    assert data == path.read_bytes(), f"output differs from {path.relative_to(ROOT)}"


def _golden(log: Path, command: str, ext: str) -> Path:
    kind = "zstd" if log.name.endswith(".zstd") else "raw"
    return EXPECTED_DIR / log.parent.name / f"{kind}.{command}.{ext}"


def _rel(log: Path) -> str:
    return str(log.relative_to(ROOT))


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_inspect(sesstool: Sesstool, log: Path) -> None:
    human = sesstool("inspect", _rel(log))
    assert human.exit_code == 0, human.stderr
    assert "\x1b" not in human.stdout
    _check(_golden(log, "inspect", "txt"), human.stdout)
    doc = sesstool("inspect", "--json", _rel(log))
    assert doc.exit_code == 0, doc.stderr
    parsed = json.loads(doc.stdout)
    assert parsed["verdict"]["verdict"] == EXPECTED[log.parent.name][0]
    _check(_golden(log, "inspect", "json"), doc.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_validate(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("validate", "--format", "json", _rel(log))
    doc = json.loads(result.stdout)
    assert result.exit_code == (1 if doc["failed"] else 0), result.stderr
    _check(_golden(log, "validate", "json"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_derive(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("derive", "--format", "json", _rel(log))
    if EXPECTED[log.parent.name][0] == "corrupt":
        assert result.exit_code == 3, result.stderr
        return
    assert result.exit_code == 0, result.stderr
    _check(_golden(log, "derive", "json"), result.stdout)


REPAIRABLE = [n for n in SCENARIOS if EXPECTED[n][0] in ("interrupted", "torn")]


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", REPAIRABLE)
def test_repair(sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool) -> None:
    """A new file with the session id as its name, the committed prefix byte for byte, then the
    closers; reproducible (the golden), balanced, and the source untouched."""
    scenario = Scenario(name)
    source = CLAUDE / "zstd" / name / (scenario.transcript.name + ".zstd") if zstd else scenario.transcript
    before = source.read_bytes()
    out = tmp_path / "out" / scenario.transcript.name
    out.parent.mkdir()
    result = sesstool("repair", _rel(source), "-o", str(out), "--encoding", "raw")
    assert result.exit_code == 0, result.stderr
    assert source.read_bytes() == before
    raw = scenario.transcript.read_bytes()
    committed = raw[: raw.rfind(b"\n") + 1]
    repaired = out.read_bytes()
    assert repaired.startswith(committed)
    _check(EXPECTED_DIR / name / "repaired.jsonl", repaired)
    # entry for entry (uuid/timestamp values aside) what Claude Code appended on resume (§0)
    ours = [json.loads(line) for line in repaired[len(committed) :].split(b"\n")[:-1]]
    cli = appended_by_cli(raw, scenario.resumed.read_bytes(), RESUME_PROMPT)
    known = {e["uuid"]: e["uuid"] for e in map(json.loads, committed.split(b"\n")[:-1]) if "uuid" in e}
    assert shape(ours, known) == shape(cli, known)
    assert [list(e) for e in ours] == [list(e) for e in cli]
    again = sesstool("inspect", "--json", str(out))
    assert json.loads(again.stdout)["verdict"]["verdict"] == "clean", again.stdout


@pytest.mark.parametrize("name", [n for n in SCENARIOS if EXPECTED[n][0] == "clean"])
def test_repair_of_a_balanced_transcript_writes_nothing(
    sesstool: Sesstool, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "x.jsonl"
    result = sesstool("repair", _rel(Scenario(name).transcript), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert not out.exists()


def test_repair_refuses_a_corrupt_transcript(sesstool: Sesstool, tmp_path: Path) -> None:
    result = sesstool("repair", _rel(Scenario("damaged-nul-run").transcript), "-o", str(tmp_path / "x.jsonl"))
    assert result.exit_code == 3, result.stderr
    assert "nul" in result.stderr.lower()


def test_repair_and_fork_never_write_into_projects_unless_asked(sesstool: Sesstool, tmp_path: Path) -> None:
    home = tmp_path / "home" / "projects" / "-work"
    home.mkdir(parents=True)
    source = home / Scenario("kill-tool").transcript.name
    shutil.copyfile(Scenario("kill-tool").transcript, source)
    for command in (["repair", str(source)], ["fork", str(source)]):
        result = sesstool(*command)
        assert result.exit_code == 2, result.stderr
        assert "projects directory" in result.stderr
    assert sorted(p.name for p in home.iterdir()) == [source.name]
    asked = home / "repaired" / source.name
    asked.parent.mkdir()
    assert sesstool("repair", str(source), "-o", str(asked)).exit_code == 0


@pytest.mark.parametrize("name", ["kill-parallel-one-answered", "tool-parallel"])
def test_fork(sesstool: Sesstool, tmp_path: Path, name: str) -> None:
    """A new session id in the file name and every entry, forkedFrom stamped, the rest of each
    line unchanged, the child balanced (closers appended when the source was interrupted)."""
    scenario = Scenario(name)
    child = "11111111-2222-4333-8444-555555555555"
    out = tmp_path / f"{child}.jsonl"
    result = sesstool("fork", _rel(scenario.transcript), "--id", child, "-o", str(out))
    assert result.exit_code == 0, result.stderr
    _check(EXPECTED_DIR / name / "fork.jsonl", out.read_bytes())
    doc = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert doc["verdict"]["verdict"] == "clean", doc["verdict"]
    for line in out.read_bytes().split(b"\n")[:-1]:
        entry = json.loads(line)
        if "sessionId" in entry:
            assert entry["sessionId"] == child
    assert scenario.session_id.encode() in out.read_bytes()  # forkedFrom names the parent


def test_list_a_claude_home(sesstool: Sesstool) -> None:
    """A Claude home lists its sessions: id, cwd, version, verdict, size, last time."""
    result = sesstool("list", "--json", "fixtures/claude")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    main = [s for s in doc["sessions"] if "/subagents/" not in s["path"]]
    assert sorted(Path(s["path"]).parent.name for s in main) == SCENARIOS
    for row in main:
        scenario = Scenario(Path(row["path"]).parent.name)
        assert row["session"] == scenario.session_id
        assert row["verdict"]["verdict"] == EXPECTED[scenario.name][0]
        assert row["version"] == "2.1.332" and row["size"] == scenario.transcript.stat().st_size
        assert row["cwd"] == f"/tmp/sesstool-claude-lane/{scenario.name}/work" and row["last_time"]
    _check(EXPECTED_DIR / "list.json", result.stdout)
    human = sesstool("list", "fixtures/claude")
    _check(EXPECTED_DIR / "list.txt", human.stdout)


def test_validate_a_home_covers_subagent_files(sesstool: Sesstool) -> None:
    result = sesstool("validate", "--format", "json", "fixtures/claude/projects")
    doc = json.loads(result.stdout)
    rules = {f["rule"] for file in doc["files"] for f in file["findings"]}
    assert "claude-subagent-dangling" in rules
    assert result.exit_code == 1  # the corrupt fixtures fail at --fail-on error
