"""An append-only list and a sort of integer rows that move to a spill file past a threshold
(issue 11 item 1): ``SpillingList``, ``SpillingOrder``; ``SharedSpill``, the one spill file a
scan's structures share, opened at the first one to move; ``paged`` (``store.paging``), reading
rows back a page at a time past the last key (the list's walk and derive's index of lines share
it).

What only hostile input makes long — the tool ids of a run of calls never answered, the blocks of
one reply, the items of one span of user entries, a transcript's compactions — is held as a list
while it is short and, past ``limits()`` (``Limits``: a count of items, and a number of bytes
of them measured by ``size(item)``, by default ``item_size``: about its length as JSON), moved
in order to a numbered table of pickled rows: from then on memory no longer grows with it. An
item is as long as the line it came from, so a count alone would hold 4,096 lines of any length
(4 GiB of 1 MiB lines); with the bytes too the list holds at most ``Limits.bytes`` plus one item
(the longest line). A spilled list reads its items back a page at a time, a page at most
``Limits.page_bytes`` of pickled items (or one item, however long) and ``Limits.page_rows`` rows.

``limits`` is called at every append and walk, so an owner's module constants (which its tests
lower) are read when they are used (``dialects/claude/held.py`` binds the Claude dialect's). The
owner hands in the spill file to use (a ``SharedSpill``, or any callable answering a
``SpillFile``): the dialects get their store by injection, they never open files.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Self, TypeVar

import orjson

from sesstool.core.sequences import ItemsEqual
from sesstool.store.paging import paged, sized_page

__all__ = ["Limits", "SharedSpill", "SpillingList", "SpillingOrder", "item_size", "paged", "sized_page"]

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

T = TypeVar("T")
R = TypeVar("R", bound=Sequence[Any])
_ROW = "n INTEGER PRIMARY KEY, value BLOB NOT NULL"


class Limits(NamedTuple):
    """A spilling structure's bounds, read when used."""

    items: int  # held in memory up to this many items ...
    bytes: int  # ... and this many bytes of them (``size``); past either, moved to the spill file
    page_bytes: int  # a spilled list read back at most this many bytes a statement (or one item)
    page_rows: int  # ... and at most this many rows


class SharedSpill:
    """One spill file shared by several structures (each writes tables of its own; a copy of a
    structure shares it too), made by ``make()`` at the first call: ``store()`` answers it."""

    def __init__(self, make: Callable[[], SpillFile]) -> None:
        self._make = make
        self.file: SpillFile | None = None

    def __call__(self) -> SpillFile:
        if self.file is None:
            self.file = self._make()
        return self.file


def item_size(item: object) -> int:
    """About the bytes ``item`` takes, cheaply: a string's length, else its length as JSON (a
    block, a record: what its line spent on it), else its pickled length (what a spilled row
    holds: a string with a lone surrogate, a key that is not a string)."""
    if isinstance(item, (str, bytes)):
        return len(item)
    try:
        return len(orjson.dumps(item))
    except TypeError:  # orjson.JSONEncodeError is one
        return len(pickle.dumps(item, pickle.HIGHEST_PROTOCOL))


class SpillingList(ItemsEqual[T], Generic[T]):
    """An append-only list, moved to ``store()`` past ``limits()`` (``store`` None: always in
    memory); a ``Sequence`` compared by its items, so a spilled one equals the tuple it stands
    for. A copy goes on independently (a spilled one into a new table of the same file: nothing
    held)."""

    def __init__(
        self,
        store: Callable[[], SpillFile] | None,
        limits: Callable[[], Limits],
        items: Iterable[T] = (),
        size: Callable[[Any], int] = item_size,
    ) -> None:
        self._store, self._limits, self._size = store, limits, size
        self._items: list[T] = []
        self._bytes = 0  # the ``size`` of the items in memory
        self._file: SpillFile | None = None
        self._name = ""
        self._len = 0
        for item in items:
            self.append(item)

    def __len__(self) -> int:
        return self._len

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def append(self, item: T) -> None:
        if self._file is not None:
            blob = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
            self._file.execute(f"INSERT INTO {self._name} VALUES (?, ?)", (self._len, blob))
        else:
            self._items.append(item)
            if self._store is not None:
                limits = self._limits()
                self._bytes += self._size(item)
                if len(self._items) > limits.items or self._bytes > limits.bytes:
                    self.move()
        self._len += 1

    def move(self) -> None:
        """Move the items to the spill file now (held already, or no store: nothing to do)."""
        if self._file is not None or self._store is None:
            return
        file = self._file = self._store()
        self._name = file.table(_ROW)
        rows = ((n, pickle.dumps(v, pickle.HIGHEST_PROTOCOL)) for n, v in enumerate(self._items))
        file.executemany(f"INSERT INTO {self._name} VALUES (?, ?)", rows)
        self._items, self._bytes = [], 0

    def __iter__(self) -> Iterator[T]:
        return self.walk()

    def walk(self, start: int = 0) -> Iterator[T]:
        """The items from the ``start``-th on (read back from that row, a page at a time, when
        spilled)."""
        if self._file is None:
            yield from self._items[start : self._len]
            return
        for (value,) in paged(self._page, max(start, 0) - 1, key=None):
            yield pickle.loads(value)

    def _page(self, last: int) -> list[Any]:
        """The values of the rows past row ``last``, a page of ``limits()`` (``sized_page``)."""
        assert self._file is not None
        limits = self._limits()
        return sized_page(
            self._file, self._name, "value", "length(value)", last, limits.page_rows, limits.page_bytes
        )

    def __getitem__(self, i: Any) -> Any:
        """By walking when spilled (``dangling[0]``: the first few are read back)."""
        if self._file is None:
            return tuple(self._items[i]) if isinstance(i, slice) else self._items[i]
        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            return tuple(islice(self, start, stop, step)) if step > 0 else tuple(self)[i]
        at = i + self._len if i < 0 else i
        if not 0 <= at < self._len:
            raise IndexError(f"{type(self).__name__} index out of range")
        row = self._file.execute(f"SELECT value FROM {self._name} WHERE n = ?", (at,)).fetchone()
        return pickle.loads(row[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._len} items{', spilled' if self._file is not None else ''})"

    def copy(self) -> Self:
        twin = object.__new__(type(self))
        twin._store, twin._limits, twin._size = self._store, self._limits, self._size
        twin._len, twin._items, twin._bytes = self._len, list(self._items), self._bytes
        twin._file, twin._name = self._file, ""
        if self._file is not None:
            twin._name = self._file.table(_ROW)
            self._file.execute(f"INSERT INTO {twin._name} SELECT * FROM {self._name}")
        return twin


