"""The calls of a rollout still waiting for their output, in the order they were made (issue 11
item 1, second round).

Per waiting call the scanner keeps a small record — what a closer and ``inspect`` show of it:
the item type, name, arguments, the item's own id, where its line is and the turn it was made
in — never the item itself. A rollout whose calls are never answered holds one record per call:
past ``SPILL_AT`` records, or ``SPILL_BYTES`` of their text, the records move to a table of a
spill file (store/spill.py, opened and imported only then), keyed by the call id's exact bytes,
numbered in the order the calls were made, so that memory no longer grows with them. Python's
dict semantics are kept exactly: a call id made again keeps its place and takes the later
record; an output removes its call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import orjson

from sesstool.core.sequences import ItemsEqual

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

SPILL_AT = 1 << 14  # waiting calls held in memory; past them the records move to a spill file
SPILL_BYTES = 8 << 20  # ... or past this much text (arguments, names, ids) in them
_SLICE = 1024  # records read back per statement

# kind, name, arguments, item id, plaintext offset of the call's line, line number, turn id
Record = tuple[str, "str | None", "str | None", "str | None", int, int, "str | None"]
T = TypeVar("T")
U = TypeVar("U")


def _size(record: Record) -> int:
    return 64 + sum(len(x) for x in (record[1], record[2], record[3]) if x is not None)


class Waiting:
    """call id -> its ``Record``, in the order the calls were made (dict semantics)."""

    def __init__(self) -> None:
        self._held: dict[str, Record] = {}
        self._bytes = 0
        self._file: SpillFile | None = None
        self._table = ""
        self._next = 0  # the number the next spilled call takes
        self._count = 0

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def __len__(self) -> int:
        return self._count if self._file is not None else len(self._held)

    def add(self, call_id: str, record: Record) -> None:
        if self._file is None:
            old = self._held.get(call_id)
            if old is not None:
                self._bytes -= _size(old)
            self._held[call_id] = record
            self._bytes += _size(record)
            if len(self._held) > SPILL_AT or self._bytes > SPILL_BYTES:
                self._move()
            return
        key, row = call_id.encode(), orjson.dumps(record)
        cursor = self._file.execute(
            f"INSERT OR IGNORE INTO {self._table} VALUES (?, ?, ?)", (self._next, key, row)
        )
        if cursor.rowcount:
            self._next += 1
            self._count += 1
        else:  # made again: keeps its place, takes the later record
            self._file.execute(f"UPDATE {self._table} SET row = ? WHERE id = ?", (row, key))

    def pop(self, call_id: str) -> bool:
        """Remove ``call_id``'s call; answers whether it was waiting."""
        if self._file is None:
            record = self._held.pop(call_id, None)
            if record is None:
                return False
            self._bytes -= _size(record)
            return True
        cursor = self._file.execute(f"DELETE FROM {self._table} WHERE id = ?", (call_id.encode(),))
        if cursor.rowcount:
            self._count -= 1
            return True
        return False

    def _open(self, spill: SpillFile) -> None:
        self._file = spill
        self._table = spill.table("n INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, row BLOB NOT NULL")

    def _move(self) -> None:
        from sesstool.store.spill import SpillFile  # sqlite3: only a rollout of many waiting calls needs it

        self._open(SpillFile("a rollout's calls waiting for their output"))
        assert self._file is not None
        rows = ((n, cid.encode(), orjson.dumps(rec)) for n, (cid, rec) in enumerate(self._held.items()))
        self._file.executemany(f"INSERT INTO {self._table} VALUES (?, ?, ?)", rows)
        self._next = self._count = len(self._held)
        self._held, self._bytes = {}, 0

    def drop(self) -> None:
        """Forget every call (its table goes from the spill file)."""
        if self._file is not None:
            self._file.execute(f"DROP TABLE {self._table}")
        self.__init__()  # type: ignore[misc]

    def copy(self) -> Waiting:
        twin = Waiting()
        if self._file is None:
            twin._held, twin._bytes = dict(self._held), self._bytes
            return twin
        twin._open(self._file)
        self._file.execute(f"INSERT INTO {twin._table} SELECT * FROM {self._table}")
        twin._next, twin._count = self._next, self._count
        return twin

    def items(self) -> Iterator[tuple[str, Record]]:
        """(call id, record) in the order the calls were made."""
        if self._file is None:
            yield from list(self._held.items())
            return
        last = -1
        while True:
            rows = self._file.execute(
                f"SELECT n, id, row FROM {self._table} WHERE n > ? ORDER BY n LIMIT {_SLICE}", (last,)
            ).fetchall()
            if not rows:
                return
            for _, key, row in rows:
                kind, name, arguments, item_id, offset, line, turn = orjson.loads(row)
                yield bytes(key).decode(), (kind, name, arguments, item_id, offset, line, turn)
            last = rows[-1][0]

    def view(self, make: Callable[[str, Record], T]) -> tuple[T, ...] | SpilledCalls[T]:
        """The calls as ``make(call id, record)`` each: a tuple while they are in memory, else a
        sequence that reads them back from the spill file whenever it is walked."""
        if self._file is None:
            return tuple(make(cid, record) for cid, record in self._held.items())
        return SpilledCalls(self, make)


class SpilledCalls(ItemsEqual[T]):
    """Waiting calls in the spill file, each made into a ``T`` as it is read (never all held).
    Equal to any sequence of the same items (a tuple of them, as the calls held in memory)."""

    def __init__(self, waiting: Waiting, make: Callable[[str, Record], T]) -> None:
        self._waiting = waiting.copy()  # frozen: the scanner's table goes on changing
        self._make = make

    def __len__(self) -> int:
        return len(self._waiting)

    def __iter__(self) -> Iterator[T]:
        make = self._make
        for cid, record in self._waiting.items():
            yield make(cid, record)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            wanted = range(len(self))[i]
            return tuple(x for n, x in enumerate(self) if n in wanted)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("waiting call index out of range")
        for n, x in enumerate(self):
            if n == i:
                return x
        raise IndexError("waiting call index out of range")  # pragma: no cover - len says so

    def __repr__(self) -> str:
        return f"SpilledCalls({len(self)} calls)"

    def mapped(self, then: Callable[[T], U]) -> SpilledCalls[U]:
        """The same calls, each then made into ``then(made)``."""
        make = self._make
        twin: SpilledCalls[U] = SpilledCalls.__new__(SpilledCalls)
        twin._waiting, twin._make = self._waiting, lambda cid, record: then(make(cid, record))
        return twin


def mapped(calls: Sequence[T], then: Callable[[T], U]) -> Sequence[U]:
    """``calls`` (a ``view``) each made into ``then(call)``: a tuple, or read back lazily."""
    if isinstance(calls, SpilledCalls):
        return calls.mapped(then)
    return tuple(then(call) for call in calls)


def record_of(item: dict[str, Any], offset: int, lineno: int, turn_id: str | None) -> Record:
    """The record of a call item (function_call / custom_tool_call / local_shell_call)."""
    kind = str(item.get("type"))
    if kind == "function_call":
        args = _text(item.get("arguments"))
    elif kind == "custom_tool_call":
        args = _text(item.get("input"))
    else:
        args = orjson.dumps(item.get("action")).decode()
    return (kind, _text(item.get("name")), args, _text(item.get("id")), offset, lineno, turn_id)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
