"""derive's second pass (issue 14): the surface records read back by address, in surface order.

The scan keeps the plaintext offset of each current surface node's line
(``ScanOptions.message_addresses``) instead of its message. Here the log is read again in file
order; a record whose offset is wanted is yielded when it is the next one in surface order, and
held in a ``store.spool.LineSpool`` (memory-bounded, then a temporary file) when a replacement
put it after records still to come. Memory: the largest line and the spool's bound — never the
messages; the wanted offsets are the scan's array (in its spill file past ``core.fold.SPILL_AT``
seqs), and their sort out of file order is in memory only up to ``SORT_AT`` of them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, overload

from sesstool.core.errors import InputError
from sesstool.store.spool import LineSpool

if TYPE_CHECKING:
    from sesstool.store.spill_sort import SpilledOrder

SORT_AT = 1 << 15  # wanted offsets out of file order sorted in memory; past them in a spill file


class Unescaped(Sequence[int]):
    """The offsets of ``kept`` with a ``-1 - offset`` (a message orjson cannot encode: the
    scanner's ``keep_line_offsets``) read as ``offset``, without a copy."""

    def __init__(self, kept: Sequence[int]) -> None:
        self._kept = kept

    def __len__(self) -> int:
        return len(self._kept)

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return [a if a >= 0 else -1 - a for a in self._kept[i]]
        a = self._kept[i]
        return a if a >= 0 else -1 - a

    def __iter__(self) -> Iterator[int]:
        return (a if a >= 0 else -1 - a for a in self._kept)


def numbered_lines(lines: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """(offset, line without its newline) of lines that each end in a newline, from offset 0."""
    offset = 0
    for line in lines:
        yield offset, line[:-1]
        offset += len(line)


def _in_file_order(lines: Iterable[tuple[int, bytes]], order: Sequence[int], where: str) -> Iterator[bytes]:
    """``in_surface_order`` when surface order is file order: nothing waits, nothing is sorted."""
    k, n = 0, len(order)
    for offset, line in lines:
        if offset != order[k]:
            if offset > order[k]:
                break  # the wanted line is gone: the file changed
            continue
        yield line
        k += 1
        if k == n:
            return
    raise InputError(f"{where}: the log changed while derive read it back ({n - k} record(s) missing)")


def in_surface_order(lines: Iterable[tuple[int, bytes]], order: Sequence[int], where: str) -> Iterator[bytes]:
    """The lines at the offsets ``order`` (surface order), taken from ``lines`` (file order).

    Up to ``SORT_AT`` offsets out of file order, they are sorted in memory and the lines that
    come before their turn wait in a ``LineSpool``; past it both go to a spill file
    (``store.spill_sort.SpilledOrder``: an external sort, the waiting lines keyed by position)."""
    n = len(order)
    if n == 0:
        return
    if all(a < b for a, b in pairwise(order)):  # never replaced out of file order
        yield from _in_file_order(lines, order, where)
        return
    spool: LineSpool | SpilledOrder
    if n > SORT_AT:
        from sesstool.store.spill_sort import SpilledOrder  # sqlite3: only when needed

        spool = SpilledOrder("derive's read-back of a log replaced out of file order")
        wanted = spool.sorted_pairs(order)
    else:
        by_offset = sorted(range(n), key=order.__getitem__)
        offsets = array("q", (order[i] for i in by_offset))
        positions = array("q", by_offset)
        del by_offset
        wanted = zip(offsets, positions, strict=True)
        spool = LineSpool()
    try:
        yield from _reordered(lines, wanted, spool, n, where)
    finally:
        spool.close()


def _reordered(
    lines: Iterable[tuple[int, bytes]],
    wanted: Iterator[tuple[int, int]],
    spool: LineSpool | SpilledOrder,
    n: int,
    where: str,
) -> Iterator[bytes]:
    """``wanted``: (offset, surface position) of the ``n`` wanted lines, by offset."""
    k = nxt = 0
    at, i = next(wanted)
    for offset, line in lines:
        if offset != at:
            if offset > at:
                break  # the wanted line is gone: the file changed
            continue
        k += 1
        if i != nxt:
            spool.put(i, line)
        else:
            yield line
            nxt += 1
            while (held := spool.take(nxt)) is not None:
                yield held
                nxt += 1
        if k == n:
            break
        at, i = next(wanted)
    if nxt != n:
        missing = n - nxt
        raise InputError(f"{where}: the log changed while derive read it back ({missing} record(s) missing)")
