"""A read-back sequence compared by its items (what a spilled array and the spilled waiting calls
share with the tuples they stand for)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

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
