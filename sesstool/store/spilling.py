"""A ``dict`` that moves to a spill file past a threshold (issue 11 item 1): ``SpillingRows``.

What only hostile input makes long — calls waiting for their result, turns never ended, parents
named by no entry — is held as an ordered ``dict`` of str keys while it is short, and past
``limits()`` (a count of keys, and optionally a number of bytes: each key's length plus
``size(value)``; a key is as long as the log chose it, so it counts as a value does) moved, in
order, to a ``store.spill.OrderedRows`` table of the file ``open_file()`` gives. From then on it
lives there: memory no longer grows with it. Python's dict semantics are kept exactly
on both sides (a key set again keeps its place and takes the later value; ``pop`` removes it;
``popitem`` removes the key set first most recently), so what a scan reports is the same whether
or not it spilled (the differential tests of each user force the move at 0, 1 and 5 items).

``limits`` is called at every insertion, so a caller's module constants (which the tests lower)
are read when they are used. ``store.spill`` (and sqlite3 with it) is imported only at the move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from sesstool.store.spill import OrderedRows, SpillFile

_NO_SIZE = 1 << 62  # a byte limit never reached


class SpillingRows:
    """An ordered ``dict`` of str keys: in memory up to ``limits()`` = (keys, bytes), then an
    ``OrderedRows`` table of ``open_file()``. The bytes are the keys' lengths plus ``size`` of
    each value (``size`` None: the keys' alone)."""

    __slots__ = ("_bytes", "_held", "_limits", "_open", "_rows", "_size")

    def __init__(
        self,
        open_file: Callable[[], SpillFile],
        limits: Callable[[], tuple[int, int | None]],
        size: Callable[[Any], int] | None = None,
    ) -> None:
        self._open = open_file
        self._limits = limits
        self._size = size
        self._held: dict[str, Any] = {}
        self._bytes = 0
        self._rows: OrderedRows | None = None

    @property
    def spilled(self) -> bool:
        return self._rows is not None

    def __len__(self) -> int:
        return len(self._rows) if self._rows is not None else len(self._held)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __contains__(self, key: object) -> bool:
        return key in (self._rows if self._rows is not None else self._held)

    def __getitem__(self, key: str) -> Any:
        return self._rows[key] if self._rows is not None else self._held[key]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: str, value: Any) -> None:
        if self._rows is not None:
            self._rows[key] = value
            return
        held = self._held
        if key in held:  # a value set again gives back its size (None included)
            self._bytes -= self._weight(key, held[key])
        self._bytes += self._weight(key, value)
        held[key] = value
        at, most = self._limits()
        if len(held) > at or self._bytes > (_NO_SIZE if most is None else most):
            self._move()

    def _weight(self, key: str, value: Any) -> int:
        """What ``key`` and its ``value`` count toward the byte limit."""
        return len(key) + (self._size(value) if self._size is not None else 0)

    def _move(self) -> None:
        from sesstool.store.spill import OrderedRows  # sqlite3: only when something grew this long

        self._rows = OrderedRows(self._open(), self._held.items())
        self._held, self._bytes = {}, 0

    def pop(self, key: str, default: Any = None) -> Any:
        """Remove ``key`` and answer its value (``default`` when it is not there)."""
        if self._rows is not None:
            return self._rows.pop(key, default)
        if key not in self._held:
            return default
        value = self._held.pop(key)
        self._bytes -= self._weight(key, value)
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and answer the (key, value) set first most recently (KeyError when empty)."""
        if self._rows is not None:
            return self._rows.popitem()
        key, value = self._held.popitem()
        self._bytes -= self._weight(key, value)
        return key, value

    def last(self) -> tuple[str, Any] | None:
        """The (key, value) ``popitem`` would remove (None when empty)."""
        if self._rows is not None:
            return self._rows.last()
        return next(reversed(self._held.items()), None)

    def items(self) -> Iterator[tuple[str, Any]]:
        """(key, value) in insertion order: a snapshot in memory, read back a slice at a time
        when spilled (changes made while walking are not seen either way)."""
        if self._rows is not None:
            return self._rows.items()
        return iter(list(self._held.items()))

    def values(self) -> Iterator[Any]:
        return (value for _, value in self.items())

    def clear(self) -> None:
        """Forget every key (a spilled table is dropped from its file)."""
        if self._rows is not None:
            self._rows.drop()
        self._held, self._bytes, self._rows = {}, 0, None

    def copy(self) -> Self:
        """An independent copy (a spilled table copied inside its file by SQLite: nothing held)."""
        twin = object.__new__(type(self))
        twin._open, twin._limits, twin._size = self._open, self._limits, self._size
        twin._held, twin._bytes, twin._rows = {}, 0, None
        if self._rows is not None:
            twin._rows = self._rows.copy()
        else:
            twin._held, twin._bytes = dict(self._held), self._bytes
        return twin

    def __repr__(self) -> str:
        return f"SpillingRows({len(self)} rows{', spilled' if self._rows is not None else ''})"
