"""Records held back for later: in memory up to a bound, then in an unnamed temporary file.

derive reads the surface records back in file order but prints them in surface order; a record
a replacement moved earlier than records still to come waits here (issue 14: memory bounded by
the bound, not by the number of records held).
"""

from __future__ import annotations

import os
import tempfile

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
