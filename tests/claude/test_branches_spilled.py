"""The branch check of a spilled graph (``EntryGraph._spilled_siblings``: the children rows of
a table in the spill file, walked in its B-trees' order; issue 11 item 1, fourth round) counts
the branches and flags the interleaved ones exactly as the check of the graph in memory
(``_children``): every Claude fixture, raw and zstd, scanned with the graph's threshold forced
to 0, 1 and 3 entries (pages of four, two batches of rows at a time), compared with the scan
in memory — the branch count, the findings with their addresses, the whole scan — and the
bytes validate, inspect, derive, repair and fork print and write; and for generated parent
arrays (roots, forward, missing and repeated parents, replayed uuids, sidechains, result
entries, replies split over entries, two sessions) the two checks answer the same."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.dialects.claude import entry_graph
from sesstool.dialects.claude.entry_graph import ASSISTANT, RESULTS, SIDECHAIN, USER, EntryGraph
from sesstool.dialects.claude.findings import Findings
from sesstool.engine.scan import scan_source
from sesstool.store import spill
from sesstool.store.spill import SpillFile
from tests.adversarial import claude_branches
from tests.adversarial.claude_hostile import SESSION
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import VIEWS, Forced, Outputs, printed_and_written

LOGS = sorted(
    p
    for p in (FIXTURES / "claude").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts and "lane" not in p.parts
)
# no fixture has a branch: the logs of the memory tests (test_claude_branches.py), small, too
BRANCHY = [(pattern, zstd) for pattern in claude_branches.PATTERNS for zstd in (False, True)]
IN_MEMORY = 1 << 62
CHILD = "0b0c0a3e-0000-4000-8000-00000000c0de"
WRITERS = "claude-concurrent-writers"


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Forced:
    """Counts the branch checks that took the spilled path while ``entry_graph.SPILL_AT`` is
    forced; the graph walked two entries a batch, its arrays in pages of 4, two pages cached."""
    settings = ((entry_graph, "_BATCH", 2), (spill, "PAGE", 4), (spill, "CACHED_PAGES", 2))
    return Forced(monkeypatch, (EntryGraph, "_spilled_siblings"), (entry_graph, "SPILL_AT"), settings)


def _plain(result: ScanResult) -> ScanResult:
    """The scan without derive's line offsets (compared by what derive prints, below)."""
    return dataclasses.replace(result, facts=dataclasses.replace(result.facts, offsets=None))


def _branches(result: ScanResult) -> tuple[int, list[Any]]:
    return result.facts.scan.branches, [
        f for f in result.findings if f.rule == WRITERS and "branch" in f.message
    ]


def _branchy(where: Path, pattern: str, zstd: bool) -> Path:
    folder = where / "branchy"
    folder.mkdir()
    return claude_branches.write(folder / f"{SESSION}.jsonl{'.zstd' if zstd else ''}", pattern, 9, zstd)


@pytest.mark.parametrize(("pattern", "zstd"), BRANCHY)
def test_the_branchy_logs_have_branches_and_interleaved_ones(
    tmp_path: Path, pattern: str, zstd: bool
) -> None:
    """No fixture has a branch (each fixture is compared below all the same); these logs have
    them: a branch per prompt, every other one interleaved, or a fan of 9 replies."""
    branches, flagged = _branches(scan_source(_branchy(tmp_path, pattern, zstd), ScanOptions()).scan)
    assert (branches, len(flagged)) == ((9, 4) if pattern == "branching" else (8, 0))


@pytest.mark.parametrize(("pattern", "zstd"), BRANCHY)
def test_spilled_branches_of_branchy_logs(walks: Forced, tmp_path: Path, pattern: str, zstd: bool) -> None:
    test_spilled_branches_are_the_branches_in_memory(walks, _branchy(tmp_path, pattern, zstd))


@pytest.mark.parametrize(("pattern", "zstd"), BRANCHY)
def test_spilled_branches_of_branchy_logs_print_the_same_bytes(
    sesstool: Sesstool, walks: Forced, tmp_path: Path, pattern: str, zstd: bool
) -> None:
    test_spilled_branches_print_and_write_the_same_bytes(
        sesstool, walks, _branchy(tmp_path, pattern, zstd), tmp_path
    )


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_branches_are_the_branches_in_memory(walks: Forced, log: Path) -> None:
    for options in (ScanOptions(), ScanOptions(collect_messages=True), ScanOptions(max_findings=1)):
        walks.at(IN_MEMORY)
        expected = _plain(scan_source(log, options).scan)
        assert walks.count == 0
        for entries in (0, 1, 3):
            walks.at(entries)
            scanned = _plain(scan_source(log, options).scan)
            assert _branches(scanned) == _branches(expected), (entries, options)
            assert scanned == expected, (entries, options)
            if expected.facts.scan.entries > entries:
                assert walks.count > 0, "the branch check never took the spilled path"


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_branches_print_and_write_the_same_bytes(
    sesstool: Sesstool, walks: Forced, log: Path, tmp_path: Path
) -> None:
    def outputs(entries: int) -> Outputs:
        walks.at(entries)
        suffix = "".join(log.suffixes[-2:])
        return printed_and_written(sesstool, log, VIEWS, tmp_path / str(entries), suffix=suffix, child=CHILD)

    expected = outputs(IN_MEMORY)
    assert outputs(0) == expected


