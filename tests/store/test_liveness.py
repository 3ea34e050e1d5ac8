"""Tests for the cold-session checks (DESIGN.md §5, spec §11; RELIABILITY test plan 9–11)."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import ExitStatus, InputError, LiveSessionError, WriteRefusedError
from sesstool.store import liveness
from sesstool.store.liveness import (
    LockState,
    WriterProcess,
    assert_cold,
    open_writers,
    session_lock,
)
from sesstool.store.publish import FileIdentity

LINUX = sys.platform.startswith("linux")
needs_proc = pytest.mark.skipif(not LINUX, reason="open_writers scans Linux /proc")

# Each child prints "ready" once its file is open (or locked), then works until stdin closes.
HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("ready", flush=True)
sys.stdin.read()
"""

APPEND_KEEP_OPEN = """
import os, select, sys
f = open(sys.argv[1], "ab", buffering=0)
print("ready", flush=True)
n = 0
while not select.select([sys.stdin], [], [], 0.05)[0]:
    n += 1
    f.write(b'{"seq":%d}\\n' % n)
    os.fsync(f.fileno())
"""

APPEND_REOPEN_EACH_TIME = """
import os, select, sys
print("ready", flush=True)
n = 0
while not select.select([sys.stdin], [], [], 0.05)[0]:
    n += 1
    with open(sys.argv[1], "ab") as f:
        f.write(b'{"seq":%d}\\n' % n)
        f.flush()
        os.fsync(f.fileno())
"""

HOLD_OPEN = """
import os, sys
fd = os.open(sys.argv[1], getattr(os, sys.argv[2]))
print("ready", flush=True)
sys.stdin.read()
"""

PROBE_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("busy")
else:
    print("free")
