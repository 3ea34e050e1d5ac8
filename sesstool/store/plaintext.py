"""Reading back what a scan planned: plaintext ranges, file byte ranges and reader batches of a
log the engine already scanned (the one place write commands read their source a second time).

Every function opens the file read-only itself and closes it when the returned iterator is
exhausted or closed; the engine never opens a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, cast

from sesstool.core.errors import InputError
from sesstool.core.physical import Batch, Encoding, PhysicalIssue, ReadSummary
from sesstool.store.framing import copy_bytes, zstd_plaintext
from sesstool.store.publish import FileIdentity
from sesstool.store.readers import make_reader
from sesstool.store.source import ReadLimits

_CHUNK = 1 << 20


class SourceChanged(Exception):
    """The file is no longer the one that was scanned (``identity`` differs)."""


def plaintext_range(
    path: Path,
    encoding: Encoding,
    start: int,
    end: int,
    max_window: int,
    frame: tuple[int, int] = (0, 0),
    identity: FileIdentity | None = None,
) -> Iterator[bytes]:
    """Plaintext bytes [start, end) of a raw or zstd log, in bounded pieces.

    zstd: decoding starts at ``frame`` = (file offset of a frame, plaintext offset where that
    frame starts), at or before ``start`` (the default decodes from the first frame). With
    ``identity`` the opened file must still be the one that was scanned (``SourceChanged``)."""
    with open(path, "rb") as f:  # read-only
        if identity is not None and FileIdentity.of_fd(f.fileno()).changes_since(identity):
            raise SourceChanged(str(path))
        if encoding == "raw":
            yield from copy_bytes(f, start, end)
            return
        skip = start - frame[1]
        for piece in zstd_plaintext(f, frame[0], frame[1], end, max_window):
            if skip >= len(piece):
                skip -= len(piece)
                continue
            yield piece[skip:] if skip else piece
            skip = 0


class _Hashed:
    """A read-only file read front to back, every byte it hands out hashed on the way."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self.digest = hashlib.sha256()
        self.position = 0

    def seek(self, offset: int, whence: int = 0) -> int:
        if (offset, whence) != (self.position, 0):
            raise ValueError("a hashed read goes front to back")  # the reads below never jump
        return self.position

    def read(self, size: int = -1) -> bytes:
        piece = self._f.read(size)
        self.digest.update(piece)
        self.position += len(piece)
        return piece


class HashedPlaintext:
    """Plaintext [0, ``end``) of a log with the whole file's SHA-256 taken in the same read: the
    source of a write is read once to check both what was carried and that the file is still the
    one the scan hashed (an in-place edit keeps size and mtime)."""

    def __init__(self, path: Path, encoding: Encoding, end: int, max_window: int) -> None:
        self.path, self.encoding, self.end, self.max_window = path, encoding, end, max_window
        self._sha256: str | None = None
        self._pieces = self._read()

    def pieces(self) -> Iterator[bytes]:
        """The plaintext, in bounded pieces (once)."""
        return self._pieces

    def sha256(self) -> str:
        """The file's SHA-256 (the plaintext not yet consumed is read, hashed and dropped)."""
        for _ in self._pieces:
            pass
        assert self._sha256 is not None
        return self._sha256

    def _read(self) -> Iterator[bytes]:
        with open(self.path, "rb") as f:  # read-only
            hashed = _Hashed(f)
            stream = cast(BinaryIO, hashed)
            if self.encoding == "raw":
                yield from copy_bytes(stream, 0, self.end)
            else:
                yield from zstd_plaintext(stream, 0, 0, self.end, self.max_window)
            while hashed.read(_CHUNK):
                pass  # the rest of the file (a torn tail, what follows the carried prefix)
            self._sha256 = hashed.digest.hexdigest()


def file_range(path: Path, start: int, end: int, *, strict: bool = True) -> Iterator[bytes]:
    """File bytes [start, end) (compressed bytes for a zstd file), in bounded pieces. A file
    that ends before ``end`` is an ``InputError``, or with ``strict=False`` just ends early."""
    with open(path, "rb") as f:  # read-only
        if strict:
            yield from copy_bytes(f, start, end)
            return
        f.seek(start)
        left = end - start
        while left > 0 and (piece := f.read(min(_CHUNK, left))):
            left -= len(piece)
            yield piece


def sha256_range(path: Path, start: int, end: int) -> str:
    digest = hashlib.sha256()
    for piece in file_range(path, start, end):
        digest.update(piece)
    return digest.hexdigest()


# A log to read again: its path, or an open file read from its start (a stream's private copy,
# ``store.stream_copy``).
Readable = Path | BinaryIO


class LogReading:
    """The project's reader over the log at ``path``: ``batches()`` yields what it yields, and
    ``summary`` holds its ``ReadSummary`` once they are exhausted."""

    def __init__(self, path: Readable, encoding: Encoding, limits: ReadLimits) -> None:
        self.path = path
        self.encoding = encoding
        self.limits = limits
        self.summary: ReadSummary | None = None

    def batches(self) -> Iterator[Batch | PhysicalIssue]:
        if not isinstance(self.path, Path):
            self.path.seek(0)
            yield from self._batches(self.path)
            return
        with open(self.path, "rb") as f:  # read-only
            yield from self._batches(f)

    def _batches(self, f: BinaryIO) -> Iterator[Batch | PhysicalIssue]:
        reader = make_reader(f, self.encoding, self.limits)
        yield from reader.batches()
        self.summary = reader.summary


def log_batches(path: Readable, encoding: Encoding, limits: ReadLimits) -> Iterator[Batch | PhysicalIssue]:
    """What the project's reader yields for the log at ``path``."""
    return LogReading(path, encoding, limits).batches()


def plaintext_lines(
    path: Readable, encoding: Encoding, limits: ReadLimits, start: int, end: int
) -> Iterator[tuple[int, bytes]]:
    """(plaintext offset, line without its newline) of every whole line in [start, end) of a log
    the engine already scanned (``end`` is a line boundary: the committed end). A read that no
    longer decodes cleanly (the file changed since the scan) is an ``InputError``."""
    for item in log_batches(path, encoding, limits):
        if isinstance(item, PhysicalIssue):
            if item.fatal:
                where = path if isinstance(path, Path) else "the stream's copy"
                raise InputError(f"{where}: the log no longer reads cleanly: {item.message}")
            continue
        batch, offset, _, _ = item
        for line in batch:
            after = offset + len(line) + 1
            if after > end:
                return
            if offset >= start:
                yield offset, line
            offset = after
