"""What only hostile input makes long in a transcript's scan — entries whose parent no entry
has, calls waiting for their result, tool ids used twice, results away from their call, the
dangling calls and orphan results made of them (held.py; issue 11 item 1, third round) — moved
to the spill file answers exactly what it answers held in memory: every Claude fixture, raw
and zstd, scanned with ``held.HELD_AT`` forced to 0, 1 and 5 items, compared with everything in
memory — whole scan results (findings, closers, derived messages) and the bytes of validate,
inspect, derive, repair and fork. Fixtures with each kind of item must have spilled (else the
comparison proves nothing). The structures answer like a dict and a list under any operations."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.dialects.claude import entry_graph, held
from sesstool.dialects.claude.held import HeldList, HeldOrder, HeldRows, Store
from sesstool.dialects.claude.scan_facts import Compaction
from sesstool.engine.scan import scan_source
from tests.adversarial.claude_hostile import PATTERNS, SESSION, write
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import VIEWS, Forced, Outputs, printed_and_written

LOGS = sorted(
    p
    for p in (FIXTURES / "claude").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts and "lane" not in p.parts
)
IN_MEMORY = 1 << 62
CHILD = "0b0c0a3e-0000-4000-8000-00000000c0de"


@pytest.fixture
def moves(monkeypatch: pytest.MonkeyPatch) -> Forced:
    """Counts the spill files the held structures open while ``held.HELD_AT`` is forced; read
    back two rows a statement."""
    return Forced(monkeypatch, (Store, "__call__"), (held, "HELD_AT"), ((held, "_SLICE", 2),))


def _plain(result: ScanResult) -> ScanResult:
    """The scan without derive's line offsets (compared by what derive prints, below)."""
    return dataclasses.replace(result, facts=dataclasses.replace(result.facts, offsets=None))


def _kinds(log: Path) -> dict[str, int]:
    """Items of each held kind a scan of ``log`` meets (read from the scan's own state)."""
    seen: dict[str, int] = {}
    original = HeldRows.__setitem__, HeldList.append

    def setitem(this: HeldRows, key: str, value: Any) -> None:
        if isinstance(value, int):
            kind = "anchors"  # a compaction by its anchor (compactions.Compactions)
        else:
            kind = "unseen" if len(value) == 3 and isinstance(value[0], str) else "waiting"
        seen[kind] = seen.get(kind, 0) + 1
        original[0](this, key, value)

    def append(this: HeldList[Any], item: Any) -> None:
        kind = "compactions" if isinstance(item, Compaction) else "listed"
        seen[kind] = seen.get(kind, 0) + 1
        original[1](this, item)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HeldRows, "__setitem__", setitem)
        patch.setattr(HeldList, "append", append)
        scan_source(log, ScanOptions())
    return seen


def test_there_are_fixtures_with_each_kind() -> None:
    """Missing parents, waiting calls, listed items (repeated ids, results away from their
    call, dangling calls, orphans) and compactions with their anchors are all in the fixtures,
    raw and zstd."""
    found: dict[str, set[str]] = {}
    for log in LOGS:
        for kind in _kinds(log):
            found.setdefault(kind, set()).add(log.suffix)
    kinds = ("unseen", "waiting", "listed", "anchors", "compactions")
    assert found == {k: {".jsonl", ".zstd"} for k in kinds}, found


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_items_scan_what_the_items_in_memory_scan(moves: Forced, log: Path) -> None:
    kinds = _kinds(log)
    for options in (
        ScanOptions(),
        ScanOptions(collect_messages=True),
        ScanOptions(collect_messages=True, message_addresses=True),
        ScanOptions(max_findings=1),
    ):
        moves.at(IN_MEMORY)
        expected = _plain(scan_source(log, options).scan)
        assert moves.count == 0
        for items in (0, 1, 5):
            moves.at(items)
            scanned = _plain(scan_source(log, options).scan)
            if kinds and items == 0:
                assert moves.count > 0, "nothing spilled"
            assert scanned == expected, (items, options)
            facts, held_facts = scanned.facts.scan, expected.facts.scan
            assert (list(facts.dangling), list(facts.orphan_results), list(scanned.facts.closers)) == (
                list(held_facts.dangling),
                list(held_facts.orphan_results),
                list(expected.facts.closers),
            )


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_items_print_and_write_the_same_bytes(
    sesstool: Sesstool, moves: Forced, log: Path, tmp_path: Path
) -> None:
    def outputs(items: int) -> Outputs:
        moves.at(items)
        suffix = "".join(log.suffixes[-2:])
        return printed_and_written(sesstool, log, VIEWS, tmp_path / str(items), suffix=suffix, child=CHILD)

    expected = outputs(IN_MEMORY)
    for items in (0, 1, 5):
        assert outputs(items) == expected, items
        if items == 0 and _kinds(log):
            assert moves.count > 0, "nothing spilled"


_KEYS = st.sampled_from(["a", "b", "c", "d", "\u00e9", "a\x00b", "\udcff"])
_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "pop", "append", "copy"]), _KEYS, st.integers(0, 99)), max_size=60
)


