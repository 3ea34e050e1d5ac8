"""Open what the user named — a file, a session directory or ``-`` — as a streaming reader.

Encoding is sniffed from the magic bytes, never the suffix (DESIGN §3). A file that grows while
it is read (a live writer) is read only up to the size it had when opened: a stable prefix.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sesstool.core.errors import InputError, UsageError
from sesstool.core.jsonline import ORJSON_MAX_DEPTH
from sesstool.core.physical import Encoding
from sesstool.store.generations import highest_generation, parse_generation_name
from sesstool.store.lines import DEFAULT_MAX_LINE

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DEFAULT_MAX_DECOMPRESSED = 64 * 1024**3
DEFAULT_MAX_WINDOW = 32 * 1024**2


@dataclass(frozen=True, slots=True)
class ReadLimits:
    max_line: int = DEFAULT_MAX_LINE
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED
    max_window: int = DEFAULT_MAX_WINDOW
    max_depth: int = ORJSON_MAX_DEPTH
    dialect: str = "auto"  # "auto" (detected from the first line) or a registered dialect name


@dataclass(frozen=True, slots=True)
class SourceInfo:
    display: str  # the path as the user gave it (or the resolved generation)
    path: Path | None  # None for standard input
    encoding: Encoding
    size: int | None  # bytes at open time (None for stdin)
    filename_version: int | None  # from a canonical generation name
    from_directory: bool
    dev: int | None = None
    ino: int | None = None
    mtime_ns: int | None = None


def sniff(head: bytes) -> Encoding:
    return "zstd" if head.startswith(ZSTD_MAGIC) else "raw"


class _Prefix(io.RawIOBase):
    """At most ``limit`` bytes of ``f``: the stable prefix of a file that may be growing."""

    def __init__(self, f: BinaryIO, limit: int) -> None:
        self._f = f
        self._left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: min(len(buffer), self._left)]
        n = self._f.readinto(view)  # type: ignore[attr-defined]
        if n:
            self._left -= n
        return n or 0


def is_stdin(arg: str | Path) -> bool:
    """Only the bare argument ``-`` means standard input; a ``Path`` never does (``Path("./-")``
    prints as ``-`` but names a file)."""
    return isinstance(arg, str) and arg == "-"


def is_stream(arg: str | Path) -> bool:
    """Standard input or a FIFO: input that can be read only once."""
    if is_stdin(arg):
        return True
    try:
        return stat.S_ISFIFO(os.stat(arg).st_mode)
    except (OSError, ValueError):
        return False


def shown(path: str | Path) -> str:
    """A path as text that cannot be mistaken for an option or for standard input."""
    text = str(path)
    return "./" + text if text.startswith("-") else text


def resolve(arg: str | Path) -> tuple[Path, bool]:
    """(file path, came from a directory)."""
    path = Path(arg)
    if path.is_dir():
        return highest_generation(path).path, True
    return path, False


@contextmanager
def open_source(arg: str | Path) -> Iterator[tuple[BinaryIO, SourceInfo]]:
    """Yield a binary stream positioned at 0 and what is known about it. Only the bare string
    ``-`` is standard input (refused when it is a terminal: nothing would ever arrive)."""
    if isinstance(arg, str) and "://" in arg:
        from sesstool.store.remote import basename, is_url, open_object  # the [fleet] extra only

        if is_url(arg):
            # an object does not grow in place: the whole object is the stable prefix
            with open_object(arg) as (obj, entry):
                head = obj.read(4)
                obj.seek(0)
                parsed = parse_generation_name(basename(arg))
                version = parsed[0] if parsed else None
                yield obj, SourceInfo(arg, None, sniff(head), entry.size, version, False)
            return
    if is_stdin(arg):
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("'-' reads a log from standard input, but standard input is a terminal")
        stdin: Any = sys.stdin.buffer
        buffered: Any = stdin if isinstance(stdin, io.BufferedReader) else io.BufferedReader(stdin)
        encoding = sniff(buffered.peek(4)[:4])
        yield buffered, SourceInfo("-", None, encoding, None, None, False)
        return
    try:
        path, from_dir = resolve(arg)
        # O_NONBLOCK: opening a FIFO that has no writer must not wait for one (it then reads as
        # an empty stream); cleared again below for the reads themselves
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except InputError:
        raise
    except OSError as err:
        raise open_error(arg, err) from None
    try:
        st = os.fstat(fd)
        kind = special_kind(st.st_mode)
        if kind is not None and kind != "FIFO":
            raise InputError(f"{arg}: is a {kind}, not a session log")
        os.set_blocking(fd, True)
        f = open(fd, "rb", buffering=0)  # noqa: SIM115 - closed below; read-only
    except BaseException:
        os.close(fd)
        raise
    try:
        parsed = parse_generation_name(path.name)
        display = shown(path) if from_dir or isinstance(arg, Path) else arg
        if kind == "FIFO":
            # a stream, like standard input: no size, no identity to compare, read once
            fifo: Any = io.BufferedReader(f, 1 << 20)
            info = SourceInfo(display, None, sniff(fifo.peek(4)[:4]), None, None, False)
            yield fifo, info
            return
        head = f.read(4)
        f.seek(0)
        info = SourceInfo(
            display,
            path,
            sniff(head),
            st.st_size,
            parsed[0] if parsed else None,
            from_dir,
            st.st_dev,
            st.st_ino,
            st.st_mtime_ns,
        )
        stream: Any = io.BufferedReader(_Prefix(f, st.st_size), 1 << 20)
        yield stream, info
    finally:
        f.close()


def special_kind(mode: int) -> str | None:
    """What a non-regular, non-directory file is (None for a regular file)."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def open_error(arg: str | Path, err: OSError) -> InputError:
    """An OSError met while finding or opening an input, as the exit-3 error a user reads."""
    shown_arg = shown(arg) if isinstance(arg, Path) else arg
    reasons = {
        errno.ENOENT: "no such file or directory",
        errno.ENOTDIR: "a component of the path is not a directory",
        errno.EACCES: "permission denied (the file, or a directory above it that cannot be searched)",
        errno.EPERM: "operation not permitted",
        errno.ELOOP: "symbolic link loop (too many levels of symbolic links)",
        errno.EISDIR: "is a directory without a session generation",
        errno.EMFILE: "too many open files (raise `ulimit -n`)",
        errno.ENFILE: "too many open files in the system",
        errno.ENAMETOOLONG: "file name too long",
    }
    reason = reasons.get(err.errno or 0) or f"cannot open: {err.strerror or err}"
    return InputError(f"{shown_arg}: {reason}")


def regular_source(arg: str | Path) -> Path:
    """The regular file a write command reads (a file, or a session directory's highest
    generation). FIFOs, devices and sockets are refused: a write command needs a file it can
    read twice and whose identity it can re-check (exit 3)."""
    try:
        path, _ = resolve(arg)
        st = os.stat(path)
    except InputError:
        raise
    except OSError as err:
        raise open_error(arg, err) from None
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise InputError(
            f"{shown(arg) if isinstance(arg, Path) else arg}: is a {kind}; write commands need a "
            "regular file (read commands take a stream: inspect/validate/derive)"
        )
    return path


def changed_since(info: SourceInfo) -> bool:
    """Did the file grow or change after it was opened? (best effort; False for stdin)."""
    if info.path is None:
        return False
    try:
        st = os.stat(info.path)
    except OSError:
        return True
    return (st.st_size, st.st_mtime_ns, st.st_ino) != (info.size, info.mtime_ns, info.ino)
