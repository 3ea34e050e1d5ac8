"""The records a repair or fork appends, made lazily (issue 11 item 1): ``Closers``.

A log may hold any number of calls waiting for their result, each answered by one closer. The
scans keep those calls in a spill file past a threshold (``core.scan_state``, Codex
``dialects.codex.waiting``), so the closers are not held either: a ``Closers`` knows its length
and makes its records again, one at a time, every time it is walked, from the scan's (maybe
spilled) pending calls. The consumers — repair's check, write and read-back, fork's writer,
inspect's and the write commands' views, migrate ``--repair`` — only iterate it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import chain, islice
from typing import Any, TypeVar

from sesstool.core.jsonline import encodable
from sesstool.core.sequences import WalkedIndex

T = TypeVar("T")
U = TypeVar("U")


class Closers(WalkedIndex[T]):
    """A re-iterable sequence of ``length`` items that ``make()`` produces anew on each walk
    (in the same order, equal each time). Equal to a list or tuple of the same items; indexing
    walks (``closers[0]``, ``closers[-1]``: for tests and a page's first few, not a loop)."""

    __slots__ = ("_length", "_make")
    _what = "closer index"

    def __init__(self, make: Callable[[], Iterable[T]], length: int) -> None:
        self._make = make
        self._length = length

    @classmethod
    def of(cls, items: Collection[T]) -> Closers[T]:
        """A collection already at hand (a list or tuple, or another ``Closers``)."""
        return cls(lambda: items, len(items))

    @classmethod
    def joined(cls, *parts: Collection[T]) -> Closers[T]:
        """The parts one after the other (a fork's marker, then its closers)."""
        return cls(lambda: chain.from_iterable(parts), sum(map(len, parts)))

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[T]:
        return iter(self._make())

    def __repr__(self) -> str:
        return f"Closers({len(self)} records)"

    def mapped(self, then: Callable[[T], U]) -> Closers[U]:
        """The same records, each made into ``then(record)`` as it is walked."""
        return Closers(lambda: map(then, self), len(self))


def swapped(value: Any, token: str, arrays: list[Collection[Any]]) -> Any:
    """``value`` (a JSON value) with each ``Closers`` in it (in a dict or a list, at any depth)
    replaced by the placeholder string ``TOKEN-N``, the ``Closers`` appended to ``arrays``.
    What holds no ``Closers`` is shared, not copied (a document quoting a log's wide header
    would otherwise hold a second list of its members); a dict or list that holds one is a new
    one (a tuple becomes a list)."""
    if isinstance(value, Closers):
        arrays.append(value)
        return f"{token}-{len(arrays) - 1}"
    if isinstance(value, dict):
        if not (changed := _changed(value.items(), token, arrays)):
            return value
        made = dict(value)
        made.update(changed)
        return made
    if isinstance(value, list | tuple):
        if not (changed := _changed(enumerate(value), token, arrays)):
            return value
        items = list(value)
        for i, new in changed:
            items[i] = new
        return items
    return value


def _changed(
    pairs: Iterable[tuple[Any, Any]], token: str, arrays: list[Collection[Any]]
) -> list[tuple[Any, Any]]:
    """(key or index, its swapped value) for each member that ``swapped`` changes."""
    return [(key, new) for key, item in pairs if (new := swapped(item, token, arrays)) is not item]


def walked(value: Any) -> None:
    """Walk every ``Closers`` in ``value`` (a JSON value), holding nothing: what a redactor
    mapped onto it meets every member, in order (``core.redact``)."""
    if isinstance(value, Closers | list | tuple):
        for item in value:
            walked(item)
    elif isinstance(value, dict):
        for item in value.values():
            walked(item)


def walked_encodable(value: Any) -> bool:
    """``jsonline.encodable`` of ``value`` with each ``Closers`` in it as a list, one member at a
    time (nothing held)."""
    arrays: list[Collection[Any]] = []
    if not encodable(swapped(value, "walked", arrays)):
        return False
    return all(walked_encodable(member) for array in arrays for member in array)


def ends(items: Collection[T], keep: int) -> tuple[tuple[T, ...], tuple[T, ...]]:
    """The first ``keep`` items and the last ``keep`` (all of them in the first part when there
    are at most ``2 * keep``; then the second is empty), in one walk holding ``2 * keep``."""
    if len(items) <= 2 * keep:
        return tuple(items), ()
    walk = iter(items)
    first = tuple(islice(walk, keep))
    return first, tuple(deque(walk, maxlen=keep))


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last may be shorter; none when there are no items)."""
    walk = iter(items)
    while batch := list(islice(walk, size)):
        yield batch


def joined(lines: Iterable[bytes], size: int) -> Iterator[bytes]:
    """``lines`` joined into pieces of about ``size`` bytes (few writes, bounded memory)."""
    held: list[bytes] = []
    length = 0
    for line in lines:
        held.append(line)
        length += len(line)
        if length >= size:
            yield b"".join(held)
            held, length = [], 0
    if held:
        yield b"".join(held)
