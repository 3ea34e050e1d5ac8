"""Scratch space on disk for a scan whose state outgrows memory (issue 17: a Claude transcript's
entry graph past ``entry_graph.SPILL_AT`` entries).

One private SQLite database per scan, opened on the empty file name: SQLite creates it in its
temporary directory (``SQLITE_TMPDIR``, ``TMPDIR``, ``/var/tmp``, ``/usr/tmp``, ``/tmp``: the
first writable one) and unlinks it as soon as it is open, so nothing named is left on disk
however the process ends (SIGKILL included); the space goes with the last descriptor. No
journal, no fsync: it is scratch, never read by another process. SQLite's page cache is bounded
(``CACHE_KIB``); a failure (a full disk, no writable temporary directory) is an ``InputError``
(exit 3), never a traceback.

Two shapes, both generic (no dialect decision here): ``Pages`` (numbered blobs: the pages of a
``SpilledArray``, or one key per item) and ``Keys`` (exact byte keys → the first item that used
them). A ``SpilledArray`` is an array of integers paged to a ``Pages`` table through a small LRU
of pages; its ``copy`` is copy-on-write (the pages written so far are frozen and shared, each
side writes its later pages to a layer of its own), so a repair's continuation does not hold
the graph twice.
"""

from __future__ import annotations

import pickle
import sqlite3
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice, repeat
from typing import Any, Protocol, TypeVar, overload

from sesstool.core.errors import InputError
from sesstool.core.scan_state import SpilledTable
from sesstool.core.sequences import ItemsEqual
from sesstool.store.paging import key_text, paged, sized_page
from sesstool.store.paging import text_key as text_key  # its users import it with the spill file

CACHE_KIB = 512  # SQLite's page cache
PAGE = 2048  # items per page of a SpilledArray
CACHED_PAGES = 4  # pages each SpilledArray keeps in memory

T = TypeVar("T")


