"""The one publisher: the only code in sesstool that opens a file for writing (DESIGN.md §4).

Exclusive temp in the target's directory → fchmod → write → fsync → verify → source re-check →
link(2) (never rename) → directory fsync → unlink temp → directory fsync (RELIABILITY.md 1–2).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sesstool.core.errors import InputError, WriteRefusedError
from sesstool.store.held_signals import signals_held
from sesstool.store.modes import copy_mode

# Producers hand us many small pieces; batching them keeps the syscall count low.
_BUFFER_BYTES = 1 << 20

# link(2) errors that mean "this file system cannot give us an exclusive, non-overwriting
# publish". Falling back to rename would silently replace a generation, so we refuse instead.
_NO_HARD_LINKS = frozenset({errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK})

# a directory that takes no new file: permissions, or a read-only file system
_UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# O_NONBLOCK: a FIFO that took the final name meanwhile must not hang the comparison of its bytes
# (a regular file ignores the flag)
_ANCHOR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """What a file is and how it looked: device, inode, size, mtime and ctime (ns).

    ``changes_since`` compares dev, ino, size and mtime only: ctime also moves on metadata-only
    events (chmod, a new hard link) that do not touch the bytes we read.
    """

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def from_stat(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    @classmethod
    def of_path(cls, path: Path) -> FileIdentity:
        return cls.from_stat(os.stat(path, follow_symlinks=True))

    @classmethod
    def of_fd(cls, fd: int) -> FileIdentity:
        return cls.from_stat(os.fstat(fd))

    def changes_since(self, before: FileIdentity) -> tuple[str, ...]:
        """Human-readable differences from ``before``; empty when the file is unchanged."""
        changes: list[str] = []
        for label, old, new in (
            ("device", before.dev, self.dev),
            ("inode", before.ino, self.ino),
            ("size", before.size, self.size),
            ("mtime_ns", before.mtime_ns, self.mtime_ns),
        ):
            if old != new:
                changes.append(f"{label} {old} → {new}")
        return tuple(changes)


@dataclass(frozen=True, slots=True)
class Published:
    path: Path
    size: int
    sha256: str
    # the target already held exactly these bytes (a re-run): nothing was linked, nothing changed
    identical: bool = False


class Sink(Protocol):
    """What a producer writes the new file's bytes into."""

    def write(self, data: bytes) -> None: ...


_COPY_CHUNK = 1 << 20  # bounded like every other read: one chunk in memory at a time
# copy_file_range refusals that mean "not here" (another file system, an old kernel, a file
# system without it): the plain copy takes over
_NO_KERNEL_COPY = frozenset({errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF})


def copy_into(sink: Sink, source: Path, start: int, end: int) -> None:
    """Write the bytes [start, end) of the file ``source`` into ``sink``: copied by the kernel
    (``os.copy_file_range``) into a publication's temporary file where the platform has it,
    else read and written. The bytes are hashed either way (``Published.sha256``)."""
    if isinstance(sink, _FdSink):
        sink.copy_range(source, start, end)
        return
    with open(source, "rb") as f:  # read-only
        for offset in range(start, end, _COPY_CHUNK):
            sink.write(_pread_exactly(f.fileno(), min(_COPY_CHUNK, end - offset), offset, source))


def _pread_exactly(fd: int, n: int, offset: int, source: Path) -> bytes:
    data = os.pread(fd, n, offset)
    if len(data) != n:
        raise InputError(
            f"{source} ended at byte {offset + len(data)}, before byte {offset + n}: "
            "it changed while being read"
        )
    return data


def errno_name(exc: OSError) -> str:
    if exc.errno is None:
        return type(exc).__name__
    return errno.errorcode.get(exc.errno, f"errno {exc.errno}")


def _refusal(what: str, path: Path, exc: OSError) -> WriteRefusedError:
    reason = exc.strerror or str(exc)
    return WriteRefusedError(f"{what} failed for {path}: {errno_name(exc)} ({reason})")


@contextmanager
def _refusing(what: str, path: Path) -> Iterator[None]:
    """Turn an OSError from one file-system step into a WriteRefusedError (exit 6)."""
    try:
        yield
    except OSError as exc:
        raise _refusal(what, path, exc) from exc


