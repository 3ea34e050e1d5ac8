"""A rollout's waiting calls spilled to disk (dialects/codex/waiting.py past ``SPILL_AT`` calls or
``SPILL_BYTES`` of text, issue 11 item 1, second round) answer exactly what the records held in
memory answer: every Codex fixture, raw and zstd, scanned with the thresholds forced to 0, 1 and
5 calls (and to 0 bytes), compared with the calls held in memory — whole scan results, and the
bytes of validate, inspect, derive, repair and fork. A fixture with a waiting call must have
spilled (else the comparison would prove nothing). The table answers like a dict under any
operations, and the findings past ``--max-findings`` leave the verdict as every finding gives it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.dialects.codex import waiting
from sesstool.dialects.codex.waiting import SpilledCalls, Waiting
from sesstool.engine.scan import scan_source
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import (
    CODEX_CHILD,
    CODEX_LOGS,
    CODEX_SCANS,
    CODEX_VIEWS,
    Outputs,
    SpillMoves,
    codex_plain,
    printed_and_written,
)

LOGS = CODEX_LOGS
IN_MEMORY = 1 << 62


@pytest.fixture
def moves(monkeypatch: pytest.MonkeyPatch) -> SpillMoves:
    return SpillMoves(monkeypatch, waiting, "a rollout's calls waiting for their output")


def test_there_are_fixtures_to_compare() -> None:
    assert len(LOGS) > 20 and any(p.suffix != ".jsonl" for p in LOGS)
    waiting_calls = [p for p in LOGS if _dangling(scan_source(p, ScanOptions()).scan)]
    assert len(waiting_calls) >= 6 and any(p.suffix != ".jsonl" for p in waiting_calls)


def _dangling(result: ScanResult) -> Any:
    return result.facts.dangling if result.facts is not None else ()


def _plain(result: ScanResult) -> ScanResult:
    if result.facts is not None:
        assert isinstance(result.facts.dangling, (tuple, SpilledCalls))
    return codex_plain(result)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_waiting_calls_scan_what_the_calls_in_memory_scan(moves: SpillMoves, log: Path) -> None:
    for options in CODEX_SCANS:
        moves.at(IN_MEMORY)
        held = _plain(scan_source(log, options).scan)
        assert moves.count == 0
        for calls, text in ((0, IN_MEMORY), (1, IN_MEMORY), (5, IN_MEMORY), (IN_MEMORY, 0)):
            moves.at(calls, text)
            scanned = scan_source(log, options).scan
            if _dangling(held) and (calls == 0 or text == 0):
                assert moves.count > 0, "the waiting calls never spilled"
                assert isinstance(scanned.facts.dangling, SpilledCalls)
                assert scanned.facts.dangling == held.facts.dangling  # the lazy view itself
            assert _plain(scanned) == held, (calls, text, options)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_waiting_calls_print_and_write_the_same_bytes(
    sesstool: Sesstool, moves: SpillMoves, log: Path, tmp_path: Path
) -> None:
    def outputs(calls: int) -> Outputs:
        moves.at(calls)
        suffix = "".join(log.suffixes[-2:])
        return printed_and_written(
            sesstool, log, CODEX_VIEWS, tmp_path / str(calls), suffix=suffix, child=CODEX_CHILD
        )

    held = outputs(IN_MEMORY)
    assert outputs(0) == held
    if _dangling(scan_source(log, ScanOptions()).scan):
        assert moves.count > 0, "the waiting calls never spilled"


_IDS = st.sampled_from(["a", "b", "c", "d", "e", "f", "\u00e9", "a\x00b"])
_OPS = st.lists(st.tuples(st.sampled_from(["add", "pop", "copy"]), _IDS, st.integers(0, 99)), max_size=60)


def _record(n: int) -> waiting.Record:
    return ("function_call", f"name{n}", "{}" * (n % 3), None if n % 2 else f"fc_{n}", n, n + 1, "turn")


@settings(max_examples=200, deadline=None)
@given(_OPS, st.integers(0, 4), st.integers(0, 400))
def test_the_table_answers_like_a_dict(ops: list[tuple[str, str, int]], calls: int, text: int) -> None:
    """Adds (a call id made again keeps its place), pops and copies on a dict and on the table
    spilling past ``calls`` records or ``text`` bytes: the same answers, the same order."""
    saved = waiting.SPILL_AT, waiting.SPILL_BYTES
    waiting.SPILL_AT, waiting.SPILL_BYTES = calls, text
    try:
        held: dict[str, Any] = {}
        table = Waiting()
        copies: list[tuple[dict[str, Any], Waiting]] = []
        for op, cid, n in ops:
            if op == "add":
                held[cid] = _record(n)
                table.add(cid, _record(n))
            elif op == "pop":
                assert table.pop(cid) == (held.pop(cid, None) is not None)
            else:
                copies.append((dict(held), table.copy()))
            assert len(table) == len(held)
        for expected, got in [(held, table), *copies]:
            assert list(got.items()) == list(expected.items())
            assert list(got.view(lambda cid, rec: (cid, rec))) == list(expected.items())
        table.drop()
        assert len(table) == 0 and list(table.items()) == []
    finally:
        waiting.SPILL_AT, waiting.SPILL_BYTES = saved


@pytest.mark.parametrize(
    "log", [p for p in LOGS if p.parent.name != "empty"], ids=lambda p: str(p.relative_to(FIXTURES))
)  # an empty file is read as dsh
def test_findings_past_the_limit_leave_the_verdict_as_it_was(log: Path) -> None:
    """--max-findings k keeps the first k findings and counts the others; the verdict, its
    reason and its address are the ones every finding gives."""
    full = scan_source(log, ScanOptions()).scan
    assert full.dialect == "codex" and full.findings_dropped == 0
    for limit in range(len(full.findings) + 1):
        capped = scan_source(log, ScanOptions(max_findings=limit)).scan
        assert (capped.verdict, capped.verdict_reason, capped.verdict_address) == (
            full.verdict,
            full.verdict_reason,
            full.verdict_address,
        )
        kept = len(capped.findings)
        assert kept + capped.findings_dropped == len(full.findings)
        assert kept >= min(limit, len(full.findings))  # the session_meta problem is always kept
