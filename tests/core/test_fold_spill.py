"""The projection fold spilled to disk (core/fold.py past ``SPILL_AT`` seqs, issue 11 item 1,
second round) answers exactly what the fold in memory answers: every dsh, mini-agent and
migration fixture, raw and zstd, scanned and derived with the threshold forced to 0, 1 and 5
seqs and pages of four items (so every array crosses pages and the cache evicts), compared with
the fold in memory — whole scan results, and the bytes of validate, inspect, derive (JSON,
JSONL, Markdown), repair and fork. A fixture with a surface must have opened a spill (else the
comparison would prove nothing)."""

from __future__ import annotations

import dataclasses
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core import fold as fold_module
from sesstool.core.fold import Fold, LinkedNodes
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.engine.scan import scan_source
from sesstool.store import spill
from sesstool.store.spill import ArraySpill
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import Forced, Outputs, printed_and_written

LOGS = sorted(
    p
    for root in ("dsh", "mini", "migrate")
    for p in (FIXTURES / root).rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts
)
IN_MEMORY = 1 << 62


@pytest.fixture
def spills(monkeypatch: pytest.MonkeyPatch) -> Forced:
    """Counts the spill arrays made while ``fold.SPILL_AT`` is forced; pages of 4, two cached."""
    settings = ((spill, "PAGE", 4), (spill, "CACHED_PAGES", 2))
    return Forced(monkeypatch, (ArraySpill, "array"), (fold_module, "SPILL_AT"), settings)


def test_there_are_fixtures_to_compare() -> None:
    assert len(LOGS) > 50 and any(p.suffix == ".zstd" for p in LOGS)
    assert any("mini" in p.parts for p in LOGS) and any("dsh" in p.parts for p in LOGS)


def _plain(result: ScanResult) -> ScanResult:
    messages = result.messages
    return dataclasses.replace(result, messages=list(messages) if messages is not None else None)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_fold_scans_what_the_fold_in_memory_scans(spills: Forced, log: Path) -> None:
    for options in (
        ScanOptions(),
        ScanOptions(collect_messages=True, message_addresses=True),
        ScanOptions(collect_messages=True),
        ScanOptions(collect_timeline=True),
    ):
        spills.at(IN_MEMORY)
        held = _plain(scan_source(log, options).scan)
        assert spills.count == 0
        for threshold in (0, 1, 5):
            spills.at(threshold)
            spilled = _plain(scan_source(log, options).scan)
            assert spilled == held, (threshold, options)
            if threshold == 0 and held.stats.surface.current + held.stats.surface.shadowed:
                assert spills.count > 0, "the fold never spilled"


_VIEWS = (
    ("validate", "--format", "json"),
    ("inspect", "--json"),
    ("inspect", "--timeline"),
    ("derive", "--format", "json"),
    ("derive", "--format", "jsonl"),
    ("derive", "--format", "markdown"),
)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_fold_prints_and_writes_the_same_bytes(
    sesstool: Sesstool, spills: Forced, log: Path, tmp_path: Path
) -> None:
    def outputs(threshold: int) -> Outputs:
        spills.at(threshold)
        suffix = ".jsonl.zstd" if log.suffix == ".zstd" else ".jsonl"
        return printed_and_written(sesstool, log, _VIEWS, tmp_path / str(threshold), suffix=suffix)

    assert outputs(1) == outputs(IN_MEMORY)


_OPS = st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(0, 40)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(0, 40)), max_size=60), st.integers(0, 8)
)
def test_the_linked_node_list_answers_like_the_array(ops: list[tuple[bool, int, int]], appends: int) -> None:
    """Appends and replaces (any endpoints, either order, missing ones) on the list in memory
    and the linked list in a spill file: the same runs, the same refusals, the same order."""
    in_memory, spilled = Fold(), Fold()
    spilled.use_spill(ArraySpill("a test"))
    spilled.spill_at = 0
    seq = 0
    for _ in range(appends):
        for fold in (in_memory, spilled):
            fold.append(seq, "user/message")
        seq += 1
    for append, a, b in ops:
        if append:
            for fold in (in_memory, spilled):
                fold.append(seq, "tool/result")
            seq += 1
            continue
        assert (a in spilled.node_type, b in spilled.node_type) == (
            a in in_memory.node_type,
            b in in_memory.node_type,
        )
        if a not in in_memory.node_type or b not in in_memory.node_type:
            continue
        held_run, spilled_run = in_memory.run(a, b), spilled.run(a, b)
        assert (held_run is None) == (spilled_run is None)
        if held_run is None or spilled_run is None:
            continue
        assert list(held_run.seqs) == list(spilled_run.seqs) and len(held_run.seqs) == len(spilled_run.seqs)
        assert held_run.at_head == spilled_run.at_head and held_run.seqs[0] == spilled_run.seqs[0]
        assert in_memory.first() == spilled.first()
        for fold, run in ((in_memory, held_run), (spilled, spilled_run)):
            removed = list(run.seqs)
            fold.swap(run, seq)
            for s in removed:
                del fold.node_type[s]
            fold.node_type[seq] = "assistant/message"
        seq += 1
        assert isinstance(spilled.nodes, LinkedNodes)
        assert list(spilled.nodes) == list(in_memory.nodes) and len(spilled.nodes) == len(in_memory.nodes)
        twin = spilled.copy()  # copy-on-write: the twin goes on alone
        twin.append(seq + 1000, "user/message")
        assert list(spilled.nodes) == list(in_memory.nodes)
    assert list(spilled.nodes) == list(in_memory.nodes) == list(array("q", in_memory.nodes))


def test_spilled_fingerprints_and_offsets_answer_like_the_dicts() -> None:
    fold = Fold()
    fold.use_spill(ArraySpill("a test"))
    fold.spill_at = 3
    for seq in range(3):
        fold.append(seq, "tool/result")
        fold.tool_fp[seq] = None if seq == 1 else seq * 7 - 7  # 0 is a hash value too
        fold.projected[seq] = 100 + seq if seq else None
    fold.append(10, "tool/result")  # spills here
    assert isinstance(fold.nodes, LinkedNodes)
    fold.tool_fp[10] = -1  # not a hash, kept all the same
    fold.tool_fp[11] = 1 << 70
    assert [fold.tool_fp.get(s) for s in (0, 1, 2, 5, 10, 11, 99)] == [-7, None, 7, None, -1, 1 << 70, None]
    fold.tool_fp.pop(10)
    fold.tool_fp.pop(99)
    assert fold.tool_fp.get(10) is None
    fold.projected[10] = 55
    assert list(fold.messages()) == [101, 102, 55]
    assert fold.projected.pop(1, "x") == 101 and fold.projected.pop(1, "x") == "x"