class _FdSink:
    """Buffers, hashes and counts what the producer writes; handles short writes. The buffer is
    one block filled in place: one regrown by appends and replaced at each flush left holes in
    the C heap, so a long write's peak RSS crept up with its length (docs/reliability.md)."""

    __slots__ = ("_buffer", "_closed", "_fd", "_fill", "_hash", "_path", "failure", "kernel_copy", "size")

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self._path = path
        self._buffer: memoryview | None = None  # made at the first buffered write
        self._fill = 0  # the bytes of it in use
        self._hash = hashlib.sha256()
        self._closed = False
        self.size = 0
        # Remembered so that a producer that swallows our error cannot get a truncated file
        # published anyway.
        self.failure: WriteRefusedError | None = None
        # False where the platform has no copy_file_range or once it refused it (plain copies)
        self.kernel_copy = hasattr(os, "copy_file_range")

    def write(self, data: bytes) -> None:
        if self._closed:
            raise RuntimeError("Sink.write called after the producer returned")
        if self.failure is not None:
            raise self.failure
        if not data:
            return
        self._hash.update(data)
        n = len(data)
        self.size += n
        if self._fill + n > _BUFFER_BYTES:
            self._flush()
        if n >= _BUFFER_BYTES:
            self._write_all(memoryview(data))
            return
        if self._buffer is None:
            self._buffer = memoryview(bytearray(_BUFFER_BYTES))
        self._buffer[self._fill : self._fill + n] = data
        self._fill += n

    def copy_range(self, source: Path, start: int, end: int) -> None:
        """``copy_into`` for the temporary file: each chunk is read once for the hash and copied
        file to file by the kernel; where that is refused, the chunk read is written instead."""
        if self._closed:
            raise RuntimeError("Sink.copy_range called after the producer returned")
        if self.failure is not None:
            raise self.failure
        self._flush()
        with open(source, "rb") as f:  # read-only
            src = f.fileno()
            for offset in range(start, end, _COPY_CHUNK):
                data = _pread_exactly(src, min(_COPY_CHUNK, end - offset), offset, source)
                self._hash.update(data)
                self.size += len(data)
                done = self._kernel_copy(src, offset, len(data))
                self._write_all(memoryview(data)[done:])  # what the kernel did not copy (usually none)

    def _kernel_copy(self, src: int, offset: int, n: int) -> int:
        """Bytes copied by ``os.copy_file_range`` from ``src`` at ``offset`` (up to ``n``)."""
        done = 0
        while done < n and self.kernel_copy:
            try:
                copied = os.copy_file_range(src, self._fd, n - done, offset + done)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    self.failure = _refusal("copy into the temporary file", self._path, exc)
                    raise self.failure from exc
                self.kernel_copy = False  # not here: plain copies from now on
                break
            if copied <= 0:
                break  # the source is shorter than it was: the read chunk is written instead
            done += copied
        return done

    def finish(self) -> None:
        """Flush what is buffered and refuse further writes."""
        if self.failure is not None:
            raise self.failure
        self._flush()
        self._closed = True

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def _flush(self) -> None:
        if self._buffer is None or not self._fill:
            return
        pending, self._fill = self._buffer[: self._fill], 0
        self._write_all(pending)

    def _write_all(self, view: memoryview) -> None:
        try:
            done = 0
            while done < len(view):
                try:
                    n = os.write(self._fd, view[done:])
                except OSError as exc:
                    raise _refusal("write to the temporary file", self._path, exc) from exc
                if n <= 0:
                    raise WriteRefusedError(
                        f"write to the temporary file {self._path} made no progress (os.write returned {n})"
                    )
                done += n
        except WriteRefusedError as exc:
            self.failure = exc
            raise


def _check_name(target: Path) -> None:
    try:
        os.fsencode(target)
    except UnicodeEncodeError as exc:
        raise WriteRefusedError(f"target path cannot be encoded for the file system: {exc}") from exc
    if "\0" in str(target):
        raise WriteRefusedError(f"target path contains a NUL byte: {str(target)!r}")
    if target.name in ("", ".", ".."):
        raise WriteRefusedError(f"target is not a file name: {target}")