# -- generated parent arrays ------------------------------------------------------------------

_ENTRY = st.tuples(
    # the parent: -2 none (a root), -1 a uuid no entry has, else entry j's uuid (often one of
    # the first few: many children each)
    st.one_of(st.integers(-2, 24), st.integers(0, 3)),
    st.integers(0, 3),  # 0 usually: the uuid is the entry's own; else a replay of an earlier one
    st.sampled_from([0, 0, 0, SIDECHAIN, RESULTS]),
    st.sampled_from([None, None, "m0", "m1", "m2"]),  # the reply (``message.id``) it is a block of
    st.sampled_from(["s", "s", "s", "t"]),  # its session
)


def _graph(entries: list[tuple[int, int, int, str | None, str]], spill_at: int | None) -> EntryGraph:
    """The graph of ``entries`` as the scanner builds it, moved to a spill file after
    ``spill_at`` entries (None: never). Entry i's uuid is ``u{i}`` unless it replays one."""
    graph = EntryGraph()
    for i, (parent, replay, flags, msg, session) in enumerate(entries):
        if spill_at is not None and i == spill_at:
            graph.spill(SpillFile("a test"))
        uuid = f"u{i - replay}" if 0 < replay <= i else f"u{i}"
        named = None if parent == -2 else f"missing{i}" if parent == -1 else f"u{parent % len(entries)}"
        kind = ASSISTANT if msg is not None else USER
        node = graph.add(uuid, named, "assistant" if msg else "user", (i + 1, 100 * i), flags | kind)
        node = len(graph) - 1
        if msg is not None:
            graph.message(node, msg)
        graph.session(node, session)
    if spill_at is not None and spill_at >= len(entries):
        graph.spill(SpillFile("a test"))
    return graph


def _check(graph: EntryGraph, session: str) -> tuple[int, list[Any]]:
    found = Findings("t.jsonl")
    return graph.branch_check(session, found), list(found.items)


# two parents flagged in the order of their first recorded child (3, then 5), not their own
_FIRST_CHILD_ORDER = [(-2, 0, 0, None, "s"), *((p, 0, 0, None, "s") for p in (0, 1, 1, 2, 0, 3))]


@settings(max_examples=300, deadline=None)
@example(entries=_FIRST_CHILD_ORDER, spill_at=0, batch=1)
@given(
    entries=st.lists(_ENTRY, min_size=1, max_size=40), spill_at=st.integers(0, 41), batch=st.integers(1, 5)
)
def test_the_spilled_check_answers_what_the_check_in_memory_answers(
    entries: list[tuple[int, int, int, str | None, str]], spill_at: int, batch: int
) -> None:
    saved = entry_graph._BATCH, spill.PAGE, spill.CACHED_PAGES
    entry_graph._BATCH, spill.PAGE, spill.CACHED_PAGES = batch, 4, 2
    try:
        in_memory, spilled = _graph(entries, None), _graph(entries, spill_at)
        assert in_memory.store is None and spilled.store is not None
        if entries == _FIRST_CHILD_ORDER:
            assert [f.address.line for f in _check(in_memory, "s")[1]] == [4, 6]
        for session in ("s", "t"):
            assert _check(spilled, session) == _check(in_memory, session)
            assert _check(spilled, session) == _check(in_memory, session)  # asked again: the same
    finally:
        entry_graph._BATCH, spill.PAGE, spill.CACHED_PAGES = saved


def test_a_spilled_fan_costs_lookups_linear_in_its_size(walks: Forced, tmp_path: Path) -> None:
    """tests/claude/test_branch_fan.py on the spilled path: the group lookups of a fan of
    replies grow linearly with it (each child's groups looked up a fixed number of times)."""
    from tests.claude.test_branch_fan import _lookups, fan

    walks.at(0)
    with pytest.MonkeyPatch.context() as patch:
        small, small_branches = _lookups(patch, fan(tmp_path, 500))
        large, large_branches = _lookups(patch, fan(tmp_path, 2000))
    assert walks.count == 2
    assert (small_branches, large_branches) == (499, 1999)
    assert large <= 4.5 * small and large <= 10 * 2000, (small, large)
