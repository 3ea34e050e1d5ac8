"""Range-encoded ``sourceEventSeqs`` (spec §9.4): elements are seqs or inclusive [start, end] pairs."""

from __future__ import annotations

from itertools import pairwise

_INT_ONLY = {int}


class SeqRangeError(Exception):
    pass


def decode_seqs(value: object, own_seq: int, allow_empty: bool, allow_ranges: bool = True) -> list[int]:
    """Expand and validate; raise SeqRangeError with the reason (§3, §9.4). v0 readers (the
    published rc.8 packages) accept no range encoding: ``allow_ranges=False``."""
    if not isinstance(value, list):
        raise SeqRangeError("sourceEventSeqs is not an array")
    if not value:
        if allow_empty:
            return []
        raise SeqRangeError("sourceEventSeqs is empty")
    out: list[int]
    if set(map(type, value)) == _INT_ONLY:
        out = value  # fast path: the common unencoded form (bools are not ints here)
    else:
        # the slow path: an element that is not a plain int, so a range (or a refusal below)
        out = []
        for v in value:
            if type(v) is int:
                out.append(v)
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
                out.extend(range(start, end + 1))
            else:
                raise SeqRangeError(f"element {v!r} is neither a seq nor a [start, end] pair")
        if any(b <= a for a, b in pairwise(out)):
            raise SeqRangeError("range-encoded sourceEventSeqs must be strictly increasing")
    if min(out) < 0:
        raise SeqRangeError("sourceEventSeqs holds a negative seq")
    if max(out) >= own_seq:
        raise SeqRangeError(f"sourceEventSeqs cites a seq not below the event's own seq {own_seq}")
    if len(set(out)) != len(out):
        raise SeqRangeError("sourceEventSeqs repeats a seq")
    return out
