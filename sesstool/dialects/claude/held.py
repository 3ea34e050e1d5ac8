"""What only hostile input makes long in a transcript's scan (issue 11 item 1, third round):
entries whose parent is named by no entry, calls waiting for their result, tool ids used twice,
results away from their call, and what the end of the scan makes of them (the dangling calls,
the orphan results). Each is held in memory up to ``HELD_AT`` items, then moved to the graph's
spill file (store/spill.py) and read back whenever it is walked, in the same order.

``HeldRows``: an ordered ``dict`` of str keys (a dict's semantics: a key set again keeps its
place, ``pop`` removes it), past the threshold an ``OrderedRows`` table (``store.spilling``). ``HeldList``: an
append-only list of picklable values, past the threshold a numbered table; a ``Sequence``
compared by its items (``ItemsEqual``), so a spilled one equals the tuple it stands for.
Both copy independently (a spilled one into a new table of the same file: nothing held).
``HeldOrder``: rows of integers handed back sorted (the dangling calls and orphans put in chain
order). ``Store``: the scan's one spill file, opened at the first structure (or graph) to move.
(compactions.py holds a transcript's compactions in them.)
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, Generic, TypeVar

from sesstool.core.sequences import ItemsEqual
from sesstool.store.spill import SpillFile
from sesstool.store.spilling import SpillingRows

HELD_AT = 4096  # items in memory; past them a structure moves to the spill file
_SLICE = 1024  # rows read back per statement
_PAGE_BYTES = 1 << 20  # at most this many bytes of a HeldList's items read back at once (or one item)

T = TypeVar("T")


class Store:
    """The scan's one spill file, opened at the first call (the graph, the tool book and these
    structures share it; a scanner's copy shares it too: each writes tables of its own)."""

    def __init__(self, purpose: str = "a large transcript's graph") -> None:
        self._purpose = purpose
        self.file: SpillFile | None = None

    def __call__(self) -> SpillFile:
        if self.file is None:
            self.file = SpillFile(self._purpose)
        return self.file


class HeldRows(SpillingRows):
    """An ordered ``dict`` of str keys, moved to ``store()`` past ``HELD_AT`` keys."""

    __slots__ = ()

    def __init__(self, store: Store) -> None:
        super().__init__(store, _limits)


def _limits() -> tuple[int, None]:
    return HELD_AT, None  # read when used (the tests lower it)


class HeldList(ItemsEqual[T], Generic[T]):
    """An append-only list, moved to ``store()`` past ``HELD_AT`` items (``store`` None: always
    in memory)."""

    def __init__(self, store: Store | None, items: Iterable[T] = ()) -> None:
        self._store = store
        self._items: list[T] = []
        self._file: SpillFile | None = None
        self._name = ""
        self._len = 0
        for item in items:
            self.append(item)

    def __len__(self) -> int:
        return self._len

    def append(self, item: T) -> None:
        if self._file is not None:
            blob = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
            self._file.execute(f"INSERT INTO {self._name} VALUES (?, ?)", (self._len, blob))
        else:
            self._items.append(item)
            if len(self._items) > HELD_AT and self._store is not None:
                self._move(self._store())
        self._len += 1

    def _move(self, store: SpillFile) -> None:
        self._file = store
        self._name = store.table("n INTEGER PRIMARY KEY, value BLOB NOT NULL")
        rows = ((n, pickle.dumps(v, pickle.HIGHEST_PROTOCOL)) for n, v in enumerate(self._items))
        store.executemany(f"INSERT INTO {self._name} VALUES (?, ?)", rows)
        self._items = []

    def __iter__(self) -> Iterator[T]:
        return self.walk()

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def walk(self, start: int = 0) -> Iterator[T]:
        """The items from the ``start``-th on (read back from that row when spilled)."""
        if self._file is None:
            yield from self._items[start : self._len]
            return
        last = start - 1
        while True:
            # the sizes first, then the values of as many rows as fit ``_PAGE_BYTES`` (one at
            # least): an item is as long as the line it came from, and 1,024 of them are not
            # read back at once (issue 11 item 1)
            sizes = self._file.execute(
                f"SELECT n, length(value) FROM {self._name} WHERE n > ? ORDER BY n LIMIT {_SLICE}", (last,)
            ).fetchall()
            if not sizes:
                return
            through, total = sizes[0][0], 0
            for n, size in sizes:
                total += size
                if total > _PAGE_BYTES and n != sizes[0][0]:
                    break
                through = n
            rows = self._file.execute(
                f"SELECT value FROM {self._name} WHERE n > ? AND n <= ? ORDER BY n", (last, through)
            ).fetchall()
            for (value,) in rows:
                yield pickle.loads(value)
            del rows
            last = through

    def __getitem__(self, i: Any) -> Any:
        """By walking when spilled (``dangling[0]``: the first few are read back)."""
        if self._file is None:
            return tuple(self._items[i]) if isinstance(i, slice) else self._items[i]
        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            return tuple(islice(self, start, stop, step)) if step > 0 else tuple(self)[i]
        at = i + self._len if i < 0 else i
        if not 0 <= at < self._len:
            raise IndexError("HeldList index out of range")
        row = self._file.execute(f"SELECT value FROM {self._name} WHERE n = ?", (at,)).fetchone()
        return pickle.loads(row[0])

    def __repr__(self) -> str:
        return f"HeldList({self._len} items{', spilled' if self._file is not None else ''})"

    def copy(self) -> HeldList[T]:
        twin: HeldList[T] = HeldList(self._store)
        twin._len, twin._items = self._len, list(self._items)
        if self._file is not None:
            twin._file = self._file
            twin._name = self._file.table("n INTEGER PRIMARY KEY, value BLOB NOT NULL")
            self._file.execute(f"INSERT INTO {twin._name} SELECT * FROM {self._name}")
        return twin


class HeldOrder:
    """Rows of integers handed back sorted (as tuples compare): a list sort in memory, SQLite's
    sorter (bounded cache, sorted runs merged from its temporary files) past ``HELD_AT`` rows."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._rows: list[tuple[int, ...]] = []
        self._file: SpillFile | None = None
        self._name = ""
        self._width = 0

    def add(self, row: tuple[int, ...]) -> None:
        if self._file is not None:
            self._file.execute(f"INSERT INTO {self._name} VALUES ({', '.join('?' * self._width)})", row)
            return
        self._rows.append(row)
        if len(self._rows) > HELD_AT:
            self._file, self._width = self._store(), len(row)
            self._name = self._file.table(", ".join(f"c{i} INTEGER NOT NULL" for i in range(self._width)))
            marks = ", ".join("?" * self._width)
            self._file.executemany(f"INSERT INTO {self._name} VALUES ({marks})", self._rows)
            self._rows = []

    def sorted(self) -> Iterator[tuple[int, ...]]:
        if self._file is None:
            yield from sorted(self._rows)
            return
        order = ", ".join(f"c{i}" for i in range(self._width))
        cursor = self._file.execute(f"SELECT {order} FROM {self._name} ORDER BY {order}")
        while rows := self._file.fetch(cursor, _SLICE):
            for row in rows:
                yield tuple(row)
