"""``store.spilling_list.SpillingList`` (issue 11 item 1): an append-only list that moves to its
spill file past a count of items OR a number of bytes of them (an item is as long as the line it
came from, so a count alone held 4,096 lines of any length). Whatever the mix of sizes, it moves
exactly when a limit is first passed, once; never holds more than the byte budget plus the last
item; hands its items back exactly, in order, from any start, as a copy does; and reads a spilled
list back in pages of at most ``page_bytes`` (or one item) and ``page_rows``. ``paged`` (the
walk's and derive's index's keyset paging) reads every row once, whatever the page size."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.claude import held
from sesstool.store.spill import SpillFile
from sesstool.store.spilling_list import Limits, SharedSpill, SpillingList, SpillingOrder, paged

sizes = st.lists(st.one_of(st.integers(0, 40), st.integers(200, 3000)), max_size=40)


class Counting(SpillFile):
    """A spill file that notes the pickled bytes of each page of values a walk read back."""

    def __init__(self) -> None:
        super().__init__("a test's list")
        self.read: list[list[int]] = []

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        cursor = super().execute(sql, args)
        if sql.startswith("SELECT value FROM") and "n <= ?" in sql:
            rows = cursor.fetchall()
            self.read.append([len(row[0]) for row in rows])
            return _Rows(rows)  # type: ignore[return-value]
        return cursor


class _Rows:
    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows

    def fetchall(self) -> list[Any]:
        return self._rows


@settings(max_examples=200, deadline=None)
@given(sizes, st.integers(0, 50), st.integers(0, 20_000), st.integers(1, 4000), st.integers(1, 9), st.data())
def test_the_list_moves_at_the_count_or_the_bytes_and_hands_back_every_item(
    item_sizes: list[int], at: int, budget: int, page_bytes: int, page_rows: int, data: st.DataObject
) -> None:
    limits = Limits(at, budget, page_bytes, page_rows)
    counting = Counting()
    spill = SharedSpill(lambda: counting)
    items = [bytes([n % 251]) * size for n, size in enumerate(item_sizes)]
    listed: SpillingList[bytes] = SpillingList(spill, lambda: limits, size=len)
    held_bytes, moved_at = 0, None
    for n, item in enumerate(items):
        listed.append(item)
        held_bytes += len(item)
        if moved_at is None and (n + 1 > at or held_bytes > budget):
            moved_at = n  # the first append past either limit moves them all, once
        assert listed.spilled == (moved_at is not None)
        if not listed.spilled:  # what stays in memory: within the budget (the move takes the last)
            assert listed._bytes == held_bytes <= budget and len(listed._items) <= at
        else:
            assert listed._items == [] and listed._bytes == 0
    assert len(listed) == len(items) and listed == items and list(listed) == items
    start = data.draw(st.integers(0, len(items) + 2))
    twin = listed.copy()
    twin.append(b"after")
    counting.read.clear()
    assert list(listed.walk(start)) == items[start:]
    if listed.spilled:  # read back a page at a time, every item once
        assert sum(map(len, counting.read)) == len(items[start:])
        for page in counting.read:
            assert len(page) <= page_rows and (len(page) == 1 or sum(page) <= page_bytes), page
    assert list(twin) == [*items, b"after"] and listed == items  # the copy goes on alone
    if items:
        i = data.draw(st.integers(-len(items), len(items) - 1))
        assert listed[i] == items[i] and listed[1:3] == tuple(items[1:3])


@given(st.lists(st.integers(0, 3000), max_size=30), st.integers(0, 10_000))
def test_the_claude_held_list_moves_at_held_bytes(item_sizes: list[int], budget: int) -> None:
    """``held.HeldList`` (the dialect's binding) reads ``HELD_BYTES`` when used, as ``HELD_AT``,
    and measures a string by its length (``item_size``)."""
    saved = held.HELD_BYTES
    held.HELD_BYTES = budget
    try:
        store = held.Store("a test")
        items = ["x" * size for size in item_sizes]
        listed = held.HeldList(store, items)
        totals = [sum(item_sizes[: n + 1]) for n in range(len(item_sizes))]
        assert listed.spilled == any(total > budget for total in totals)
        assert list(listed) == items and listed.copy() == items
    finally:
        held.HELD_BYTES = saved


@given(st.lists(st.integers(0, 50), max_size=60, unique=True), st.integers(1, 7), st.booleans())
def test_paged_reads_every_row_once_in_order(keys: list[int], page: int, full: bool) -> None:
    rows = sorted((k, f"v{k}") for k in keys)
    reads: list[int] = []

    def read(last: int) -> list[tuple[int, str]]:
        reads.append(last)
        return [row for row in rows if row[0] > last][:page]

    assert list(paged(read, -1, full=page if full else 0)) == rows
    pages = -(-len(rows) // page)  # then one read that finds nothing, unless a short page ended it
    assert len(reads) == (pages if full and len(rows) % page else pages + 1)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-5, 5)), max_size=30), st.integers(0, 6))
def test_the_order_sorts_as_tuples_do_in_memory_and_spilled(rows: list[tuple[int, int]], at: int) -> None:
    spill = SharedSpill(lambda: SpillFile("a test's order"))
    order = SpillingOrder(spill, lambda: Limits(at, 0, 1, 2))
    for row in rows:
        order.add(row)
    assert list(order.sorted()) == sorted(rows)
    assert (spill.file is not None) == (len(rows) > at)


@given(st.lists(st.tuples(st.integers(0, 3), st.binary(max_size=2)), max_size=30), st.integers(0, 6))
def test_a_distinct_order_keeps_each_row_once_and_looks_up_without_sorting(
    rows: list[tuple[int, bytes]], at: int
) -> None:
    spill = SharedSpill(lambda: SpillFile("a test's order"))
    order = SpillingOrder(spill, lambda: Limits(at, 0, 1, 2), distinct=True)
    seen: set[tuple[int, bytes]] = set()
    for row in rows:
        assert order.add(row) == (row not in seen)
        seen.add(row)
    for probe in [*rows, (4, b""), (0, b"zz")]:
        assert order.contains(probe) == (probe in seen)
    assert list(order.sorted()) == sorted(seen)
    assert (spill.file is not None) == (len(seen) > at)
