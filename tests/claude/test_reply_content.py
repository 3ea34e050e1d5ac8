"""``reply.reply_content`` and ``reply.or_itself`` (issue 11 item 1), unit by unit: one walk of a
reply's members marks each member's line in the emitted bitmap (bit ``line & 7`` of byte
``line >> 3``) and no other, notes each block once, appends each call's id to the pending ids,
and gives the blocks in file order — a tuple in memory, past ``held.HELD_AT`` blocks read back
from the spill file; a reply whose index finds no member is the entry itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sesstool.core.closer_list import Closers
from sesstool.dialects.claude import held, reply
from sesstool.dialects.claude.held import HeldList, Store
from sesstool.dialects.claude.reply import or_itself, paged_lines, reply_content
from sesstool.store.spill import SpillFile

LINES = (0, 7, 8, 15, 16, 17, 31, 40, 63, 64, 65, 130)


def _member(line: int) -> dict[str, Any]:
    return {
        "line": line,
        "blocks": [{"type": "tool_use", "id": f"call-{line}"}, {"type": "text", "text": f"t{line}"}],
    }


def _members() -> Iterator[tuple[int, dict[str, Any]]]:
    return ((line, _member(line)) for line in LINES)


@pytest.mark.parametrize("held_at", [4096, 3], ids=["in-memory", "spilled"])
def test_one_walk_marks_notes_and_keeps_the_blocks(held_at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "HELD_AT", held_at)
    emitted = bytearray(20)
    noted: list[Any] = []
    pending: HeldList[str] = HeldList(None)
    content = reply_content(_members, lambda m: m["blocks"], emitted, noted.append, pending, Store())
    marked = [n for n in range(len(emitted) * 8) if emitted[n >> 3] & (1 << (n & 7))]
    assert marked == list(LINES)
    blocks = [b for line in LINES for b in _member(line)["blocks"]]
    assert noted == blocks and list(content) == blocks and list(content) == blocks  # walked twice
    in_memory = held_at == 4096
    assert isinstance(content, tuple) == in_memory and isinstance(content, Closers) != in_memory
    assert list(pending) == [f"call-{line}" for line in LINES]


def test_without_an_id_nothing_is_marked_and_odd_blocks_are_kept() -> None:
    pending: HeldList[str] = HeldList(None)
    odd: list[dict[str, Any]] = [
        {"type": "tool_use"},
        {"type": "tool_use", "id": 7},
        {"type": "text", "id": "x"},
    ]
    content = reply_content(lambda: iter([(3, {})]), lambda m: odd, None, lambda b: None, pending, Store())
    assert content == tuple(odd) and list(pending) == []  # only a tool_use's str id is pending


def test_or_itself() -> None:
    entry = {"uuid": "u"}
    assert list(or_itself(None, 5, entry)()) == [(5, entry)]
    assert list(or_itself(lambda: iter(()), 5, entry)()) == [(5, entry)]
    found = [(1, {"a": 1}), (9, {"b": 2})]
    walk = or_itself(lambda: iter(found), 5, entry)
    assert list(walk()) == found and list(walk()) == found


@pytest.mark.parametrize("page", [1, 2, 3, 1024])
def test_paged_lines_reads_back_a_kind_and_key_in_pages(page: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line of the kind and key, in order, whatever the page size — a page exactly full
    (6 lines: pages of 1, 2 and 3), then an empty or a short one ends it — and no other row."""
    monkeypatch.setattr(reply, "PAGE", page)
    store = SpillFile("a test")
    try:
        table = store.table("kind INTEGER, key BLOB, line INTEGER")
        rows = [(1, b"k", n) for n in (9, 0, 4, 13, 2, 7)] + [(2, b"k", 5), (1, b"j", 3), (1, b"k2", 1)]
        store.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows)
        assert list(paged_lines(store, table, 1, b"k")) == [0, 2, 4, 7, 9, 13]
        assert list(paged_lines(store, table, 2, b"k")) == [5]
        assert list(paged_lines(store, table, 3, b"k")) == []
    finally:
        store.close()


def test_the_page_is_1024_lines() -> None:
    assert reply.PAGE == 1024  # docs/format.md "Memory": a spilled index read back 1,024 lines a statement
