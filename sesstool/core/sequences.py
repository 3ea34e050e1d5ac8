"""A read-back sequence compared by its items (what a spilled array and the spilled waiting calls
share with the tuples they stand for), and one indexed by walking it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any, TypeVar

T = TypeVar("T")


class ItemsEqual(Sequence[T]):
    """A ``Sequence`` equal to any other sequence of equal items in the same order (a tuple, a
    list, another of its kind; never a string), so a spilled state compares equal to the one held
    in memory; unhashable, as a list is."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class WalkedIndex(ItemsEqual[T]):
    """An ``ItemsEqual`` whose items are made as it is walked: ``seq[i]`` and ``seq[a:b]`` walk
    to them (for tests and a page's first few, not a loop); a negative step walks it all."""

    __slots__ = ()
    _what = "index"  # named in the IndexError

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            return tuple(islice(self, start, stop, step)) if step > 0 else tuple(self)[i]
        at = i + len(self) if i < 0 else i
        if not 0 <= at < len(self):
            raise IndexError(f"{self._what} out of range")
        return next(islice(self, at, None))
