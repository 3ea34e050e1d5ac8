"""Issue 11, items 10 and 11: no write command publishes a file that would make its directory
unreadable (two encodings) or mislabelled (a canonical name that contradicts the header), and a
fork into a live session directory is refused like any write into a live session."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Sesstool

V0 = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"
CLEAN = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"


def session_dir(tmp_path: Path, source: Path = V0, name: str = "s") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    shutil.copy(source, directory / "session.jsonl")
    return directory


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_migrate_to_zstd_beside_raw_generations_is_refused(sesstool: Sesstool, tmp_path: Path) -> None:
    directory = session_dir(tmp_path)
    result = sesstool("migrate", "--encoding", "zstd", str(directory))
    assert result.exit_code == 6, result.stderr
    assert "two encodings" in result.stderr
    assert names(directory) == ["session.jsonl", "session.lock"]
    assert sesstool("inspect", str(directory)).exit_code == 0  # still readable
    dry = sesstool("migrate", "--dry-run", "--encoding", "zstd", str(directory))
    assert dry.exit_code == 6  # the plan is refused the same way
    elsewhere = tmp_path / "out.v4.jsonl.zstd"
    ok = sesstool("migrate", "--encoding", "zstd", "-o", str(elsewhere), str(directory))
    assert ok.exit_code == 0, ok.stderr and elsewhere.exists()


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["migrate"], "session.v9.jsonl"),
        (["migrate", "--to", "2"], "session.v3.jsonl"),
        (["repair"], "session.v2.jsonl"),
        (["fork", "--at", "31"], "session.v4.jsonl"),
    ],
)
def test_a_canonical_name_that_contradicts_the_file_is_a_usage_error(
    sesstool: Sesstool, tmp_path: Path, command: list[str], name: str
) -> None:
    source = {"repair": CRASHED, "fork": CLEAN}.get(command[0], V0)
    directory = session_dir(tmp_path, source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = sesstool(*command, "-o", str(out_dir / name), str(directory / "session.jsonl"))
    assert result.exit_code == 2, result.stderr
    assert "canonical name" in result.stderr
    assert names(out_dir) == []


@pytest.mark.parametrize("name", ["session.v4.jsonl", "session.v4.jsonl.zstd"])
def test_a_canonical_name_that_says_the_truth_is_published(
    sesstool: Sesstool, tmp_path: Path, name: str
) -> None:
    """``session.v4.jsonl.zstd`` from a raw source is truthful: the ``-o`` suffix decides the
    encoding (issue 15 item 6), so the bytes are zstd, as the name says."""
    directory = session_dir(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = sesstool("migrate", "-o", str(out_dir / name), str(directory))
    assert result.exit_code == 0, result.stderr
    assert (out_dir / name).read_bytes().startswith(b"\x28\xb5\x2f\xfd") == name.endswith(".zstd")
    assert sesstool("inspect", str(out_dir)).exit_code == 0


def test_fork_into_a_live_session_directory_is_refused(sesstool: Sesstool, tmp_path: Path) -> None:
    source = session_dir(tmp_path, CLEAN, "parent")
    live = session_dir(tmp_path, CLEAN, "live")
    lock = os.open(live / "session.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live writer holds it
        for extra in ([], ["--dry-run"]):
            result = sesstool(
                "fork", "--at", "31", *extra, "-o", str(live / "child.jsonl"), str(source / "session.jsonl")
            )
            assert result.exit_code == 5, result.stderr
            assert "held by another process" in result.stderr
        assert names(live) == ["session.jsonl", "session.lock"]
    finally:
        os.close(lock)
    result = sesstool("fork", "--at", "31", "-o", str(live / "child.jsonl"), str(source / "session.jsonl"))
    assert result.exit_code == 0, result.stderr
    assert names(live) == ["child.jsonl", "session.jsonl", "session.lock"]  # the lock is never deleted
    fresh = session_dir(tmp_path, CLEAN, "no-lock")
    result = sesstool("fork", "--at", "31", "-o", str(fresh / "child.jsonl"), str(source / "session.jsonl"))
    assert result.exit_code == 0 and names(fresh) == ["child.jsonl", "session.jsonl"]  # none created


def test_fork_beside_a_live_source_is_refused(sesstool: Sesstool, tmp_path: Path) -> None:
    source = session_dir(tmp_path, CLEAN, "live")
    lock = os.open(source / "session.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = sesstool("fork", "--at", "31", str(source / "session.jsonl"))
        assert result.exit_code == 5, result.stderr
    finally:
        os.close(lock)
    assert names(source) == ["session.jsonl", "session.lock"]