class IntArray(Protocol):
    """What an ``array``, a ``bytearray`` and a ``SpilledArray`` share."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> int: ...
    def __setitem__(self, i: int, value: int, /) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def append(self, value: int, /) -> None: ...
    def reverse(self) -> None: ...


def bisect(values: IntArray, value: int) -> int:
    """``bisect_left`` of a sorted ``array`` or ``SpilledArray(sorted=True)``."""
    if isinstance(values, SpilledArray):
        return values.bisect_left(value)
    return bisect_left(values, value)


class SpillFile:
    """The private database. Every call that reaches SQLite goes through ``_run``."""

    def __init__(self, purpose: str = "a scan's state", cache_kib: int = CACHE_KIB) -> None:
        """``purpose``: what the space holds, named in the error a failure raises."""
        self._tables = 0
        self._purpose = purpose
        self._db = self._run(lambda: sqlite3.connect("", isolation_level=None, check_same_thread=False))
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=FILE", f"cache_size=-{cache_kib}"):
            self.execute(f"PRAGMA {pragma}")
        self.execute("BEGIN")  # one transaction for the scan's life: nothing is ever committed

    def _run(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except sqlite3.Error as err:
            raise InputError(
                f"scratch space for {self._purpose} (an unnamed file in SQLite's "
                f"temporary directory: SQLITE_TMPDIR, TMPDIR, /var/tmp or /tmp): {err}"
            ) from None

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._run(lambda: self._db.execute(sql, args))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._run(lambda: self._db.executemany(sql, rows))

    def fetch(self, cursor: sqlite3.Cursor, size: int) -> list[Any]:
        """The next ``size`` rows of ``cursor`` (fewer at its end): a long query's later steps
        can fail too (its sorter writes to the temporary directory)."""
        return self._run(lambda: cursor.fetchmany(size))

    def close(self) -> None:
        """Give the space back now (else it goes with the object)."""
        self._run(self._db.close)

    def table(self, columns: str, options: str = "") -> str:
        """A new table with ``columns``; answers its name."""
        self._tables += 1
        name = f"t{self._tables}"
        self.execute(f"CREATE TABLE {name} ({columns}) {options}")
        return name

    def pages(self) -> Pages:
        return Pages(self, None)

    def keys(self) -> Keys:
        return Keys(self, None)


class Pages:
    """Numbered blobs; a layer reads through to its ``base`` for numbers it never wrote."""

    def __init__(self, spill: SpillFile, base: Pages | None) -> None:
        self.spill = spill
        self.base = base
        self._name = spill.table("n INTEGER PRIMARY KEY, data BLOB")

    def put(self, n: int, data: bytes) -> None:
        self.spill.execute(f"INSERT OR REPLACE INTO {self._name} VALUES (?, ?)", (n, data))

    def put_many(self, rows: Iterable[tuple[int, bytes]]) -> None:
        self.spill.executemany(f"INSERT OR REPLACE INTO {self._name} VALUES (?, ?)", rows)

    def get(self, n: int) -> bytes | None:
        row = self.spill.execute(f"SELECT data FROM {self._name} WHERE n = ?", (n,)).fetchone()
        if row is not None:
            return bytes(row[0])
        return self.base.get(n) if self.base is not None else None

    def layer(self) -> Pages:
        """A new layer over this one (which must then stay as it is)."""
        return Pages(self.spill, self)


class Keys:
    """Exact byte keys → the first item given with them; a layer reads through to its base."""

    def __init__(self, spill: SpillFile, base: Keys | None) -> None:
        self.spill = spill
        self.base = base
        self._name = spill.table("key BLOB PRIMARY KEY, item INTEGER NOT NULL", "WITHOUT ROWID")

    def add_many(self, rows: Iterable[tuple[bytes, int]]) -> None:
        """Rows in item order; a key already present keeps its (earlier) item."""
        self.spill.executemany(f"INSERT OR IGNORE INTO {self._name} VALUES (?, ?)", rows)

    def find(self, key: bytes) -> int:
        if self.base is not None:
            found = self.base.find(key)
            if found >= 0:
                return found  # the base's items come first
        row = self.spill.execute(f"SELECT item FROM {self._name} WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row is not None else -1

    def layer(self) -> Keys:
        return Keys(self.spill, self)


class ArraySpill:
    """Arrays of integers in one ``SpillFile``, opened at the first array (``core.fold.Spill``:
    the projection fold of a long log moves there past ``core.fold.SPILL_AT`` seqs)."""

    def __init__(self, purpose: str, cache_kib: int = CACHE_KIB) -> None:
        self._purpose = purpose
        self._cache_kib = cache_kib
        self._file: SpillFile | None = None

    def file(self) -> SpillFile:
        """The spill file, opened at the first call."""
        if self._file is None:
            self._file = SpillFile(self._purpose, self._cache_kib)
        return self._file

    def array(self, typecode: str, items: Iterable[int] = ()) -> SpilledArray:
        made = SpilledArray(typecode, self.file().pages())
        made.extend(items)
        return made


class SpilledArray(ItemsEqual[int]):
    """An ``array`` of integers (``typecode``) paged to ``pages``: the last ``CACHED_PAGES``
    pages used stay in memory. A page never written reads as zeros (``zeros``). ``sorted``:
    the values only grow, and each page's first value is kept so ``bisect_left`` reads one page."""

    def __init__(self, typecode: str, pages: Pages, items: Iterable[int] = (), sorted: bool = False) -> None:
        self._type = typecode
        self._pages = pages
        self._len = 0
        self._cache: OrderedDict[int, array[int]] = OrderedDict()
        self._dirty: set[int] = set()
        self._hot_n, self._hot = -1, array(typecode)  # the page used last
        self._firsts: array[int] | None = array("q") if sorted else None
        for value in items:
            self.append(value)

    @classmethod
    def zeros(cls, typecode: str, pages: Pages, length: int) -> SpilledArray:
        made = cls(typecode, pages)
        made._len = length
        return made

    def __len__(self) -> int:
        return self._len

    def _page(self, n: int) -> array[int]:
        """Page ``n``, now the most recently used (``_hot``: it cannot be evicted before the next)."""
        if n == self._hot_n:
            return self._hot
        cache = self._cache
        page = cache.get(n)
        if page is not None:
            cache.move_to_end(n)
        else:
            page = array(self._type)
            data = self._pages.get(n)
            page.frombytes(
                data if data is not None else bytes(min(PAGE, self._len - n * PAGE) * page.itemsize)
            )
            cache[n] = page
            if len(cache) > CACHED_PAGES:
                old, evicted = cache.popitem(last=False)
                if old in self._dirty:
                    self._dirty.discard(old)
                    self._pages.put(old, evicted.tobytes())
        self._hot_n, self._hot = n, page
        return page

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("SpilledArray index out of range")
        n = i // PAGE
        return (self._hot if n == self._hot_n else self._page(n))[i - n * PAGE]

    def __setitem__(self, i: int, value: int) -> None:
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("SpilledArray index out of range")
        n = i // PAGE
        (self._hot if n == self._hot_n else self._page(n))[i - n * PAGE] = value
        self._dirty.add(n)
        if self._firsts is not None and i == n * PAGE:
            self._firsts[n] = value

    def append(self, value: int) -> None:
        n = self._len // PAGE
        (self._hot if n == self._hot_n else self._page(n)).append(value)
        self._dirty.add(n)
        if self._firsts is not None and self._len == n * PAGE:
            self._firsts.append(value)
        self._len += 1

    def extend(self, items: Iterable[int]) -> None:
        """``append`` of each item, a page at a time."""
        values = iter(items)
        while True:
            n = self._len // PAGE
            chunk = array(self._type, islice(values, PAGE - (self._len - n * PAGE)))
            if not chunk:
                return
            page = self._hot if n == self._hot_n else self._page(n)
            if self._firsts is not None and self._len == n * PAGE:
                self._firsts.append(chunk[0])
            page.extend(chunk)
            self._dirty.add(n)
            self._len += len(chunk)

    def pad(self, length: int, value: int) -> None:
        """Grow to ``length`` items with ``value`` (nothing when already that long)."""
        if length - self._len == 1:
            self.append(value)
        elif length > self._len:
            self.extend(repeat(value, length - self._len))

    def __iter__(self) -> Iterator[int]:
        for n in range((self._len + PAGE - 1) // PAGE):
            yield from self._page(n).tolist()

    def __reversed__(self) -> Iterator[int]:
        for n in range((self._len + PAGE - 1) // PAGE - 1, -1, -1):
            yield from reversed(self._page(n).tolist())

    def __repr__(self) -> str:
        return f"SpilledArray({self._type!r}, {self._len} items)"

    def bisect_left(self, value: int) -> int:
        """``bisect.bisect_left`` of a ``sorted`` array."""
        assert self._firsts is not None, "bisect_left needs sorted=True"
        page = bisect_left(self._firsts, value)
        if page == 0:
            return 0
        return (page - 1) * PAGE + bisect_left(self._page(page - 1), value)

    def reverse(self) -> None:
        i, j = 0, self._len - 1
        while i < j:
            self[i], self[j] = self[j], self[i]
            i, j = i + 1, j - 1

    def copy(self) -> SpilledArray:
        """An independent copy: the pages so far are frozen and shared, each side's later
        writes go to a layer of its own."""
        for n in sorted(self._dirty):
            self._pages.put(n, self._cache[n].tobytes())
        self._dirty.clear()
        frozen = self._pages
        self._pages = frozen.layer()
        twin = SpilledArray(self._type, frozen.layer())
        twin._len = self._len
        twin._firsts = array("q", self._firsts) if self._firsts is not None else None
        twin._cache = OrderedDict((n, array(self._type, page)) for n, page in self._cache.items())
        self._hot_n = twin._hot_n = -1
        return twin


class OrderedRows(SpilledTable):
    """A ``dict`` of str keys and any values in a table of a ``SpillFile``, in insertion order
    with a dict's semantics (a key set again keeps its place; ``del`` and ``pop`` remove it):
    values are pickled (any Python value comes back equal), keys kept as their UTF-8 bytes
    (surrogates passed through). ``core.scan_state.CallSpill``: a mini-agent log's waiting
    calls past ``core.scan_state.CALLS_SPILL_AT``."""

    _SLICE = 1024  # rows read back per statement ...
    _PAGE_BYTES = 1 << 20  # ... and at most this many bytes of their keys and values (or one row)

    def __init__(self, spill: SpillFile, items: Iterable[tuple[str, Any]] = ()) -> None:
        self._spill = spill
        self._name = spill.table("n INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, value BLOB NOT NULL")
        self._next = 0
        self._count = 0
        for key, value in items:
            self[key] = value

    _key = staticmethod(text_key)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        row = self._spill.execute(f"SELECT 1 FROM {self._name} WHERE key = ?", (self._key(key),)).fetchone()
        return row is not None

    def __getitem__(self, key: str) -> Any:
        if isinstance(key, str):
            found = self._spill.execute(
                f"SELECT value FROM {self._name} WHERE key = ?", (self._key(key),)
            ).fetchone()
            if found is not None:
                return pickle.loads(found[0])
        raise KeyError(key)

    def __setitem__(self, key: str, value: Any) -> None:
        blob = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        cursor = self._spill.execute(
            f"INSERT OR IGNORE INTO {self._name} VALUES (?, ?, ?)", (self._next, self._key(key), blob)
        )
        if cursor.rowcount:
            self._next += 1
            self._count += 1
        else:  # set again: keeps its place
            self._spill.execute(f"UPDATE {self._name} SET value = ? WHERE key = ?", (blob, self._key(key)))

    def __delitem__(self, key: str) -> None:
        if isinstance(key, str):
            cursor = self._spill.execute(f"DELETE FROM {self._name} WHERE key = ?", (self._key(key),))
            if cursor.rowcount:
                self._count -= 1
                return
        raise KeyError(key)

    def last(self) -> tuple[str, Any] | None:
        """(key, value) of the key set first most recently (None when the table is empty)."""
        row = self._spill.execute(f"SELECT key, value FROM {self._name} ORDER BY n DESC LIMIT 1").fetchone()
        return (key_text(row[0]), pickle.loads(row[1])) if row else None

    def popitem(self) -> tuple[str, Any]:
        """Remove and answer ``last()``, as ``dict.popitem`` does (KeyError when empty)."""
        found = self.last()
        if found is None:
            raise KeyError("popitem(): the table is empty")
        del self[found[0]]
        return found

    def _rows(self) -> Iterator[tuple[str, Any]]:
        """The rows in order, a page at a time: at most ``_SLICE`` rows and ``_PAGE_BYTES`` of
        their keys and values (or one row, however long): a key or a value is as long as the log
        chose it (``paging.sized_page``)."""

        def page(last: int) -> list[Any]:
            size, most = "length(key) + length(value)", self._PAGE_BYTES
            return sized_page(self._spill, self._name, "n, key, value", size, last, self._SLICE, most)

        for _, key, value in paged(page, -1):
            yield key_text(key), pickle.loads(value)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._rows())

    def items(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        """(key, value) in insertion order, read back a page at a time (``_rows``)."""
        return self._rows()

    def values(self) -> Iterator[Any]:  # type: ignore[override]
        return (value for _, value in self._rows())

    def drop(self) -> None:
        """Remove the table from its file (the rows are gone; the object is empty and unusable)."""
        self._spill.execute(f"DROP TABLE {self._name}")
        self._count = 0

    def copy(self) -> OrderedRows:
        """An independent copy (a new table in the same file, filled by SQLite: nothing held)."""
        twin = OrderedRows(self._spill)
        self._spill.execute(f"INSERT INTO {twin._name} SELECT * FROM {self._name}")
        twin._next, twin._count = self._next, self._count
        return twin

    def __repr__(self) -> str:
        return f"OrderedRows({self._count} rows)"
