"""The calls of a rollout still waiting for their output, in the order they were made (issue 11
item 1, second round).

Per waiting call the scanner keeps a small record — what a closer and ``inspect`` show of it:
the item type, name, arguments, the item's own id, where its line is and the turn it was made
in — never the item itself. A rollout whose calls are never answered holds one record per call:
past ``SPILL_AT`` records, or ``SPILL_BYTES`` of their text, the records move to a table of a
spill file (``store.spilling.SpillingRows``: store/spill.py is opened and imported only then),
keyed by the call id, in the order the calls were made, so that memory no longer grows with them. Python's
dict semantics are kept exactly: a call id made again keeps its place and takes the later
record; an output removes its call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import orjson

from sesstool.core.sequences import ItemsEqual
from sesstool.store.spilling import SpillingRows

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

SPILL_AT = 1 << 14  # waiting calls held in memory; past them the records move to a spill file
SPILL_BYTES = 8 << 20  # ... or past this much text (arguments, names, ids) in them

# kind, name, arguments, item id, plaintext offset of the call's line, line number, turn id
Record = tuple[str, "str | None", "str | None", "str | None", int, int, "str | None"]
T = TypeVar("T")
U = TypeVar("U")


def _limits() -> tuple[int, int]:
    return SPILL_AT, SPILL_BYTES  # read when used (the tests lower them)


def _open_file() -> SpillFile:
    from sesstool.store.spill import SpillFile  # sqlite3: only a rollout of many waiting calls needs it

    return SpillFile("a rollout's calls waiting for their output")


def _size(record: Record) -> int:
    return 64 + sum(len(x) for x in (record[1], record[2], record[3]) if x is not None)


class Waiting:
    """call id -> its ``Record``, in the order the calls were made (dict semantics), on
    ``store.spilling.SpillingRows``."""

    def __init__(self) -> None:
        self._rows = SpillingRows(_open_file, _limits, _size)

    @property
    def spilled(self) -> bool:
        return self._rows.spilled

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, call_id: str, record: Record) -> None:
        """``calls[call_id] = record`` (made again: keeps its place, takes the later record)."""
        self._rows[call_id] = record

    def pop(self, call_id: str) -> bool:
        """Remove ``call_id``'s call; answers whether it was waiting."""
        return self._rows.pop(call_id) is not None

    def drop(self) -> None:
        """Forget every call (its table goes from the spill file)."""
        self._rows.clear()

    def copy(self) -> Waiting:
        twin = Waiting()
        twin._rows = self._rows.copy()
        return twin

    def items(self) -> Iterator[tuple[str, Record]]:
        """(call id, record) in the order the calls were made."""
        return self._rows.items()

    def view(self, make: Callable[[str, Record], T]) -> tuple[T, ...] | SpilledCalls[T]:
        """The calls as ``make(call id, record)`` each: a tuple while they are in memory, else a
        sequence that reads them back from the spill file whenever it is walked."""
        if not self._rows.spilled:
            return tuple(make(cid, record) for cid, record in self._rows.items())
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
