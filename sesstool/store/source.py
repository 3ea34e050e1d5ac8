"""Open what the user named — a file, a session directory or ``-`` — as a streaming reader.

Encoding is sniffed from the magic bytes, never the suffix (DESIGN §3). A file that grows while
it is read (a live writer) is read only up to the size it had when opened: a stable prefix.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sesstool.core.errors import InputError
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


def resolve(arg: str) -> tuple[Path, bool]:
    """(file path, came from a directory)."""
    path = Path(arg)
    if path.is_dir():
        return highest_generation(path).path, True
    return path, False


@contextmanager
def open_source(arg: str) -> Iterator[tuple[BinaryIO, SourceInfo]]:
    """Yield a binary stream positioned at 0 and what is known about it."""
    if "://" in arg:
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
    if arg == "-":
        stdin: Any = sys.stdin.buffer
        buffered: Any = stdin if isinstance(stdin, io.BufferedReader) else io.BufferedReader(stdin)
        encoding = sniff(buffered.peek(4)[:4])
        yield buffered, SourceInfo("-", None, encoding, None, None, False)
        return
    try:
        path, from_dir = resolve(arg)
        f = open(path, "rb")  # noqa: SIM115 - closed below; read-only
    except InputError:
        raise
    except IsADirectoryError:
        raise InputError(f"{arg}: is a directory without a session generation") from None
    except FileNotFoundError:
        raise InputError(f"{arg}: no such file or directory") from None
    except PermissionError:
        raise InputError(f"{arg}: permission denied") from None
    except OSError as err:
        raise InputError(f"{arg}: cannot open: {err.strerror}") from None
    try:
        st = os.fstat(f.fileno())
        head = f.read(4)
        f.seek(0)
        parsed = parse_generation_name(path.name)
        display = str(path) if from_dir else arg
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


def changed_since(info: SourceInfo) -> bool:
    """Did the file grow or change after it was opened? (best effort; False for stdin)."""
    if info.path is None:
        return False
    try:
        st = os.stat(info.path)
    except OSError:
        return True
    return (st.st_size, st.st_mtime_ns, st.st_ino) != (info.size, info.mtime_ns, info.ino)
