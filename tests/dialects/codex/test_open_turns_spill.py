"""A rollout's unfinished turns spilled to disk (dialects/codex/open_turns.py past ``SPILL_AT``
turns or ``SPILL_BYTES`` of ids, issue 11 item 1, third round) answer exactly what the turns held
in memory answer: every Codex fixture, raw and zstd, scanned with the thresholds forced to 0, 1
and 5 turns (and to 0 bytes), compared with the turns held in memory — whole scan results, and
the bytes of validate, inspect, derive, repair and fork. A fixture with an unfinished turn must
have spilled (else the comparison would prove nothing). The table answers like a dict under any
operations (a turn started again keeps its place; an end removes its turn, else the last one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.dialects.codex import open_turns
from sesstool.dialects.codex.model import OpenTurn
from sesstool.dialects.codex.open_turns import OpenTurns, SpilledTurns
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
    return SpillMoves(monkeypatch, open_turns, "a rollout's unfinished turns")


def _open(result: ScanResult) -> Any:
    return result.facts.open_turns if result.facts is not None else ()


def test_there_are_fixtures_to_compare() -> None:
    assert len(LOGS) > 20 and any(p.suffix != ".jsonl" for p in LOGS)
    unfinished = [p for p in LOGS if _open(scan_source(p, ScanOptions()).scan)]
    assert len(unfinished) >= 6 and any(p.suffix != ".jsonl" for p in unfinished)


def _plain(result: ScanResult) -> ScanResult:
    if result.facts is not None:
        assert isinstance(result.facts.open_turns, (tuple, SpilledTurns))
    return codex_plain(result)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_turns_scan_what_the_turns_in_memory_scan(moves: SpillMoves, log: Path) -> None:
    for options in CODEX_SCANS:
        moves.at(IN_MEMORY)
        held = _plain(scan_source(log, options).scan)
        assert moves.count == 0
        for turns, text in ((0, IN_MEMORY), (1, IN_MEMORY), (5, IN_MEMORY), (IN_MEMORY, 0)):
            moves.at(turns, text)
            scanned = scan_source(log, options).scan
            if (turns == 0 or text == 0) and held.facts is not None and held.facts.turns_started:
                assert moves.count > 0, "the turns never spilled"  # the first task_started spills
            if _open(held) and (turns == 0 or text == 0):
                assert isinstance(scanned.facts.open_turns, SpilledTurns)
                assert scanned.facts.open_turns == held.facts.open_turns  # the lazy view itself
                assert scanned.facts.open_turns[-1] == held.facts.open_turns[-1]
            assert _plain(scanned) == held, (turns, text, options)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_turns_print_and_write_the_same_bytes(
    sesstool: Sesstool, moves: SpillMoves, log: Path, tmp_path: Path
) -> None:
    def outputs(turns: int) -> Outputs:
        moves.at(turns)
        suffix = "".join(log.suffixes[-2:])
        return printed_and_written(
            sesstool, log, CODEX_VIEWS, tmp_path / str(turns), suffix=suffix, child=CODEX_CHILD
        )

    held = outputs(IN_MEMORY)
    assert outputs(0) == held
    if _open(scan_source(log, ScanOptions()).scan):
        assert moves.count > 0, "the turns never spilled"


_IDS = st.sampled_from([None, "a", "b", "c", "d", "\u00e9", "a\x00b", ""])
_OPS = st.lists(st.tuples(st.sampled_from(["start", "end", "copy"]), _IDS, st.integers(0, 99)), max_size=60)


def _turn(turn_id: str | None, n: int) -> OpenTurn:
    return OpenTurn(turn_id, None if n % 2 else f"root{n}", None if n % 3 else n * 1000, n + 1, n * 7)


@settings(max_examples=200, deadline=None)
@given(_OPS, st.integers(0, 4), st.integers(0, 400))
def test_the_table_answers_like_a_dict(ops: list[tuple[str, str | None, int]], turns: int, text: int) -> None:
    """Starts (a turn id started again keeps its place), ends (``del`` when open, else
    ``popitem``) and copies on a dict and on the table spilling past ``turns`` records or
    ``text`` bytes: the same answers, the same order, the same last turn."""
    saved = open_turns.SPILL_AT, open_turns.SPILL_BYTES
    open_turns.SPILL_AT, open_turns.SPILL_BYTES = turns, text
    try:
        held: dict[str | None, OpenTurn] = {}
        table = OpenTurns()
        copies: list[tuple[dict[str | None, OpenTurn], OpenTurns]] = []
        for op, turn_id, n in ops:
            if op == "start":
                held[turn_id] = _turn(turn_id, n)
                table.start(_turn(turn_id, n))
            elif op == "end":
                if turn_id in held:
                    del held[turn_id]
                elif held:
                    held.popitem()
                table.end(turn_id)
            else:
                copies.append((dict(held), table.copy()))
            assert len(table) == len(held)
        for expected, got in [(held, table), *copies]:
            assert list(got.turns()) == list(expected.values())
            assert got.last() == (list(expected.values())[-1] if expected else None)
            view = got.view()
            assert view == tuple(expected.values()) and len(view) == len(expected)
            assert [view[i] for i in range(-len(view), len(view))] == [*expected.values()] * 2
            assert view[1:3] == tuple(expected.values())[1:3]
    finally:
        open_turns.SPILL_AT, open_turns.SPILL_BYTES = saved
