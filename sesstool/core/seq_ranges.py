"""Range-encoded ``sourceEventSeqs`` (spec §9.4): elements are seqs or inclusive [start, end] pairs.

Validation works on the ranges themselves (order, overlap, bounds), never on their expansion:
a line of 10,000 overlapping ``[0, 8610]`` pairs costs as much as its own elements, not 86M
ints. ``SeqSet`` answers membership by bisection; ``expand`` exists for the upgrade chain and is
bounded by the event's own seq (the ranges are disjoint and below it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from sesstool.core.humanize import chosen_repr

_INT_ONLY = {int}


class SeqRangeError(Exception):
    pass


class SeqSet:
    """A set of seqs as sorted, disjoint inclusive ranges (``starts[i]..ends[i]``)."""

    __slots__ = ("ends", "starts")

    def __init__(self, starts: list[int], ends: list[int]) -> None:
        self.starts = starts
        self.ends = ends

    def __contains__(self, seq: object) -> bool:
        if type(seq) is not int:
            return False
        i = bisect_right(self.starts, seq) - 1
        return i >= 0 and seq <= self.ends[i]

    def __len__(self) -> int:
        return sum(e - s for s, e in zip(self.starts, self.ends, strict=True)) + len(self.starts)

    def __iter__(self) -> Iterator[int]:
        for s, e in zip(self.starts, self.ends, strict=True):
            yield from range(s, e + 1)

    def is_single(self, seq: int) -> bool:
        return self.starts == [seq] and self.ends == [seq]


def decode_seq_set(value: object, own_seq: int, allow_empty: bool, allow_ranges: bool = True) -> SeqSet:
    """Validate without expanding; raise SeqRangeError with the reason (§3, §9.4). v0 readers
    (the published rc.8 packages) accept no range encoding: ``allow_ranges=False``.

    Memory is a small multiple of the line's own elements, whatever the ranges span.
    """
    if not isinstance(value, list):
        raise SeqRangeError("sourceEventSeqs is not an array")
    if not value:
        if allow_empty:
            return SeqSet([], [])
        raise SeqRangeError("sourceEventSeqs is empty")
    if set(map(type, value)) == _INT_ONLY:
        # the common unencoded form (bools are not ints here): any order, no repeats
        ordered = sorted(value)
        if ordered[0] < 0:
            raise SeqRangeError("sourceEventSeqs holds a negative seq")
        if ordered[-1] >= own_seq:
            raise SeqRangeError(f"sourceEventSeqs cites a seq not below the event's own seq {own_seq}")
        if len(set(ordered)) != len(ordered):  # C-level: no per-element Python step
            raise SeqRangeError("sourceEventSeqs repeats a seq")
        return SeqSet(ordered, ordered)
    starts: list[int] = []
    ends: list[int] = []
    increasing = True
    for v in value:
        if type(v) is int:
            start = end = v
        elif not allow_ranges and isinstance(v, list):
            raise SeqRangeError(
                "sourceEventSeqs must densely contain non-negative safe integers (a v0 reader "
                "knows no [start, end] ranges)"
            )
        elif isinstance(v, list) and len(v) == 2 and type(v[0]) is int and type(v[1]) is int:
            start, end = v
            if start > end:
                raise SeqRangeError(f"range [{start}, {end}] runs backwards")
            if end - start > own_seq:
                raise SeqRangeError(f"range [{start}, {end}] reaches past the event")
        else:
            raise SeqRangeError(f"element {chosen_repr(v)} is neither a seq nor a [start, end] pair")
        if ends and start <= ends[-1]:
            # order and overlap are judged on the elements, never on their expansion
            increasing = False
        starts.append(start)
        ends.append(end)
    # the same refusals, in the same order, as judging the expanded list would give
    if not increasing:
        raise SeqRangeError("range-encoded sourceEventSeqs must be strictly increasing")
    if min(starts) < 0:
        raise SeqRangeError("sourceEventSeqs holds a negative seq")
    if max(ends) >= own_seq:
        raise SeqRangeError(f"sourceEventSeqs cites a seq not below the event's own seq {own_seq}")
    return SeqSet(starts, ends)


def decode_seqs(value: object, own_seq: int, allow_empty: bool, allow_ranges: bool = True) -> list[int]:
    """The expanded list (for the upgrade chain, which rewrites seqs one by one). Validated first,
    so its length is at most ``own_seq``; an unencoded list keeps its order."""
    seqs = decode_seq_set(value, own_seq, allow_empty, allow_ranges)
    if isinstance(value, list) and set(map(type, value)) == _INT_ONLY:
        return value
    return list(seqs)
