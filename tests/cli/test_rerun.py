"""Issue 15 item 12: re-running a write command whose target already holds exactly what it would
write says "already published, identical" and exits 0 (nothing is linked, the file keeps its
inode); a target holding anything else is refused (exit 6) with a pointer to -o. `migrate
--repair` after `migrate` writes its own name instead of colliding with the plain generation."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Sesstool

CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"
V0 = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"
INTERRUPTED_ZSTD = FIXTURES / "dsh" / "torn-tail" / "session.jsonl.zstd"


def _source(tmp_path: Path, fixture: Path) -> Path:
    directory = tmp_path / "s"
    directory.mkdir()
    target = directory / fixture.name
    shutil.copy(fixture, target)
    return target


def _entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize(
    ("command", "fixture"),
    [(["repair"], CRASHED), (["migrate"], V0), (["redact"], V0), (["repair"], INTERRUPTED_ZSTD)],
    ids=["repair", "migrate", "redact", "repair-zstd"],
)
def test_a_rerun_onto_an_identical_target_succeeds(
    sesstool: Sesstool, tmp_path: Path, command: list[str], fixture: Path
) -> None:
    source = _source(tmp_path, fixture)
    first = sesstool(*command, "--json", str(source))
    assert first.exit_code == 0, first.stderr
    out = Path(json.loads(first.stdout)["output"]["path"])
    before = (out.stat().st_ino, out.read_bytes())
    listing = _entries(source.parent)
    again = sesstool(*command, str(source))
    assert again.exit_code == 0, again.stderr
    assert "already published, identical" in again.stdout
    assert (out.stat().st_ino, out.read_bytes()) == before  # not replaced, not touched
    assert _entries(source.parent) == listing  # no temporary file left, nothing new
    doc = json.loads(sesstool(*command, "--json", str(source)).stdout)
    assert doc["output"]["identical"] is True and doc["output"]["path"] == str(out)
    assert json.loads(first.stdout)["output"]["identical"] is False


def test_a_target_with_other_bytes_is_refused_with_a_pointer_to_o(sesstool: Sesstool, tmp_path: Path) -> None:
    source = _source(tmp_path, CRASHED)
    out = source.parent / "session.repaired.jsonl"
    out.write_bytes(b"something else\n")
    result = sesstool("repair", str(source))
    assert result.exit_code == 6
    assert "target exists" in result.stderr and "-o PATH" in result.stderr
    assert out.read_bytes() == b"something else\n"
    assert _entries(source.parent) == ["session.jsonl", "session.lock", "session.repaired.jsonl"]


def test_a_symlink_target_is_refused_before_any_work(sesstool: Sesstool, tmp_path: Path) -> None:
    source = _source(tmp_path, CRASHED)
    os.symlink(tmp_path / "elsewhere", source.parent / "session.repaired.jsonl")
    result = sesstool("repair", str(source))
    assert result.exit_code == 6 and "symbolic link" in result.stderr
    assert not (tmp_path / "elsewhere").exists()


def test_migrate_repair_after_migrate_takes_its_own_name(sesstool: Sesstool, tmp_path: Path) -> None:
    source = _source(tmp_path, CRASHED)
    plain = sesstool("migrate", "--json", str(source))
    assert plain.exit_code == 0, plain.stderr
    assert Path(json.loads(plain.stdout)["output"]["path"]).name == "session.v4.jsonl"
    repaired = sesstool("migrate", "--repair", "--json", str(source))
    assert repaired.exit_code == 0, repaired.stderr
    doc = json.loads(repaired.stdout)
    assert Path(doc["output"]["path"]).name == "session.v4.repaired.jsonl"
    assert doc["closers_added"] > 0 and doc["output"]["verdict"]["verdict"] == "clean"
    again = sesstool("migrate", "--repair", str(source))
    assert again.exit_code == 0 and "already published, identical" in again.stdout
    assert _entries(source.parent) == [
        "session.jsonl",
        "session.lock",
        "session.v4.jsonl",
        "session.v4.repaired.jsonl",
    ]


def test_fork_twice_is_two_children_not_a_collision(sesstool: Sesstool, tmp_path: Path) -> None:
    """A fork stamps a fresh child id and time: a re-run is a new child beside the first."""
    source = _source(tmp_path, FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl")
    first = sesstool("fork", "--at", "31", str(source))
    second = sesstool("fork", "--at", "31", str(source))
    assert first.exit_code == second.exit_code == 0, second.stderr
    assert len([n for n in _entries(source.parent) if n.startswith("session-")]) == 2
