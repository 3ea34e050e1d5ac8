"""One run of the upgrade chain's spill (``core.upgrade.UpgradeSpill``; issue 11 item 1): the
tables its steps move to past their thresholds — a ``HeldMap``'s strings (v0 → v1 retry chains,
v2 → v3 message ids), the events v1 → v2 holds behind an undecided attempt, ``SeqRemap``'s
change points and dropped runs — all in one private ``store.spill.SpillFile``, opened at the
first table (a log that outgrows nothing opens none; sqlite3 is imported only then) and given
back by ``close``.

Also ``spilled_strings``: the maker of a ``HeldMap``'s table on its own (the redactor's), and
``strings_in``: one whose tables go in a file the caller shares (validate's paths checked)."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sesstool.core.held_map import StringTable, TableMaker
from sesstool.core.jsonline import ORJSON_MAX_DEPTH
from sesstool.core.upgrade import NumberedRows, SortedWords
from sesstool.store.paging import sized_page

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

PAGE_BYTES = 1 << 20  # bytes of rows ``NumberedRowsTable.after`` reads back at most (or one row)
PAGE_ROWS = 256  # and rows


def strings_in(spill: Callable[[], SpillFile]) -> TableMaker:
    """A ``HeldMap``'s table maker whose tables are in the file ``spill()`` answers (a run's, a
    walk's ``store.spilling_list.SharedSpill``), made only when the map outgrows memory."""

    def make(purpose: str) -> StringTable:
        from sesstool.store.spilled_strings import SpilledStrings  # sqlite3: only when this large

        return SpilledStrings(purpose, spill())

    return make


def spilled_strings(purpose: str) -> StringTable:
    """A ``HeldMap``'s table in a spill file of its own (``core.held_map.TableMaker``)."""
    from sesstool.store.spilled_strings import SpilledStrings  # sqlite3: only when a map outgrows memory

    return SpilledStrings(purpose)


class RunSpill:
    """``core.upgrade.UpgradeSpill``: every table of one run in one spill file."""

    def __init__(self, purpose: str = "the state of a migration") -> None:
        self._purpose = purpose
        self._file: SpillFile | None = None

    def _spill(self) -> SpillFile:
        if self._file is None:
            from sesstool.store.spill import SpillFile  # sqlite3: only when something outgrew memory

            self._file = SpillFile(self._purpose)
        return self._file

    def strings(self, purpose: str) -> StringTable:
        return strings_in(self._spill)(purpose)

    def rows(self, purpose: str) -> NumberedRows:
        return NumberedRowsTable(self._spill())

    def sorted_words(self, purpose: str, items: Sequence[int]) -> SortedWords:
        from sesstool.store.spill import SpilledArray

        made = SpilledArray("q", self._spill().pages(), sorted=True)
        made.extend(items)
        return made

    def close(self) -> None:
        """Give the space back now (else it goes with the object)."""
        if self._file is not None:
            self._file.close()
            self._file = None


class NumberedRowsTable:
    """``core.upgrade.NumberedRows``: pickled values by number in a table of ``spill``."""

    def __init__(self, spill: SpillFile) -> None:
        self._spill = spill
        self._name = spill.table("n INTEGER PRIMARY KEY, value BLOB NOT NULL")

    def put(self, n: int, value: Any) -> None:
        self._spill.execute(f"INSERT OR REPLACE INTO {self._name} VALUES (?, ?)", (n, _pickled(value)))

    def drop(self, n: int) -> None:
        self._spill.execute(f"DELETE FROM {self._name} WHERE n = ?", (n,))

    def after(self, n: int) -> list[tuple[int, Any]]:
        """The rows past ``n``, up to ``PAGE_ROWS`` rows and ``PAGE_BYTES`` bytes (at least one),
        removed from the table: their sizes are read first (SQLite knows a blob's length
        without reading it), then the values of the rows that fit (``store.paging.sized_page``)."""
        rows = sized_page(self._spill, self._name, "n, value", "length(value)", n, PAGE_ROWS, PAGE_BYTES)
        if not rows:
            return []
        self._spill.execute(f"DELETE FROM {self._name} WHERE n > ? AND n <= ?", (n, rows[-1][0]))
        return [(row, pickle.loads(value)) for row, value in rows]


def _pickled(value: Any) -> bytes:
    """``value`` pickled; a JSON value nested as deep as the decoder allows (1,024 levels) may
    pass Python's recursion limit, which is raised for it."""
    try:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        with _deeper(4 * ORJSON_MAX_DEPTH):
            return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


@contextmanager
def _deeper(levels: int) -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before + levels)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)
