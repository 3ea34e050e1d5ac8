"""A dry run writes nothing at all — not even ``session.lock`` in the evidence directory — yet
still honours a lock another process holds (issue 15 item 13, docs/format.md "Commands")."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Sesstool

DSH = FIXTURES / "dsh"
COMMANDS = {
    "repair": ("crash-not-started", ()),
    "migrate": ("crash-not-started", ()),
    "redact": ("crash-not-started", ()),
    "fork": ("v0-tiny", ()),
}


def session_dir(tmp_path: Path, fixture: str, zstd: bool) -> Path:
    directory = tmp_path / "sessions" / "s-1"
    directory.mkdir(parents=True)
    name = "session.jsonl.zstd" if zstd else "session.jsonl"
    shutil.copy(DSH / fixture / name, directory / name)
    return directory


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_dry_run_on_a_session_directory_creates_nothing(
    sesstool: Sesstool, tmp_path: Path, command: str, zstd: bool
) -> None:
    fixture, extra = COMMANDS[command]
    directory = session_dir(tmp_path, fixture, zstd)
    before = listing(tmp_path)
    mtime = directory.stat().st_mtime_ns
    result = sesstool(command, "--dry-run", *extra, str(directory))
    assert result.exit_code == 0, result.stderr
    assert listing(tmp_path) == before  # no session.lock, no output, no temporary
    assert directory.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("command", ["repair", "migrate", "redact"])
def test_the_real_run_takes_the_lock_the_dry_run_does_not(
    sesstool: Sesstool, tmp_path: Path, command: str
) -> None:
    directory = session_dir(tmp_path, "crash-not-started", zstd=False)
    assert sesstool(command, "--dry-run", str(directory)).exit_code == 0
    assert not (directory / "session.lock").exists()
    result = sesstool(command, str(directory))
    assert result.exit_code == 0, result.stderr
    assert (directory / "session.lock").exists()  # the protocol is kept when writing


@pytest.mark.parametrize("command", ["repair", "migrate", "redact"])
def test_dry_run_still_refuses_a_locked_session(sesstool: Sesstool, tmp_path: Path, command: str) -> None:
    directory = session_dir(tmp_path, "crash-not-started", zstd=False)
    lock = directory / "session.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        before = listing(tmp_path)
        result = sesstool(command, "--dry-run", str(directory))
        assert result.exit_code == 5, result.stdout
        assert listing(tmp_path) == before
    finally:
        os.close(fd)
