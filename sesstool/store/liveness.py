"""Cold-session checks for write commands (DESIGN.md §5, session-format spec §11).

The session.lock flock protocol, a best-effort /proc scan for other processes holding the log
open for writing, and the source identity re-check. Every doubt fails closed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sesstool.core.errors import InputError, LiveSessionError, WriteRefusedError
from sesstool.store.publish import FileIdentity, errno_name

LOCK_NAME = "session.lock"
LOCK_ATTEMPTS = 3  # as the dsh writers do: re-open when the locked inode left the path

# Module attribute so tests can point the scan at a fabricated tree.
_PROC = Path("/proc")

# O_NONBLOCK: a FIFO planted as session.lock must not hang us; the lock never needs writing.
_LOCK_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True, slots=True)
class LockState:
    """What ``session_lock`` found: the lock path, whether it existed, whether we hold it."""

    path: Path
    existed: bool  # session.lock was there before this call
    held: bool  # we hold the exclusive flock for the whole with-block

    @property
    def warning(self) -> str | None:
        """The message callers print when the session has no lock protocol to honour."""
        if self.held:
            return None
        return f"{self.path} does not exist: no lock protocol (v0-era session), liveness cannot be proven"


@dataclass(frozen=True, slots=True)
class WriterProcess:
    pid: int
    comm: str  # /proc/<pid>/comm with control characters escaped
    fds: tuple[int, ...]  # its descriptors open for writing on the file


@contextmanager
def session_lock(session_dir: Path, *, create: bool) -> Iterator[LockState]:
    """Hold a non-blocking exclusive flock on ``session_dir/session.lock`` for the block.

    ``create``: make the lock file (mode 0600) if missing — only when the directory holds a
    generation. Held by another process ⇒ LiveSessionError. The file is never deleted;
    release is closing the descriptor.
    """
    try:
        st = os.stat(session_dir)
    except OSError as exc:
        raise InputError(f"session directory {session_dir} cannot be examined: {errno_name(exc)}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"not a session directory: {session_dir}")
    lock_path = session_dir / LOCK_NAME
    fd, existed = _acquire(lock_path, create=create)
    if fd is None:
        yield LockState(lock_path, existed=False, held=False)
        return
    try:
        yield LockState(lock_path, existed=existed, held=True)
    finally:
        os.close(fd)


def _acquire(path: Path, *, create: bool) -> tuple[int | None, bool]:
    existed_before: bool | None = None
    for _ in range(LOCK_ATTEMPTS):
        fd, existed = _open_lock(path, create=create)
        if existed_before is None:
            existed_before = existed
        if fd is None:
            if create:
                continue  # created or seen by someone, then removed before we opened it
            return None, False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            raise LiveSessionError(
                f"{LOCK_NAME} is held by another process: a live writer owns this session ({path})"
            ) from exc
        except OSError as exc:
            os.close(fd)
            raise LiveSessionError(
                f"cannot flock {path}: {errno_name(exc)} ({exc.strerror}); liveness cannot be proven"
            ) from exc
        # The holder may have locked an inode that was unlinked or replaced meanwhile; a lock
        # on that orphan excludes nobody.
        locked = os.fstat(fd)
        try:
            current = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        if current is not None and (current.st_dev, current.st_ino) == (
            locked.st_dev,
            locked.st_ino,
        ):
            return fd, bool(existed_before)
        os.close(fd)
    raise LiveSessionError(
        f"{path} was replaced {LOCK_ATTEMPTS} times while locking it: another process is "
        "manipulating the session"
    )


def _open_lock(path: Path, *, create: bool) -> tuple[int | None, bool]:
    """Open (and with ``create`` make) the lock file; returns (fd or None, existed)."""
    fd: int | None = None
    existed = True
    try:
        if create:
            try:
                fd = os.open(path, _LOCK_OPEN_FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
                existed = False
                # The dsh writers open it for writing: the umask must not leave it 0400.
                os.fchmod(fd, 0o600)
            except FileExistsError:
                fd = None
        if fd is None:
            fd = os.open(path, _LOCK_OPEN_FLAGS)
    except FileNotFoundError:
        if fd is not None:
            os.close(fd)
        return None, False
    except OSError as exc:
        if fd is not None:
            os.close(fd)
        if exc.errno == errno.ELOOP:
            raise LiveSessionError(
                f"{path} is a symbolic link; it is not followed, so liveness cannot be proven"
            ) from exc
        if create and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise WriteRefusedError(f"cannot create {path}: {errno_name(exc)} ({exc.strerror})") from exc
        raise LiveSessionError(
            f"cannot open {path}: {errno_name(exc)} ({exc.strerror}); liveness cannot be proven"
        ) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LiveSessionError(f"{path} is not a regular file; liveness cannot be proven")
    return fd, existed


def open_writers(path: Path) -> list[WriterProcess]:
    """Other processes holding ``path`` open for writing (Linux /proc; best effort).

    Processes we may not inspect, or that exit during the scan, are skipped. Elsewhere the
    answer is always empty: absence of evidence, not proof of coldness.
    """
    if not sys.platform.startswith("linux"):
        return []
    try:
        st = os.stat(path)
    except OSError:
        return []
    key = (st.st_dev, st.st_ino)
    me = os.getpid()
    found: list[WriterProcess] = []
    try:
        with os.scandir(_PROC) as entries:
            pids = [int(e.name) for e in entries if e.name.isascii() and e.name.isdigit()]
    except OSError:
        return []
    for pid in sorted(pids):
        if pid == me:
            continue
        fds = _writer_fds(pid, key)
        if fds:
            found.append(WriterProcess(pid, _comm(pid), fds))
    return found


def _writer_fds(pid: int, key: tuple[int, int]) -> tuple[int, ...]:
    fds: list[int] = []
    try:
        with os.scandir(_PROC / str(pid) / "fd") as entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                try:
                    target = os.stat(entry.path)  # follows the magic link to the open file
                except OSError:
                    continue
                if (target.st_dev, target.st_ino) != key:
                    continue
                flags = _fd_flags(pid, entry.name)
                # Unknown flags count as writing: fail closed.
                if flags is None or (flags & os.O_ACCMODE) in (os.O_WRONLY, os.O_RDWR):
                    fds.append(int(entry.name))
    except OSError:
        pass  # permission denied, or the process went away
    return tuple(sorted(fds))


def _fd_flags(pid: int, fd: str) -> int | None:
    try:
        text = (_PROC / str(pid) / "fdinfo" / fd).read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name == "flags":
            try:
                return int(value.strip(), 8)
            except ValueError:
                return None
    return None


def _comm(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "comm").read_bytes()
    except OSError:
        return "?"
    # A process chooses its own name; it must not reach a terminal raw.
    text = raw.rstrip(b"\n").decode("utf-8", errors="backslashreplace")
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def assert_cold(path: Path, identity_before: FileIdentity) -> None:
    """Raise LiveSessionError if a writer has ``path`` open or it changed since it was read."""
    signals: list[str] = []
    writers = open_writers(path)
    if writers:
        who = ", ".join(f"pid {w.pid} ({w.comm})" for w in writers)
        signals.append(f"another process has it open for writing: {who}")
    try:
        now = FileIdentity.of_path(path)
    except OSError as exc:
        signals.append(f"it can no longer be examined ({errno_name(exc)})")
    else:
        changes = now.changes_since(identity_before)
        if changes:
            signals.append(f"it changed since it was read ({'; '.join(changes)})")
    if signals:
        raise LiveSessionError(f"{path} may be live — {'; and '.join(signals)}; refusing to write")