class SpillingOrder:
    """Rows handed back sorted (as tuples compare): a list sort in memory, SQLite's sorter
    (bounded cache, sorted runs merged from its temporary files) past ``limits().items`` rows or
    ``limits().bytes`` bytes of their ``bytes`` columns. A row is as wide as its owner makes it;
    each column holds integers (64-bit: what SQLite stores) or ``bytes`` throughout, never both,
    and compares alike in both places: integers by value, bytes as ``memcmp`` does (a list of
    paths found by a walk: ``store.paths.SortedPaths``). Integer rows count no bytes: a count of
    them bounds their size.

    ``distinct``: a row added again is not kept (``add`` answers whether it was new), and
    ``contains`` asks without sorting — a set beside the held rows, a unique index on the spilled
    table (which its walk reads in order: no sort at all)."""

    def __init__(
        self, store: Callable[[], SpillFile], limits: Callable[[], Limits], distinct: bool = False
    ) -> None:
        self._store, self._limits = store, limits
        self._rows: list[tuple[int | bytes, ...]] = []
        self._seen: set[tuple[int | bytes, ...]] | None = set() if distinct else None  # the rows held
        self._bytes = 0  # the length of the ``bytes`` columns of the rows in memory
        self._file: SpillFile | None = None
        self._name = ""
        self._width = 0

    def add(self, row: tuple[int | bytes, ...]) -> bool:
        """Keep ``row``; False when ``distinct`` and it was kept already (nothing added)."""
        if self._file is not None:
            verb = "INSERT OR IGNORE" if self._seen is not None else "INSERT"
            marks = ", ".join("?" * self._width)
            return bool(self._file.execute(f"{verb} INTO {self._name} VALUES ({marks})", row).rowcount)
        if self._seen is not None:
            if row in self._seen:
                return False
            self._seen.add(row)
        self._rows.append(row)
        self._bytes += sum(len(c) for c in row if isinstance(c, bytes))
        limits = self._limits()
        if len(self._rows) > limits.items or self._bytes > limits.bytes > 0:
            self._file, self._width = self._store(), len(row)
            kinds = ("BLOB" if isinstance(c, bytes) else "INTEGER" for c in row)
            columns = ", ".join(f"c{i} {k} NOT NULL" for i, k in enumerate(kinds))
            if self._seen is not None:
                columns += f", UNIQUE ({', '.join(f'c{i}' for i in range(self._width))})"
                self._seen = set()
            self._name = self._file.table(columns)
            marks = ", ".join("?" * self._width)
            self._file.executemany(f"INSERT INTO {self._name} VALUES ({marks})", self._rows)
            self._rows, self._bytes = [], 0
        return True

    def contains(self, row: tuple[int | bytes, ...]) -> bool:
        """Was ``row`` added? No sort: the held rows' set (``distinct``) or a look at each, the
        spilled table's unique index (``distinct``) or a scan of it."""
        if self._file is None:
            return row in (self._seen if self._seen is not None else self._rows)
        if len(row) != self._width:
            return False
        where = " AND ".join(f"c{i} = ?" for i in range(self._width))
        found = self._file.execute(f"SELECT 1 FROM {self._name} WHERE {where} LIMIT 1", row).fetchone()
        return found is not None

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def sorted(self) -> Iterator[tuple[Any, ...]]:
        if self._file is None:
            yield from sorted(self._rows)
            return
        order = ", ".join(f"c{i}" for i in range(self._width))
        cursor = self._file.execute(f"SELECT {order} FROM {self._name} ORDER BY {order}")
        while rows := self._file.fetch(cursor, self._limits().page_rows):
            for row in rows:
                yield tuple(row)
