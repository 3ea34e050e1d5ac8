"""Issue 11 item 1: keys and values as long as a log chose them, bounded by bytes as well as by a
count. ``core.held_map.HeldMap`` moves to its table past ``HELD_BYTES`` of keys and values (it
moved at 4,096 keys whatever their length); ``store.spill.OrderedRows`` reads its rows back a page
of at most ``_PAGE_BYTES`` of keys and values (or one row, however long) as well as ``_SLICE``
rows (it read 1,024 rows a statement whatever their length); the Claude key index moves its text
keys to the spill file past ``key_index.FLUSH_BYTES`` of them, and the scan moves its graph there
past ``entry_graph.SPILL_BYTES`` of text keys (it held every key up to 32,768 entries). Each
answers as it did in memory (Hypothesis; every Claude fixture scanned spilled by bytes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core import held_map
from sesstool.core.held_map import HeldMap
from sesstool.dialects.claude import entry_graph, key_index
from sesstool.dialects.claude.key_index import KeyIndex
from sesstool.dialects.claude.usage_tally import UsageTally
from sesstool.store.run_spill import spilled_strings
from sesstool.store.spill import OrderedRows, SpilledArray, SpillFile
from tests.claude._support import PROJECTS, scan_bytes

long_texts = st.text(alphabet="ab\ud800é", max_size=3).map(lambda s: s * 40) | st.text(max_size=5)


# -- HeldMap: a byte budget of keys and values ---------------------------------------------------


@settings(max_examples=60)
@given(st.lists(st.tuples(long_texts, long_texts), max_size=40), st.integers(0, 300))
def test_the_map_moves_past_its_bytes_and_answers_as_a_dict(pairs: list[tuple[str, str]], most: int) -> None:
    with mock.patch.object(held_map, "HELD_BYTES", most):
        held, plain = HeldMap("a test", spilled_strings), dict[str, str]()
        for key, value in pairs:
            before = held._table is not None
            held.put(key, value)
            plain[key] = value
            weight = sum(len(k) + len(v) for k, v in plain.items())
            # in memory exactly while the keys and values held are within the budget
            assert (held._table is not None) == (before or weight > most)
            if held._table is None:
                assert held._bytes == weight
            assert held.get(key) == value and len(held) == len(plain)
        assert all(held.get(k) == v for k, v in plain.items())


def test_a_few_long_keys_move_the_map() -> None:
    """Four keys of 64 KiB: far below 4,096 keys (main's code held them), past 128 KiB."""
    with mock.patch.object(held_map, "HELD_BYTES", 128 << 10):
        held = HeldMap("a test", spilled_strings)
        for i in range(4):
            held.put(f"{i}".ljust(64 << 10, "k"), str(i))
        assert held._table is not None and held._held == {} and held._bytes == 0
        assert [held.get(f"{i}".ljust(64 << 10, "k")) for i in range(4)] == ["0", "1", "2", "3"]
        held.clear()
        assert len(held) == 0 and held.get("0".ljust(64 << 10, "k")) is None


# -- OrderedRows: read back by bytes ---------------------------------------------------------------


class _Counted(SpillFile):
    """Records the rows each read-back statement answered (their keys' and values' bytes)."""

    def __init__(self) -> None:
        super().__init__("a test's rows")
        self.reads: list[list[int]] = []

    def execute(self, sql: str, args: Any = ()) -> Any:
        cursor = super().execute(sql, args)
        if sql.startswith("SELECT n, key, value"):
            rows = cursor.fetchall()
            self.reads.append([len(row[1]) + len(row[2]) for row in rows])
            return _Answered(rows)
        return cursor


class _Answered:
    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def fetchall(self) -> list[Any]:
        return self.rows


@settings(max_examples=60)
@given(
    st.lists(st.tuples(st.text(alphabet="ab", max_size=2), st.integers(0, 3000)), max_size=30),
    st.integers(1, 4000),
    st.integers(1, 5),
)
def test_rows_are_read_back_a_page_of_bytes_at_a_time(
    ops: list[tuple[str, int]], most: int, rows: int
) -> None:
    """Rows of any length (key ``k * n``, value of ``n`` bytes), set, set again and removed: read
    back in insertion order as the dict, each statement at most ``most`` bytes or one row, and
    at most ``rows`` rows."""
    file = _Counted()
    table, model = OrderedRows(file), dict[str, bytes]()
    for key, n in ops:
        long_key = key * (n // 2 + 1)
        if n % 7 == 0 and long_key in model:
            del table[long_key], model[long_key]
        else:
            table[long_key] = model[long_key] = b"v" * n
    with mock.patch.multiple(OrderedRows, _PAGE_BYTES=most, _SLICE=rows):
        assert list(table.items()) == list(model.items())
        assert list(table) == list(model) and list(table.values()) == list(model.values())
    assert sum(len(page) for page in file.reads) == 3 * len(model)
    for page in file.reads:
        assert len(page) <= rows and (len(page) == 1 or sum(page) <= most)


def test_a_thousand_long_rows_are_not_read_back_at_once() -> None:
    """1,024 rows of 16 KiB each (16 MiB) read back at most 1 MiB a statement, where main's
    code read all 1,024 in one."""
    file = _Counted()
    table = OrderedRows(file, ((f"{i}".ljust(8 << 10, "k"), b"v" * (8 << 10)) for i in range(1024)))
    assert sum(1 for _ in table.items()) == 1024
    assert max(sum(page) for page in file.reads) <= OrderedRows._PAGE_BYTES == 1 << 20
    assert len(file.reads) >= 16


# -- the Claude key index and graph: text keys by bytes ----------------------------------------------


@settings(max_examples=60)
@given(st.lists(long_texts, max_size=60), st.integers(1, 200))
def test_the_spilled_key_index_holds_its_text_keys_by_bytes(keys: list[str], most: int) -> None:
    """Past ``spill`` the index moves its text keys to the file past ``FLUSH_BYTES`` of them (the
    count far away), holding at most that many bytes and one key; every answer as a dict's."""
    with mock.patch.multiple(key_index, FLUSH_BYTES=most, FLUSH_AT=1 << 20):
        index = KeyIndex()
        index.spill(SpillFile(), 64)  # a full filter: the file settles every "maybe"
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            assert index.add(key) == first.get(key, -1)
            first.setdefault(key, i)
            assert len(index.arena) < most + len(key.encode("utf-8", "surrogatepass")) + 1
        assert all(index.find(key) == item for key, item in first.items())
        assert [index.key(i) for i in range(len(keys))] == keys


def _scan(path: Path) -> Any:
    subagent = path.parent.name == "subagents"
    session = path.parent.parent.name if subagent else path.name.removesuffix(".jsonl")
    return scan_bytes(path.read_bytes(), str(path), session, subagent)


_WITH_TOOL_IDS = [p for p in sorted(PROJECTS.rglob("*.jsonl")) if b'"tool_use"' in p.read_bytes()]


@pytest.mark.parametrize("path", _WITH_TOOL_IDS, ids=[str(p.relative_to(PROJECTS)) for p in _WITH_TOOL_IDS])
def test_a_scan_spills_its_graph_past_bytes_of_text_keys(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``SPILL_BYTES`` 0 the graph moves at the entry after the first text key (a tool id),
    however few the entries, and the scan is the same as in memory."""
    in_memory = _scan(path)
    assert not isinstance(in_memory.chain, SpilledArray)
    monkeypatch.setattr(entry_graph, "SPILL_BYTES", 0)
    monkeypatch.setattr(key_index, "FLUSH_BYTES", 1)
    spilled = _scan(path)
    lines = path.read_bytes().splitlines()
    # the move is checked before each graph entry: one after the first tool id's makes it
    first = next(i for i, line in enumerate(lines) if b'"tool_use"' in line)
    moved = any(b'"parentUuid"' in line for line in lines[first + 1 :])
    assert isinstance(spilled.chain, SpilledArray) == (moved and len(spilled.chain) > 0)
    assert spilled == in_memory
    assert list(spilled.chain) == list(in_memory.chain)


@settings(max_examples=60)
@given(st.lists(st.tuples(long_texts, st.integers(0, 9)), max_size=60), st.integers(0, 300))
def test_the_reply_windows_hold_their_ids_by_bytes(replies: list[tuple[str, int]], most: int) -> None:
    """The usage tally (and the graph's reply window, the same rule) holds the last
    ``MESSAGE_WINDOW`` ids and at most ``MESSAGE_BYTES`` of them, the newest whatever its length;
    an id still held counts its usage once, an id evicted is settled: the total is the sum of
    each held id's last usage and of every usage evicted."""
    with mock.patch.object(entry_graph, "MESSAGE_BYTES", most):
        tally, window, settled = UsageTally(), dict[str, int](), 0
        for msg_id, tokens in replies:
            tally.add(msg_id, {"input_tokens": tokens})
            window.pop(msg_id, None)
            window[msg_id] = tokens
            while len(window) > 1 and sum(map(len, window)) > most:
                settled += window.pop(next(iter(window)))
            assert list(tally.recent) == list(window)
            assert tally.recent_bytes == sum(map(len, window)) <= max(most, len(msg_id))
        assert tally.total().input_tokens == settled + sum(window.values())