def _refuse_early(target: Path) -> None:
    """Cheap checks before any temp file exists; `link` re-checks existence atomically."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        pass
    except NotADirectoryError as exc:
        raise WriteRefusedError(f"target directory {target.parent} is not a directory: {target}") from exc
    except OSError as exc:
        raise _refusal("checking the target", target, exc) from exc
    else:
        if not stat.S_ISREG(st.st_mode):  # a regular file may hold what this run writes: compared at link
            kind = "a symbolic link (not followed)" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            raise WriteRefusedError(
                f"target exists: {target} is {kind}; sesstool never overwrites: "
                "name another output with -o PATH"
            )
    directory = target.parent
    try:
        dst = os.stat(directory)
    except FileNotFoundError as exc:
        raise WriteRefusedError(f"target directory does not exist: {directory}") from exc
    except OSError as exc:
        raise _refusal("checking the target directory", directory, exc) from exc
    if not stat.S_ISDIR(dst.st_mode):
        raise WriteRefusedError(f"target directory is not a directory: {directory}")
    effective = os.access in os.supports_effective_ids
    if not os.access(directory, os.W_OK | os.X_OK, effective_ids=effective):
        raise WriteRefusedError(
            f"target directory is not writable: {directory}", unwritable_directory=str(directory)
        )


def publish(
    target: Path,
    produce: Callable[[Sink], None],
    *,
    verify: Callable[[Path], None],
    source: Path | None = None,
    source_identity: FileIdentity | None = None,
    mode: int | None = None,
) -> Published:
    """Create ``target`` from what ``produce`` writes, atomically and without overwriting.

    ``verify`` gets the fsynced temporary path and raises to reject it. When ``source`` is
    given it must still match ``source_identity`` (taken now if omitted; pass the identity from
    before the read). On any failure nothing is left behind: no temporary file and no final
    name. Write failures raise WriteRefusedError; the producer's own exceptions propagate.
    ``mode`` defaults to ``copy_mode(source)``, or 0600 without a source.
    """
    if mode is None:
        mode = copy_mode(source) if source is not None else 0o600
    if mode & ~0o777:
        raise ValueError(f"mode must be permission bits only, got {mode:#o}")
    if source_identity is not None and source is None:
        raise ValueError("source_identity given without source")
    _check_name(target)
    checked: tuple[Path, FileIdentity] | None = None  # the source and how it looked before the read
    if source is not None:
        if source_identity is None:
            with _refusing("reading the source's identity", source):
                source_identity = FileIdentity.of_path(source)
        checked = (source, source_identity)
    _refuse_early(target)
    directory = target.parent
    with _refusing("opening the target directory", directory):
        dir_fd = os.open(directory, _DIR_FLAGS)
    try:
        return _Publication(target, dir_fd, mode).run(produce, verify, checked)
    finally:
        os.close(dir_fd)


class _Publication:
    """One attempt; remembers exactly what it created so cleanup removes only that."""

    def __init__(self, target: Path, dir_fd: int, mode: int) -> None:
        self.target = target
        self.dir_fd = dir_fd
        self.mode = mode
        self.name = target.name
        self.tmp_name = f".{target.name}.{secrets.token_hex(6)}.tmp"
        self.tmp_path = target.parent / self.tmp_name
        self.fd = -1  # the temp, open for writing until it is fsynced
        # A read-only descriptor on the temp's inode, held to the end: while it is open the
        # inode number cannot be reused, so (dev, ino) proves a name still points at our file.
        self.anchor = -1
        self.ours: tuple[int, int] | None = None  # (dev, ino) of the temp file we created
        self.tmp_present = False
        self.linked = False

    def run(
        self,
        produce: Callable[[Sink], None],
        verify: Callable[[Path], None],
        checked: tuple[Path, FileIdentity] | None,
    ) -> Published:
        try:
            sink, written = self._stage(produce)
            self._verify(verify, written)
            if checked is not None:
                _check_source(*checked)
            identical = self._link()
            if not identical:
                with _refusing("fsync of the directory after link", self.target.parent):
                    os.fsync(self.dir_fd)
            with signals_held(), _refusing("removing the temporary file", self.tmp_path):
                os.unlink(self.tmp_name, dir_fd=self.dir_fd)
                self.tmp_present = False
            with _refusing("fsync of the directory after removing the temp", self.target.parent):
                os.fsync(self.dir_fd)
        except BaseException as exc:
            with signals_held():
                self._cleanup(exc)
            raise
        finally:
            if self.anchor >= 0:
                with suppress(OSError):
                    os.close(self.anchor)
        return Published(self.target, sink.size, sink.sha256, identical)

    def _stage(self, produce: Callable[[Sink], None]) -> tuple[_FdSink, FileIdentity]:
        with signals_held():
            self._create_temp()
        # The umask must not decide the published mode; set it before the fsync so the
        # mode is durable with the data.
        with _refusing("fchmod of the temporary file", self.tmp_path):
            os.fchmod(self.fd, self.mode)
        sink = _FdSink(self.fd, self.tmp_path)
        produce(sink)
        sink.finish()
        with _refusing("fsync of the temporary file", self.tmp_path):
            os.fsync(self.fd)
        with _refusing("stat of the temporary file", self.tmp_path):
            written = FileIdentity.of_fd(self.fd)
        with _refusing("reopening the temporary file", self.tmp_path):
            self.anchor = os.open(self.tmp_name, _ANCHOR_FLAGS, dir_fd=self.dir_fd)
            anchored = os.fstat(self.anchor)
        if (anchored.st_dev, anchored.st_ino) != self.ours:
            raise WriteRefusedError(f"temporary file {self.tmp_path} was replaced while written")
        # Close the writer (a late write error can surface here); the anchor keeps the inode.
        fd, self.fd = self.fd, -1
        with _refusing("closing the temporary file", self.tmp_path):
            os.close(fd)
        return sink, written

    def _create_temp(self) -> None:
        try:
            self.fd = os.open(self.tmp_name, _TEMP_FLAGS, 0o600, dir_fd=self.dir_fd)
        except FileExistsError as exc:
            raise WriteRefusedError(
                f"temporary name {self.tmp_path} already exists and was not created by this "
                "run; refusing to use it (it is left untouched)"
            ) from exc
        except OSError as exc:
            refusal = _refusal("creating the temporary file", self.tmp_path, exc)
            if exc.errno in _UNWRITABLE:
                refusal.unwritable_directory = str(self.tmp_path.parent)
            raise refusal from exc
        self.tmp_present = True
        with _refusing("stat of the temporary file", self.tmp_path):
            st = os.fstat(self.fd)
        self.ours = (st.st_dev, st.st_ino)

    def _verify(self, verify: Callable[[Path], None], written: FileIdentity) -> None:
        try:
            verify(self.tmp_path)
        except WriteRefusedError:
            raise
        except Exception as exc:
            raise WriteRefusedError(
                f"verification of the new file failed, nothing was published: {exc}"
            ) from exc
        # What gets linked must be exactly what was written and verified.
        with _refusing("stat of the temporary file", self.tmp_path):
            st = os.stat(self.tmp_name, dir_fd=self.dir_fd, follow_symlinks=False)
        changes = FileIdentity.from_stat(st).changes_since(written)
        if changes:
            raise WriteRefusedError(
                f"temporary file {self.tmp_path} was modified or replaced before publication "
                f"({'; '.join(changes)})"
            )

    def _link(self) -> bool:
        """Link the verified temp to the final name; True when the name already held exactly
        these bytes (nothing linked: the re-run of a write command, issue 15 item 12)."""
        with signals_held():
            if not self._link_name():
                return True
        with _refusing("stat of the final name", self.target):
            st = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        if (st.st_dev, st.st_ino) != self.ours:
            raise WriteRefusedError(
                f"{self.target} does not hold the verified file: the temporary name was "
                "replaced just before link"
            )
        return False

    def _link_name(self) -> bool:
        try:
            os.link(
                self.tmp_name,
                self.name,
                src_dir_fd=self.dir_fd,
                dst_dir_fd=self.dir_fd,
                follow_symlinks=False,
            )
        except FileExistsError as exc:
            if self._target_holds_the_same_bytes():
                return False
            raise WriteRefusedError(
                f"target exists: {self.target} does not hold what this run wrote (it held other "
                "bytes, or appeared meanwhile); sesstool never overwrites: name another output "
                "with -o PATH"
            ) from exc
        except OSError as exc:
            if exc.errno in _NO_HARD_LINKS:
                raise WriteRefusedError(
                    f"cannot hard-link the new file to {self.target}: {errno_name(exc)} "
                    f"({exc.strerror}). sesstool publishes only with link(2), which cannot "
                    "overwrite, and never falls back to rename; hard links are required — "
                    "write to a directory on a file system that supports them (-o PATH)"
                ) from exc
            raise _refusal("link to the final name", self.target, exc) from exc
        self.linked = True
        return True

    def _target_holds_the_same_bytes(self) -> bool:
        """The existing final name is a regular file (not followed) byte-identical to the temp."""
        try:
            fd = os.open(self.name, _ANCHOR_FLAGS, dir_fd=self.dir_fd)
        except OSError:
            return False
        try:
            st, ours = os.fstat(fd), os.fstat(self.anchor)
            if not stat.S_ISREG(st.st_mode) or st.st_size != ours.st_size:
                return False
            offset = 0
            while True:
                mine, theirs = (
                    os.pread(self.anchor, _BUFFER_BYTES, offset),
                    os.pread(fd, _BUFFER_BYTES, offset),
                )
                if mine != theirs:
                    return False
                if not mine:
                    return True
                offset += len(mine)
        except OSError:
            return False
        finally:
            os.close(fd)

    def _cleanup(self, exc: BaseException) -> None:
        """Undo this attempt, once, as it fails (the attempt is over: nothing reads its state
        afterwards)."""
        if self.fd >= 0:
            with suppress(OSError):
                os.close(self.fd)
        # After a failed step past link we cannot vouch for the final name's durability.
        if self.linked:
            self._remove_if_ours(self.name, self.target, exc)
        if self.tmp_present:
            self._remove_if_ours(self.tmp_name, self.tmp_path, exc)

    def _remove_if_ours(self, name: str, path: Path, exc: BaseException) -> None:
        """Unlink ``name`` only if it is still the inode we created; never anything else."""
        try:
            st = os.stat(name, dir_fd=self.dir_fd, follow_symlinks=False)
            if self.ours is None or (st.st_dev, st.st_ino) != self.ours:
                exc.add_note(f"left {path} in place: it is not the file this run created")
                return
            os.unlink(name, dir_fd=self.dir_fd)
        except FileNotFoundError:
            return
        except OSError as err:
            exc.add_note(f"could not remove {path}: {errno_name(err)} ({err.strerror})")


def _check_source(source: Path, before: FileIdentity) -> None:
    try:
        now = FileIdentity.of_path(source)
    except OSError as exc:
        raise WriteRefusedError(
            f"source changed while it was read: {source} can no longer be examined "
            f"({errno_name(exc)}); nothing was published"
        ) from exc
    changes = now.changes_since(before)
    if changes:
        raise WriteRefusedError(
            f"source changed while it was read: {source} ({'; '.join(changes)}); nothing was published"
        )


def create_directory(path: Path, mode: int = 0o700) -> None:
    """Create the new directory ``path`` exclusively (an existing one is refused, never reused),
    with exactly ``mode`` whatever the umask, and make its entry durable (parent fsync).

    Used for a session directory a write command creates (a fork's child in a dsh root). On any
    failure after the mkdir, the still-empty directory is removed again.
    """
    if mode & ~0o777:
        raise ValueError(f"mode must be permission bits only, got {mode:#o}")
    _check_name(path)
    try:
        os.mkdir(path, 0o700 & mode)  # never wider than asked while it is being set up
    except FileExistsError as exc:
        raise WriteRefusedError(f"target exists: {path} already exists; sesstool never overwrites") from exc
    except OSError as exc:
        raise _refusal("creating the directory", path, exc) from exc
    try:
        with _refusing("setting the mode of the new directory", path):
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
        with _refusing("fsync of the parent directory", path.parent):
            parent_fd = os.open(path.parent, _DIR_FLAGS)
            try:
                os.fsync(parent_fd)
            finally:
                os.close(parent_fd)
    except BaseException:
        with suppress(OSError):
            os.rmdir(path)
        raise


def remove_created_directory(path: Path) -> None:
    """Undo ``create_directory`` after a failed publication: remove ``path`` only if it
    is still an empty directory (rmdir never removes anything else); errors are ignored."""
    with contextlib.suppress(OSError):
        os.rmdir(path)
