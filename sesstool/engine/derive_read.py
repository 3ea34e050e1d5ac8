"""derive's second pass (issue 14): the surface records read back by address, in surface order.

The scan keeps the plaintext offset of each current surface node's line
(``ScanOptions.message_addresses``) instead of its message. Here the log is read again in file
order; a record whose offset is wanted is yielded when it is the next one in surface order, and
held in a ``store.spool.LineSpool`` (memory-bounded, then a temporary file) when a replacement
put it after records still to come. Memory: the wanted offsets (one machine word each), the
largest line, and the spool's bound — never the messages.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence

from sesstool.core.errors import InputError
from sesstool.store.spool import LineSpool


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
    """The lines at the offsets ``order`` (surface order), taken from ``lines`` (file order)."""
    n = len(order)
    if n == 0:
        return
    if all(order[i] < order[i + 1] for i in range(n - 1)):  # never replaced out of file order
        yield from _in_file_order(lines, order, where)
        return
    by_offset = sorted(range(n), key=order.__getitem__)
    offsets = array("q", (order[i] for i in by_offset))
    positions = array("q", by_offset)
    del by_offset
    spool = LineSpool()
    k = nxt = 0
    try:
        for offset, line in lines:
            if offset != offsets[k]:
                if offset > offsets[k]:
                    break  # the wanted line is gone: the file changed
                continue
            i = positions[k]
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
        if nxt != n:
            missing = n - nxt
            raise InputError(
                f"{where}: the log changed while derive read it back ({missing} record(s) missing)"
            )
    finally:
        spool.close()
