"""Lines of an already-scanned log fetched by their plaintext offset (issue 11 item 1).

A dialect that derives from entries scattered through the file (Claude Code: a reply's members,
a call's result, a compaction's preserved messages) keeps the offset of each line instead of its
bytes, and asks for the lines it needs, roughly in file order. ``LineFetcher.get(offset)``:

* raw (a file, or a stream's private copy): a seek and a read of that one line;
* zstd: a plaintext cursor moved forward over the decoded lines; a fetch behind the cursor
  starts it again from the first frame (what the caller asks for behind the cursor is kept
  rare by the cache).

The last lines fetched stay in a cache bounded in bytes (``CACHE_BYTES``, and always the latest
line), each entry counted as its line's length plus ``ENTRY_BYTES`` (its offset, the ``bytes``
object and the ordered dict's slot: an empty line is not free): memory is the cache, the largest
line and the zstd window, never the number of lines.
A line that no longer reads as scanned (no newline where the scan saw one) is an ``InputError``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from sesstool.core.errors import InputError
from sesstool.core.physical import Encoding
from sesstool.store.plaintext import Readable, plaintext_lines
from sesstool.store.source import ReadLimits

CACHE_BYTES = 4 << 20
# What an entry of the cache costs beside its line's bytes: the offset (an int, 28 bytes), the
# ``bytes`` object's header (33) and the ``OrderedDict``'s slot and order node: 107 to 145 bytes
# an entry in a dict that only grows, about 230 in the cache's steady state, where entries come
# and go and the table is sized for those that left too (tracemalloc, CPython 3.11, 3-byte lines).
ENTRY_BYTES = 256
_PIECE = 1 << 16


class LineFetcher:
    """``get(offset)``: the line that starts at plaintext ``offset``, without its newline.
    ``close()`` releases the file (the caller's open stream copy stays open)."""

    def __init__(
        self, path: Readable, encoding: Encoding, limits: ReadLimits, end: int, cache_bytes: int = CACHE_BYTES
    ) -> None:
        self._path, self._encoding, self._limits, self._end = path, encoding, limits, end
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cached = 0
        self._cache_bytes = cache_bytes
        self._file: BinaryIO | None = None
        self._cursor: Iterator[tuple[int, bytes]] | None = None
        self._position = 0  # zstd: the offset of the next line the cursor yields
        self.restarts = 0  # zstd: how often the cursor started again (tests count them)

    def get(self, offset: int) -> bytes:
        hit = self._cache.get(offset)
        if hit is not None:
            self._cache.move_to_end(offset)
            return hit
        line = self._raw(offset) if self._encoding == "raw" else self._zstd(offset)
        self._keep(offset, line)
        return line

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()  # type: ignore[attr-defined]
            self._cursor = None
        if self._file is not None and isinstance(self._path, Path):
            self._file.close()
        self._file = None
        self._cache.clear()
        self._cached = 0

    def _keep(self, offset: int, line: bytes) -> None:
        self._cache[offset] = line
        self._cached += ENTRY_BYTES + len(line)
        while self._cached > self._cache_bytes and len(self._cache) > 1:
            _, dropped = self._cache.popitem(last=False)
            self._cached -= ENTRY_BYTES + len(dropped)

    def _raw(self, offset: int) -> bytes:
        if self._file is None:
            self._file = open(self._path, "rb") if isinstance(self._path, Path) else self._path  # noqa: SIM115
        f = self._file
        f.seek(max(0, offset - 1))
        if offset > 0 and f.read(1) != b"\n":  # a line starts after a newline
            raise self._changed(offset)
        pieces: list[bytes] = []
        size = 0
        limit = min(self._limits.max_line + 1, self._end - offset)
        while size < limit:
            piece = f.read(min(_PIECE, limit - size))
            if not piece:
                break
            cut = piece.find(b"\n")
            if cut >= 0:
                pieces.append(piece[:cut])
                return b"".join(pieces)
            pieces.append(piece)
            size += len(piece)
        raise self._changed(offset)

    def _zstd(self, offset: int) -> bytes:
        if self._cursor is None or offset < self._position:
            if self._cursor is not None:
                self._cursor.close()  # type: ignore[attr-defined]
                self.restarts += 1
            self._cursor = plaintext_lines(self._path, self._encoding, self._limits, 0, self._end)
            self._position = 0
        for at, line in self._cursor:
            self._position = at + len(line) + 1
            if at == offset:
                return line
            if at > offset:
                break
        raise self._changed(offset)

    def _changed(self, offset: int) -> InputError:
        where = str(self._path) if isinstance(self._path, Path) else "the stream's copy"
        return InputError(f"{where}: the log changed since it was scanned (no line at byte {offset})")
