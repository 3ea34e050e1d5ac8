"""Records held back for later: in memory up to a bound, then in an unnamed temporary file.

derive reads the surface records back in file order but prints them in surface order; a record
a replacement moved earlier than records still to come waits here (issue 14: memory bounded by
the bound, not by the number of records held).
"""

from __future__ import annotations

import os
import pickle
import tempfile
import weakref
from collections.abc import Collection, Iterator
from typing import TypeVar

T = TypeVar("T")

MEMORY_BOUND = 4 << 20  # bytes kept in memory before the spool moves to a temporary file


class LineSpool:
    """``put(key, line)`` now, ``take(key)`` later (once). The file is removed on ``close``."""

    def __init__(self, memory: int = MEMORY_BOUND) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=memory)  # noqa: SIM115 - closed by close()
        self._at: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._at)

    def put(self, key: int, line: bytes) -> None:
        position = self._file.seek(0, os.SEEK_END)
        self._file.write(line)
        self._at[key] = (position, len(line))

    def take(self, key: int) -> bytes | None:
        where = self._at.pop(key, None)
        if where is None:
            return None
        self._file.seek(where[0])
        return self._file.read(where[1])

    def close(self) -> None:
        self._file.close()
        self._at.clear()


class RecordSpool:
    """Records written one after another, read back once in the same order: in memory up to a
    bound, then in an unnamed temporary file; no index (memory does not grow with the records).
    ``derive --format json`` keeps the system messages its request envelope cites here."""

    def __init__(self, memory: int = MEMORY_BOUND) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=memory)  # noqa: SIM115 - closed by close()
        self.count = 0

    def append(self, record: bytes) -> None:
        self._file.write(len(record).to_bytes(8, "little"))
        self._file.write(record)
        self.count += 1

    def records(self) -> Iterator[bytes]:
        """Every record, in the order written (once; the spool is closed after)."""
        f = self._file
        f.seek(0)
        try:
            for _ in range(self.count):
                yield f.read(int.from_bytes(f.read(8), "little"))
        finally:
            self.close()

    def close(self) -> None:
        self._file.close()


ITEMS_MEMORY = 1 << 20  # bytes of pickled items an ``ItemSpool`` keeps in memory (tests lower it)


class ItemSpool(Collection[T]):
    """Python values appended one after another and walked in that order, as often as wanted:
    pickled, in memory up to ``ITEMS_MEMORY`` bytes, then in an unnamed temporary file (issue 11
    item 1: what a command keeps per file it checked — ``validate``'s results, ``inspect``'s side
    files, ``list``'s rows — costs a fixed amount, not a few KiB a file). Only this process's own
    values are read back, from a file nobody else can name."""

    def __init__(self, memory: int | None = None) -> None:
        bound = ITEMS_MEMORY if memory is None else memory
        self._file = tempfile.SpooledTemporaryFile(max_size=max(bound, 1))  # noqa: SIM115 - close()
        if bound <= 0:
            self._file.rollover()
        # closed with the spool when it is not closed before (a view that walked it and let go)
        self._closer = weakref.finalize(self, self._file.close)
        self._end = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __contains__(self, item: object) -> bool:
        return any(x == item for x in self)

    def append(self, item: T) -> None:
        data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
        f = self._file
        f.seek(self._end)
        f.write(len(data).to_bytes(8, "little") + data)
        self._end = f.tell()
        self._count += 1

    def __iter__(self) -> Iterator[T]:
        """Every item, in the order appended (each walk reads the spool again from its start;
        walks may interleave)."""
        at = 0
        f = self._file
        for _ in range(self._count):
            f.seek(at)
            size = int.from_bytes(f.read(8), "little")
            data = f.read(size)
            at += 8 + size
            yield pickle.loads(data)  # this process's own values, from its own unnamed file

    @property
    def spilled(self) -> bool:
        return bool(getattr(self._file, "_rolled", True))

    def close(self) -> None:
        self._closer()
