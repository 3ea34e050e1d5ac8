"""What only hostile input makes long in a transcript's scan and derivation (issue 11 item 1):
entries whose parent is named by no entry, calls waiting for their result, tool ids used twice,
results away from their call, what the end of the scan makes of them (the dangling calls, the
orphan results), and derive's pending tool ids, a reply's blocks, a span's items. Each is held in
memory up to ``HELD_AT`` items and ``HELD_BYTES`` bytes of them, then moved to the scan's (or the
derivation's) spill file and read back whenever it is walked, in the same order.

The containers are the store's (``store.spilling``, ``store.spilling_list``: generic, nothing of
Claude in them); this module binds them to the dialect's limits, read when used (the tests lower
them): ``HeldRows``, an ordered ``dict`` of str keys (past the threshold an ``OrderedRows``
table); ``HeldList``, an append-only list of picklable values (a ``Sequence`` equal to the tuple
it stands for), past its limits a numbered table read back a page at a time (``_PAGE_BYTES``,
``_SLICE``); ``HeldOrder``, rows of integers handed back sorted (the dangling calls and orphans
put in chain order); ``Store``, the one spill file they share, opened at the first to move.
(compactions.py holds a transcript's compactions in them.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from sesstool.store.spill import SpillFile
from sesstool.store.spilling import SpillingRows
from sesstool.store.spilling_list import Limits, SharedSpill, SpillingList, SpillingOrder, item_size

HELD_AT = 4096  # items in memory; past them a structure moves to the spill file
HELD_BYTES = 8 << 20  # ... or past this many bytes of them (a HeldRows' keys too): each as long as its line
_SLICE = 1024  # rows read back per statement
_PAGE_BYTES = 1 << 20  # at most this many bytes of a HeldList's items read back at once (or one item)

T = TypeVar("T")


def _limits() -> Limits:
    return Limits(HELD_AT, HELD_BYTES, _PAGE_BYTES, _SLICE)  # read when used (the tests lower them)


def _rows_limits() -> tuple[int, int]:
    return HELD_AT, HELD_BYTES


class Store(SharedSpill):
    """The scan's one spill file, opened at the first call (the graph, the tool book and these
    structures share it; a scanner's copy shares it too: each writes tables of its own)."""

    def __init__(self, purpose: str = "a large transcript's graph") -> None:
        super().__init__(lambda: SpillFile(purpose))  # ``purpose``: named if it cannot be made


class HeldRows(SpillingRows):
    """An ordered ``dict`` of str keys, moved to ``store()`` past ``HELD_AT`` keys or
    ``HELD_BYTES`` of keys and values (``item_size``): a key (a parent's uuid, a tool id) is as
    long as the log chose it."""

    __slots__ = ()

    def __init__(self, store: Store) -> None:
        super().__init__(store, _rows_limits, item_size)


class HeldList(SpillingList[T]):
    """An append-only list, moved to ``store()`` past ``HELD_AT`` items or ``HELD_BYTES`` of
    them (``store`` None: always in memory)."""

    def __init__(self, store: Store | None, items: Iterable[T] = ()) -> None:
        super().__init__(store, _limits, items)


class HeldOrder(SpillingOrder):
    """Rows of integers handed back sorted, moved to ``store()`` past ``HELD_AT`` rows."""

    def __init__(self, store: Store) -> None:
        super().__init__(store, _limits)
