"""The waiting calls of a mini-agent log and of a dsh step spilled to disk (core/scan_state.py
past ``CALLS_SPILL_AT`` calls, ``store.spill.OrderedRows``; issue 11 item 1, second round) answer
exactly what the tables in memory answer: every mini-agent and dsh fixture, raw and zstd, scanned
with the threshold forced to 0, 1 and 5 calls, compared with the tables in memory — whole scan
results, and the bytes of validate, inspect, derive, repair and fork. A fixture with a call must
have spilled (else the comparison would prove nothing). A dsh step empties its tables at its
boundaries (§6.2: its calls pair within the step) and spills them anew past the threshold. The
spilled table answers like a dict under any operations."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core import scan_state
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.scan_state import LazyPending, Relations
from sesstool.engine.scan import scan_source
from sesstool.store.spill import OrderedRows, SpillFile
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import Forced, Outputs, printed_and_written

LOGS = sorted(
    p
    for dialect in ("mini", "dsh")
    for p in (FIXTURES / dialect).rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts
)
IN_MEMORY = 1 << 62


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> Forced:
    """Counts the spilled tables made while ``scan_state.CALLS_SPILL_AT`` is forced; read back
    two rows a statement."""
    slices = ((OrderedRows, "_SLICE", 2),)
    return Forced(monkeypatch, (OrderedRows, "__init__"), (scan_state, "CALLS_SPILL_AT"), slices)


def _calls(result: ScanResult) -> int:
    return result.stats.tool_calls.advertised + result.stats.tool_calls.started


@pytest.mark.parametrize("dialect", ["mini", "dsh"])
def test_there_are_fixtures_to_compare(dialect: str) -> None:
    logs = [p for p in LOGS if p.relative_to(FIXTURES).parts[0] == dialect]
    assert len(logs) > 15 and any(p.suffix == ".zstd" for p in logs)
    waiting = [p for p in logs if scan_source(p, ScanOptions()).scan.open.pending]
    assert len(waiting) >= 4 and any(p.suffix == ".zstd" for p in waiting)


def _plain(result: ScanResult) -> ScanResult:
    assert isinstance(result.open.pending, (tuple, LazyPending))
    messages = result.messages
    return dataclasses.replace(
        result,
        open=dataclasses.replace(result.open, pending=tuple(result.open.pending)),
        messages=list(messages) if messages is not None else None,
    )


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_calls_scan_what_the_calls_in_memory_scan(tables: Forced, log: Path) -> None:
    for options in (
        ScanOptions(),
        ScanOptions(collect_messages=True, message_addresses=True),
        ScanOptions(collect_timeline=True),
    ):
        tables.at(IN_MEMORY)
        held = _plain(scan_source(log, options).scan)
        assert tables.count == 0
        for threshold in (0, 1, 5):
            tables.at(threshold)
            scanned = scan_source(log, options).scan
            if threshold == 0 and _calls(held):
                assert tables.count > 0, "the calls never spilled"
                if held.open.pending:
                    assert isinstance(scanned.open.pending, LazyPending)
                    assert scanned.open.pending == held.open.pending  # the lazy view itself
                    assert scanned.open.pending[0] == held.open.pending[0]
                    assert scanned.open.pending[-1:] == held.open.pending[-1:]
            assert _plain(scanned) == held, (threshold, options)


_VIEWS = (
    ("validate", "--format", "json"),
    ("inspect", "--json"),
    ("inspect",),
    ("derive", "--format", "jsonl"),
)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_calls_print_and_write_the_same_bytes(
    sesstool: Sesstool, tables: Forced, log: Path, tmp_path: Path
) -> None:
    def outputs(threshold: int) -> Outputs:
        tables.at(threshold)
        suffix = ".jsonl.zstd" if log.suffix == ".zstd" else ".jsonl"
        return printed_and_written(sesstool, log, _VIEWS, tmp_path / str(threshold), suffix=suffix)

    held = outputs(IN_MEMORY)
    assert outputs(0) == held
    if _calls(scan_source(log, ScanOptions()).scan):
        assert tables.count > 0, "the calls never spilled"


def test_a_dsh_step_spills_its_calls_anew(tables: Forced) -> None:
    """dsh empties its tables at every step boundary (§6.2): each step's calls spill anew past
    the threshold (two tables a step that has calls), answered and counted as in memory."""
    log = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
    tables.at(IN_MEMORY)
    held = scan_source(log, ScanOptions()).scan
    steps = set()
    for line in log.read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") == "tool/call":
            steps.add((event["data"]["turn"], event["data"]["step"]))
    assert len(steps) >= 3 and tables.count == 0
    tables.at(0)
    assert scan_source(log, ScanOptions()).scan == held
    assert tables.count == 2 * len(steps)


_KEYS = st.sampled_from(["a", "b", "c", "d", "\u00e9", "a\x00b", "\ud800"])
_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "del", "pop", "get", "in", "copy"]), _KEYS, st.integers(0, 99)),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_the_spilled_table_answers_like_a_dict(ops: list[tuple[str, str, int]]) -> None:
    """Sets (a key set again keeps its place), deletes, pops, lookups and copies on a dict and on
    an ``OrderedRows``: the same answers, the same order; a copy goes on alone."""
    held: dict[str, Any] = {}
    table = OrderedRows(SpillFile("a test"))
    copies: list[tuple[dict[str, Any], OrderedRows]] = []
    for op, key, n in ops:
        value: Any = [n, None if n % 2 else n + 1, {"name": n}, f"p{n}"]
        if op == "set":
            held[key] = value
            table[key] = value
        elif op == "del":
            if key in held:
                del held[key]
                del table[key]
            else:
                with pytest.raises(KeyError):
                    del table[key]
        elif op == "pop":
            assert table.pop(key, None) == held.pop(key, None)
        elif op == "get":
            assert table.get(key) == held.get(key)
        elif op == "in":
            assert (key in table) == (key in held)
        else:
            copies.append((dict(held), table.copy()))
        assert len(table) == len(held)
    for expected, got in [(held, table), *copies]:
        assert list(got.items()) == list(expected.items())
        assert list(got) == list(expected)


def test_relations_copy_a_spilled_table() -> None:
    """A continuation's relations (``copy``) go on with their own spilled tables."""

    class Spill:
        def table(self, items: Any) -> OrderedRows:
            return OrderedRows(file, items)

    file = SpillFile("a test")
    rel = Relations()
    rel.use_spill(Spill())
    rel.spill_at = 1
    rel.advertised["a"] = [0, None, "ls", None]
    rel.grew()
    rel.advertised["b"] = [0, 3, "ls", "{}"]
    rel.started["b"] = 3
    rel.grew()
    assert isinstance(rel.advertised, OrderedRows) and isinstance(rel.started, OrderedRows)
    twin = rel.copy()
    del twin.advertised["a"]
    twin.started.pop("b")
    assert list(rel.advertised) == ["a", "b"] and list(rel.started) == ["b"]
    assert list(twin.advertised) == ["b"] and list(twin.started) == []
    assert [p.call_id for p in rel.pending(by_log=True)] == ["a", "b"]
    assert isinstance(rel.pending(by_log=True), LazyPending)
