"""``inspect`` on directories of sessions and on several paths (issue 15 item 11): the one
listing (``engine/listing.py``) that ``list ROOT`` prints too — id, dialect, version, verdict,
size, last time — newest first, names escaped; text and JSON compared with goldens."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Sesstool, check_golden

EXPECTED = Path(__file__).parent / "expected"
HOSTILE = "evil\x1b[2J\x07name.jsonl"
CODEX_ZST = next((FIXTURES / "codex" / "home" / "sessions").rglob("*.jsonl.zst"))
CLAUDE = FIXTURES / "claude" / "projects" / "text" / "0a388a4a-bad0-5697-b8a2-5cb779938bde.jsonl"


def _check(name: str, actual: str) -> None:
    check_golden(EXPECTED / name, actual)


@pytest.fixture
def triage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of logs of every dialect, as found on a machine after a crash (not any
    dialect's root layout): run from its parent, so the output names relative paths."""
    root = tmp_path / "triage"
    (root / "mini").mkdir(parents=True)
    (root / "codex").mkdir()
    (root / "claude").mkdir()
    shutil.copy(FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl", root / "crash.jsonl")
    shutil.copy(FIXTURES / "dsh" / "torn-frame" / "session.jsonl.zstd", root / "torn.jsonl.zstd")
    shutil.copy(FIXTURES / "mini" / "basic" / "session.jsonl", root / "mini" / "BASIC.JSONL")
    shutil.copy(CODEX_ZST, root / "codex" / CODEX_ZST.name)
    shutil.copy(CLAUDE, root / "claude" / CLAUDE.name)
    shutil.copy(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl", root / HOSTILE)
    (root / "notes.txt").write_text("not a log: not listed\n")
    monkeypatch.chdir(tmp_path)
    return root


def _run(sesstool: Sesstool, *args: str) -> tuple[int, str, str]:
    # the sesstool fixture chdirs to the repository; run from the triage tree's parent instead
    from tests.conftest import run_sesstool

    result = run_sesstool(*args)
    return result.exit_code, result.stdout, result.stderr


def test_inspect_a_directory_of_logs_lists_every_session(sesstool: Sesstool, triage: Path) -> None:
    code, out, err = _run(sesstool, "inspect", "triage")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out  # the hostile name is escaped
    _check("inspect-triage.txt", out)
    code, doc_text, err = _run(sesstool, "inspect", "--json", "triage")
    assert code == 0, err
    doc = json.loads(doc_text)
    rows = doc["sessions"]
    assert (doc["command"], doc["layout"], doc["dialect"]) == ("inspect", "directory of logs", None)
    assert sorted(r["dialect"] for r in rows) == ["claude", "codex", "dsh", "dsh", "dsh", "mini"]
    assert HOSTILE in {Path(r["path"]).name for r in rows}  # JSON carries the real name
    times = [r["last_time"] for r in rows if r["last_time"] is not None]
    assert times == sorted(times, reverse=True) and len(times) >= 4  # newest first
    assert sorted(r["verdict"]["verdict"] for r in rows) == ["clean"] * 4 + ["torn"] * 2
    assert all(r["lines"] > 1 for r in rows)
    for row in rows:
        assert row["size"] == (Path(row["path"])).stat().st_size
    _check("inspect-triage.json", doc_text)


def test_list_and_inspect_are_one_view(sesstool: Sesstool, triage: Path) -> None:
    assert _run(sesstool, "list", "triage")[1] == _run(sesstool, "inspect", "triage")[1]
    listed = json.loads(_run(sesstool, "list", "--json", "triage")[1])
    inspected = json.loads(_run(sesstool, "inspect", "--json", "triage")[1])
    assert listed.pop("command") == "list" and inspected.pop("command") == "inspect"
    assert listed == inspected


def test_list_a_session_directory_gives_one_row_per_generation(sesstool: Sesstool, tmp_path: Path) -> None:
    session = tmp_path / "s"
    session.mkdir()
    shutil.copy(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl", session / "session.jsonl")
    assert sesstool("migrate", str(session)).exit_code == 0
    doc = json.loads(sesstool("list", "--json", str(session)).stdout)
    assert doc["layout"] == "session directory"
    assert sorted((Path(r["path"]).name, r["version"]) for r in doc["sessions"]) == [
        ("session.jsonl", "0"),
        ("session.v4.jsonl", "4"),
    ]


def test_inspect_several_paths(sesstool: Sesstool, triage: Path) -> None:
    """Every path is shown in order; a failing one is named on stderr and does not stop the
    others; the exit status is the highest; --json is one document of the single documents."""
    paths = ("triage/crash.jsonl", "triage", "triage/missing.jsonl", "triage/torn.jsonl.zstd")
    code, out, err = _run(sesstool, "inspect", *paths)
    assert code == 3
    assert err == "sesstool: triage/missing.jsonl: no such file or directory\n"
    alone = [_run(sesstool, "inspect", p)[1] for p in paths if "missing" not in p]
    assert out == "\n".join(alone)
    code, text, _ = _run(sesstool, "inspect", "--json", *paths)
    assert code == 3
    doc = json.loads(text)
    assert (doc["schema_version"], doc["command"]) == (2, "inspect")
    reports = doc["reports"]
    assert reports[2] == {
        "path": "triage/missing.jsonl",
        "error": "triage/missing.jsonl: no such file or directory",
        "exit_status": 3,
    }
    for i in (0, 1, 3):
        assert reports[i] == json.loads(_run(sesstool, "inspect", "--json", paths[i])[1])
    _check("inspect-several.json", text)


def test_inspect_several_with_timelines_streams_each(sesstool: Sesstool, triage: Path) -> None:
    paths = ("triage/crash.jsonl", "triage/mini/BASIC.JSONL")
    code, text, err = _run(sesstool, "inspect", "--json", "--timeline", *paths)
    assert code == 0, err
    reports = json.loads(text)["reports"]
    for path, report in zip(paths, reports, strict=True):
        assert report == json.loads(_run(sesstool, "inspect", "--json", "--timeline", path)[1])
        assert report["timeline"]


def test_a_directory_without_logs_is_still_exit_3(sesstool: Sesstool, tmp_path: Path) -> None:
    (tmp_path / "readme.md").write_text("nothing here")
    result = sesstool("inspect", str(tmp_path))
    assert result.exit_code == 3
    assert "no session generation" in result.stderr
    listed = sesstool("list", str(tmp_path))
    assert listed.exit_code == 3 and "no session logs in any known root layout" in listed.stderr
