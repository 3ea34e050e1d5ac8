"""A spilled ``held.HeldList`` reads its items back a page at a time, a page at most
``held._PAGE_BYTES`` of pickled items (or one item, however long): an item is as long as the
line it came from (a content block, a compaction's record), and ``held._SLICE`` rows of them
read back at once would hold 1,024 lines (issue 11 item 1). The items come back exactly, from
any start."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.claude import held
from sesstool.dialects.claude.held import HeldList, Store
from sesstool.store.spill import SpillFile

PAGE = 4000


class Pages(SpillFile):
    """A spill file that notes the bytes of every page of values a statement read back."""

    def __init__(self) -> None:
        super().__init__("a test's held list")
        self.read: list[list[int]] = []

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        cursor = super().execute(sql, args)
        if not sql.startswith("SELECT value FROM"):
            return cursor
        rows = cursor.fetchall()
        self.read.append([len(row[0]) for row in rows])
        return _Rows(rows)  # type: ignore[return-value]


class _Rows:
    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows

    def fetchall(self) -> list[Any]:
        return self._rows

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "HELD_AT", 0)
    monkeypatch.setattr(held, "_PAGE_BYTES", PAGE)
    monkeypatch.setattr(held, "_SLICE", 7)  # pages end at the row count too


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3 * PAGE), max_size=40), st.integers(0, 45))
def test_a_page_holds_at_most_page_bytes_or_one_item(sizes: list[int], start: int) -> None:
    store = Store()
    store.file = pages = Pages()
    items = [bytes([n % 251]) * size for n, size in enumerate(sizes)]
    listed = HeldList(store, items)
    assert listed.spilled == bool(items)
    assert list(listed.walk(start)) == items[start:]
    assert list(listed) == items
    # every item read back once per walk, in pages (the walk from ``start``, then the whole)
    assert sum(map(len, pages.read)) == len(items[start:]) + len(items)
    for page in pages.read:
        assert len(page) <= 7
        assert len(page) == 1 or sum(page) <= PAGE, page


def test_a_long_item_is_read_back_alone() -> None:
    store = Store()
    store.file = pages = Pages()
    items = [b"a" * 10, b"b" * (5 * PAGE), b"c" * 10, b"d" * 10]
    assert list(HeldList(store, items)) == items
    assert [len(page) for page in pages.read] == [1, 1, 2]  # a, then b alone, then c and d
