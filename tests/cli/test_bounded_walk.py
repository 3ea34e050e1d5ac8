"""``inspect``/``list`` on a directory that is not a session root search it within a bound
(issue 15 item 7: ``sesstool inspect /usr`` must not walk a whole system): at most
``WALK_MAX_DEPTH`` directory levels and ``WALK_MAX_ENTRIES`` entries, breadth first, saying what
was not searched; Claude Code and Codex homes — named, or one level down — stay listable
(docs/format.md "Listing a root"). ``validate DIR`` still checks a tree whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sesstool.store import paths
from tests.conftest import FIXTURES, Sesstool

CLAUDE_SESSION = FIXTURES / "claude" / "projects" / "subagent"
CODEX_HOME = FIXTURES / "codex" / "home" / "sessions"
TINY = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"


def _homes(home: Path) -> list[Path]:
    """A user's home holding a Claude Code home (a session with a subagent file) and a Codex
    home, each one level down, as ``~/.claude`` and ``~/.codex`` are."""
    shutil.copytree(CLAUDE_SESSION, home / ".claude" / "projects" / "subagent")
    shutil.copytree(CODEX_HOME, home / ".codex" / "sessions")
    return sorted(p for p in home.rglob("*.jsonl*") if p.is_file())


def _deep(base: Path, levels: int, tag: str = "d") -> Path:
    """A log in a directory ``levels`` levels below ``base``."""
    folder = base.joinpath(*(f"{tag}{i}" for i in range(levels)))
    folder.mkdir(parents=True)
    shutil.copy(TINY, folder / "deep.jsonl")
    return folder / "deep.jsonl"


def test_homes_one_level_down_are_listed_and_deeper_logs_are_said_skipped(
    sesstool: Sesstool, tmp_path: Path
) -> None:
    logs = _homes(tmp_path)
    assert any("/subagents/agent-" in str(p) for p in logs) and any("/rollout-" in str(p) for p in logs)
    at_limit = _deep(tmp_path, paths.WALK_MAX_DEPTH, "w")  # in a directory 8 levels down
    too_deep = _deep(tmp_path, paths.WALK_MAX_DEPTH + 1, "b")  # 9 levels down: not entered
    result = sesstool("list", "--json", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    listed = sorted(r["path"] for r in doc["sessions"])
    assert listed == sorted(map(str, [*logs, at_limit]))
    assert str(too_deep) not in listed
    walk = doc["walk"]
    assert (walk["max_depth"], walk["max_entries"]) == (8, 100_000)
    assert (walk["deeper_directories"], walk["unreadable_directories"], walk["stopped"]) == (1, 0, False)
    assert walk["complete"] is False
    text = sesstool("inspect", str(tmp_path)).stdout.splitlines()
    assert text[-1] == (
        "not searched (at most 8 levels, 100000 entries): 1 directory deeper than 8 levels not entered"
    )
    checked = json.loads(sesstool("validate", "--json", str(tmp_path)).stdout)["files"]
    assert {str(too_deep), str(at_limit)} <= {f["path"] for f in checked}  # validate checks a tree whole


def test_a_named_home_is_its_layout_whatever_the_bound(sesstool: Sesstool) -> None:
    for home in (FIXTURES / "claude", FIXTURES / "codex" / "home"):
        doc = json.loads(sesstool("list", "--json", str(home)).stdout)
        assert doc["dialect"] in ("claude", "codex") and doc["sessions"]
        assert doc["walk"] is None  # found by the root layout's patterns, not by a walk


def test_a_complete_walk_says_nothing(sesstool: Sesstool, tmp_path: Path) -> None:
    _deep(tmp_path, 2)
    result = sesstool("list", str(tmp_path))
    assert result.exit_code == 0
    assert "not searched" not in result.stdout
    assert json.loads(sesstool("list", "--json", str(tmp_path)).stdout)["walk"]["complete"] is True


def test_the_entry_limit_stops_the_walk_and_says_so(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Breadth first: the shallow log is found; past the limit nothing more is examined."""
    shutil.copy(TINY, tmp_path / "top.jsonl")
    for i in range(30):
        (tmp_path / f"noise{i:02}").mkdir()
    _deep(tmp_path / "noise29", 3)
    monkeypatch.setattr(paths, "WALK_MAX_ENTRIES", 20)
    doc = json.loads(sesstool("list", "--json", str(tmp_path)).stdout)
    assert [Path(r["path"]).name for r in doc["sessions"]] == ["top.jsonl"]
    assert (doc["walk"]["stopped"], doc["walk"]["entries"]) == (True, 20)
    lines = sesstool("inspect", str(tmp_path)).stdout.splitlines()
    assert lines[-1] == "not searched (at most 8 levels, 20 entries): stopped at the limit of 20 entries"


def test_nothing_found_within_the_bound_is_exit_3_and_says_what_was_skipped(
    sesstool: Sesstool, tmp_path: Path
) -> None:
    _deep(tmp_path, paths.WALK_MAX_DEPTH + 1)
    for command in ("inspect", "list"):
        result = sesstool(command, str(tmp_path))
        assert result.exit_code == 3, result.stderr
        assert result.stderr == (
            f"sesstool: {tmp_path}: no session logs in any known root layout, nor any *.jsonl, "
            "*.jsonl.zst, *.jsonl.zstd file within 8 levels and 100000 entries "
            "(1 directory deeper than 8 levels not entered)\n"
        )


def test_links_to_directories_are_not_followed(sesstool: Sesstool, tmp_path: Path) -> None:
    shutil.copy(TINY, tmp_path / "a.jsonl")
    (tmp_path / "loop").symlink_to(tmp_path)  # a cycle a naive walk would follow
    doc = json.loads(sesstool("list", "--json", str(tmp_path)).stdout)
    assert [r["path"] for r in doc["sessions"]] == [str(tmp_path / "a.jsonl")]
    assert doc["walk"]["complete"] is True