@settings(max_examples=200, deadline=None)
@given(_OPS, st.integers(0, 4))
def test_held_structures_answer_like_a_dict_and_a_list(ops: list[tuple[str, str, int]], items: int) -> None:
    """Sets (a key set again keeps its place), pops, appends and copies on a dict and a list and
    on the held structures spilling past ``items``: the same answers, the same order; a copy
    goes on independently; the rows sort as tuples do."""
    saved = held.HELD_AT
    held.HELD_AT = items
    try:
        store = Store("a test")
        rows, listed, order = HeldRows(store), HeldList[tuple[str, int]](store), HeldOrder(store)
        plain_rows: dict[str, Any] = {}
        plain_list: list[tuple[str, int]] = []
        copies: list[tuple[dict[str, Any], list[tuple[str, int]], HeldRows, HeldList[tuple[str, int]]]] = []
        for op, key, n in ops:
            if op == "set":
                rows[key], plain_rows[key] = (key, n), (key, n)
            elif op == "pop":
                assert rows.pop(key) == plain_rows.pop(key, None)
            elif op == "append":
                listed.append((key, n))
                plain_list.append((key, n))
                order.add((n % 3, len(plain_list), n))
            else:
                copies.append((dict(plain_rows), list(plain_list), rows.copy(), listed.copy()))
            assert len(rows) == len(plain_rows) and bool(rows) == bool(plain_rows)
            assert list(rows.items()) == list(plain_rows.items())
            assert listed == plain_list and list(listed) == plain_list and len(listed) == len(plain_list)
        for key in plain_rows:
            assert rows[key] == plain_rows[key]
        if plain_list:
            assert (listed[0], listed[-1], listed[1:3]) == (
                plain_list[0],
                plain_list[-1],
                tuple(plain_list[1:3]),
            )
        for plain_r, plain_l, copied_r, copied_l in copies:
            assert list(copied_r.items()) == list(plain_r.items()) and list(copied_l) == plain_l
        rows_made = [(n % 3, i + 1, n) for i, (_, n) in enumerate(plain_list)]
        assert list(order.sorted()) == sorted(rows_made)
        if len(plain_list) > items:
            assert store.file is not None  # the list (and the order) moved
    finally:
        held.HELD_AT = saved


def test_the_compactions_of_the_fixtures_spill(moves: Forced) -> None:
    """The fixtures with compactions (raw and zstd) move them, anchors too, at 0 items: the
    comparisons above prove the spilled ``compactions.Compactions`` scans, finds by anchor (derive)
    and prints what the one in memory does."""
    found = [log for log in LOGS if "compactions" in _kinds(log)]
    assert {log.suffix for log in found} == {".jsonl", ".zstd"}
    for log in found:
        moves.at(IN_MEMORY)
        held_scan = scan_source(log, ScanOptions()).scan.facts.scan
        moves.at(0)
        scan = scan_source(log, ScanOptions()).scan.facts.scan
        assert scan.compactions._items.spilled and scan.compactions._last.spilled
        assert scan.compactions == held_scan.compactions == tuple(held_scan.compactions)
        for compaction in held_scan.compactions:
            assert list(scan.compactions.anchored(compaction.anchor)) == [
                c for c in held_scan.compactions if c.anchor == compaction.anchor
            ]


@pytest.mark.parametrize("pattern", sorted([*PATTERNS, "compactions"]))
def test_hostile_patterns_spilled_scan_what_they_scan_in_memory(
    pattern: str, moves: Forced, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hostile logs of the memory tests (no fixture uses a tool id twice), small: each kind
    spilled at 0, 1 and 5 items, with the graph in memory and spilled, scans the same."""
    log = write(tmp_path / f"{SESSION}.jsonl", pattern, 7)
    for options in (ScanOptions(), ScanOptions(collect_messages=True)):
        moves.at(IN_MEMORY)
        expected = _plain(scan_source(log, options).scan)
        assert expected.findings or expected.facts.scan.tool_uses
        for items, graph in ((0, IN_MEMORY), (1, IN_MEMORY), (5, IN_MEMORY), (0, 0), (5, 3)):
            moves.at(items)
            monkeypatch.setattr(entry_graph, "SPILL_AT", graph)
            assert _plain(scan_source(log, options).scan) == expected, (items, graph)
            assert moves.count > 0
        monkeypatch.setattr(entry_graph, "SPILL_AT", IN_MEMORY)


def test_derive_checks_a_run_of_waiting_calls_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of calls never answered with no user entry between them: derive looks each call's
    result up once per flush that can add it, not once per later assistant entry (n²/2 lookups
    before), and still closes every one of them after the run."""
    from sesstool.dialects.claude.derive import Index
    from sesstool.engine.derive import DeriveRequest, run_derive
    from tests.adversarial.claude_hostile import call_run

    n = 200
    log = tmp_path / f"{SESSION}.jsonl"
    with log.open("wb") as out:
        for entry in call_run(n):
            out.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
    lookups = 0
    original = Index.result

    def counted(this: Index, tool_id: str, entry: Any) -> Any:
        nonlocal lookups
        lookups += 1
        return original(this, tool_id, entry)

    monkeypatch.setattr(Index, "result", counted)
    messages = list(run_derive(DeriveRequest(str(log))).messages)
    closed = [
        b for m in messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert [b["tool_use_id"] for b in closed] == [f"toolu_{i}" for i in range(n)]
    # derive makes two passes (it counts, then writes); each looks a call up when the next entry
    # flushes and once more when the run is closed: 4n (2n² before: 80,000 here)
    assert lookups <= 4 * n, lookups