"""


@contextmanager
def _child(code: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            line = proc.stdout.readline()
            assert line == "ready\n", f"child did not start: {line!r}"
            yield proc
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _probe(lock: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE_LOCK, str(lock)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    d = tmp_path / "--proj--" / "sess"
    d.mkdir(parents=True)
    (d / "session.v4.jsonl").write_bytes(b'{"type":"header","version":4}\n')
    return d


# --- session.lock (item 10) --------------------------------------------------------------------


@pytest.mark.parametrize("create", [False, True])
def test_lock_held_by_another_process_is_live(session_dir: Path, create: bool) -> None:
    lock = session_dir / "session.lock"
    with _child(HOLD_LOCK, str(lock)):
        with (
            pytest.raises(LiveSessionError, match="held by another process") as info,
            session_lock(session_dir, create=create),
        ):
            pytest.fail("must not enter the block")
        assert info.value.exit_status is ExitStatus.LIVE
        assert int(info.value.exit_status) == 5
    assert lock.exists()


def test_free_lock_is_taken_held_for_the_block_and_never_deleted(session_dir: Path) -> None:
    lock = session_dir / "session.lock"
    lock.write_bytes(b"")
    before = FileIdentity.of_path(lock)
    assert _probe(lock) == "free"

    with session_lock(session_dir, create=False) as state:
        assert state == LockState(lock, existed=True, held=True)
        assert state.warning is None
        assert _probe(lock) == "busy"

    assert _probe(lock) == "free"
    assert FileIdentity.of_path(lock) == before


def test_unheld_lock_file_is_not_a_live_signal(session_dir: Path) -> None:
    """A leftover session.lock nobody holds (a crashed writer) does not block."""
    lock = session_dir / "session.lock"
    with _child(HOLD_LOCK, str(lock)):
        pass  # the holder exits; its lock dies with it
    with session_lock(session_dir, create=False) as state:
        assert state.held
    assert lock.exists()


def test_missing_lock_without_create_means_liveness_unprovable(session_dir: Path) -> None:
    with session_lock(session_dir, create=False) as state:
        assert state == LockState(session_dir / "session.lock", existed=False, held=False)
        assert state.warning is not None
        assert "no lock protocol" in state.warning
        assert "liveness cannot be proven" in state.warning
    assert not os.path.lexists(session_dir / "session.lock")


@pytest.mark.parametrize("umask", [0o000, 0o077, 0o277])
def test_missing_lock_with_create_is_made_0600_and_kept(session_dir: Path, umask: int) -> None:
    lock = session_dir / "session.lock"
    old = os.umask(umask)
    try:
        with session_lock(session_dir, create=True) as state:
            assert state == LockState(lock, existed=False, held=True)
            assert _probe(lock) == "busy"
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.lstat(lock).st_mode) == 0o600
    assert lock.read_bytes() == b""


def test_lock_replaced_while_locking_is_retried(session_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = session_dir / "session.lock"
    lock.write_bytes(b"")
    real = fcntl.flock
    calls: list[int] = []

    def flock(fd: int, op: int) -> None:
        real(fd, op)
        calls.append(fd)
        if len(calls) == 1:  # another process swaps the file between our open and flock
            lock.unlink()
            lock.write_bytes(b"")

    monkeypatch.setattr(fcntl, "flock", flock)
    with session_lock(session_dir, create=False) as state:
        assert state.held and state.existed
        assert _probe(lock) == "busy"  # we hold the file that is at the path now
    assert len(calls) == 2


def test_lock_that_keeps_being_replaced_is_refused(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = session_dir / "session.lock"
    lock.write_bytes(b"")
    real = fcntl.flock

    def flock(fd: int, op: int) -> None:
        real(fd, op)
        lock.unlink()
        lock.write_bytes(b"")

    monkeypatch.setattr(fcntl, "flock", flock)
    with (
        pytest.raises(LiveSessionError, match="replaced 3 times"),
        session_lock(session_dir, create=True),
    ):
        pytest.fail("must not enter the block")
    assert lock.exists()


def test_symlinked_lock_is_not_followed(tmp_path: Path, session_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere.lock"
    lock = session_dir / "session.lock"
    lock.symlink_to(elsewhere)
    with (
        pytest.raises(LiveSessionError, match="symbolic link"),
        session_lock(session_dir, create=True),
    ):
        pytest.fail("must not enter the block")
    assert os.readlink(lock) == str(elsewhere)
    assert not os.path.lexists(elsewhere)


def test_fifo_as_lock_is_refused_without_hanging(session_dir: Path) -> None:
    os.mkfifo(session_dir / "session.lock")
    with (
        pytest.raises(LiveSessionError, match="not a regular file"),
        session_lock(session_dir, create=False),
    ):
        pytest.fail("must not enter the block")


def test_missing_session_directory_is_an_input_error(tmp_path: Path) -> None:
    with (
        pytest.raises(InputError),
        session_lock(tmp_path / "absent", create=True),
    ):
        pytest.fail("must not enter the block")
    assert not os.path.lexists(tmp_path / "absent")


# --- writers seen through /proc (item 9) --------------------------------------------------------


@needs_proc
def test_appending_child_is_found_and_refused_by_pid(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    before = FileIdentity.of_path(log)
    with _child(APPEND_KEEP_OPEN, str(log)) as proc:
        writers = open_writers(log)
        assert [w.pid for w in writers] == [proc.pid]
        assert writers[0].comm and writers[0].fds
        with pytest.raises(LiveSessionError, match=f"pid {proc.pid} ") as info:
            assert_cold(log, before)
        assert "open for writing" in str(info.value)
        assert info.value.exit_status is ExitStatus.LIVE


@needs_proc
def test_read_write_open_is_a_writer(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    with _child(HOLD_OPEN, str(log), "O_RDWR") as proc:
        assert [w.pid for w in open_writers(log)] == [proc.pid]


@needs_proc
def test_reader_only_child_is_not_reported(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    before = FileIdentity.of_path(log)
    with _child(HOLD_OPEN, str(log), "O_RDONLY") as proc:
        # Sanity: the child really holds the file open, so the scan had something to skip.
        key = (before.dev, before.ino)
        fd_dir = Path(f"/proc/{proc.pid}/fd")
        held = [p for p in fd_dir.iterdir() if (p.stat().st_dev, p.stat().st_ino) == key]
        assert held
        assert open_writers(log) == []
        assert_cold(log, before)


@needs_proc
def test_our_own_descriptors_are_not_reported(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        assert all(w.pid != os.getpid() for w in open_writers(log))
    finally:
        os.close(fd)


def test_child_appending_with_open_close_cycles_changes_identity(session_dir: Path) -> None:
    """Between appends nothing holds the file open; the identity re-check still catches it."""
    log = session_dir / "session.v4.jsonl"
    before = FileIdentity.of_path(log)
    with _child(APPEND_REOPEN_EACH_TIME, str(log)):
        deadline = time.monotonic() + 10
        while FileIdentity.of_path(log).size == before.size:
            assert time.monotonic() < deadline, "child never appended"
            time.sleep(0.01)
        with pytest.raises(LiveSessionError, match="changed since it was read"):
            assert_cold(log, before)


# --- identity (item 11) ------------------------------------------------------------------------


def test_unchanged_file_is_cold(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    assert_cold(log, FileIdentity.of_path(log))


def test_appended_file_is_refused_naming_the_change(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    before = FileIdentity.of_path(log)
    with log.open("ab") as f:
        f.write(b'{"seq":1}\n')
    with pytest.raises(LiveSessionError, match=r"changed since it was read \(size ") as info:
        assert_cold(log, before)
    assert "open for writing" not in str(info.value)


def test_replaced_file_is_refused(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    before = FileIdentity.of_path(log)
    keep = session_dir / "old-inode"
    os.link(log, keep)  # hold the old inode so the new file cannot reuse its number
    data = log.read_bytes()
    log.unlink()
    log.write_bytes(data)
    with pytest.raises(LiveSessionError, match="inode"):
        assert_cold(log, before)


def test_vanished_file_is_refused(session_dir: Path) -> None:
    log = session_dir / "session.v4.jsonl"
    before = FileIdentity.of_path(log)
    log.unlink()
    with pytest.raises(LiveSessionError, match="ENOENT"):
        assert_cold(log, before)


# --- the /proc scan itself, on a fabricated tree -------------------------------------------------


def _fake_process(proc: Path, pid: int, comm: bytes, fds: dict[int, tuple[Path, str | None]]) -> None:
    base = proc / str(pid)
    (base / "fd").mkdir(parents=True)
    (base / "fdinfo").mkdir()
    (base / "comm").write_bytes(comm + b"\n")
    for fd, (target, flags) in fds.items():
        (base / "fd" / str(fd)).symlink_to(target)
        if flags is not None:
            (base / "fdinfo" / str(fd)).write_text(f"pos:\t0\nflags:\t{flags}\nmnt_id:\t1\n")


def test_scan_keeps_only_write_opens_and_skips_the_unreadable(
    tmp_path: Path, session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = session_dir / "session.v4.jsonl"
    other = tmp_path / "other"
    other.write_bytes(b"")
    proc = tmp_path / "proc"
    _fake_process(proc, 101, b"appender", {3: (log, "0102001"), 4: (other, "01")})
    _fake_process(proc, 102, b"reader", {5: (log, "0100000")})
    _fake_process(proc, 103, b"rdwr", {6: (log, "02"), 7: (log, "02")})
    _fake_process(proc, 104, b"no fdinfo", {8: (log, None)})  # unknown ⇒ counted, fail closed
    _fake_process(proc, 105, b"evil\x1b]0;pwned\x07", {9: (log, "01")})
    _fake_process(proc, os.getpid(), b"me", {10: (log, "01")})
    (proc / "106").mkdir()  # exited: no fd directory any more
    (proc / "107").write_bytes(b"")  # not even a directory
    (proc / "self").symlink_to(proc / "101")
    (proc / "sys").mkdir()
    monkeypatch.setattr(liveness, "_PROC", proc)
    monkeypatch.setattr(sys, "platform", "linux")

    found = open_writers(log)

    assert found == [
        WriterProcess(101, "appender", (3,)),
        WriterProcess(103, "rdwr", (6, 7)),
        WriterProcess(104, "no fdinfo", (8,)),
        WriterProcess(105, "evil\\x1b]0;pwned\\x07", (9,)),
    ]
    assert all("\x1b" not in w.comm and "\x07" not in w.comm for w in found)


def test_scan_is_empty_off_linux(session_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert open_writers(session_dir / "session.v4.jsonl") == []


def test_scan_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert open_writers(tmp_path / "absent") == []


def test_lock_that_cannot_be_created_is_a_write_refusal(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    with (
        pytest.raises(WriteRefusedError, match="EROFS"),
        session_lock(session_dir, create=True),
    ):
        pytest.fail("must not enter the block")
    monkeypatch.undo()
    assert not os.path.lexists(session_dir / "session.lock")
