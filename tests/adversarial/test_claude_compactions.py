"""Issue 11 item 1: a Claude Code transcript's compactions no longer grow a scan, and derive
finds a compaction by its anchor instead of walking them all. A log can write any number of
``compact_boundary`` entries (spec agent-formats §1.6 "Compaction"); the scan held a record per
boundary in a list (and the scan a tuple of them), inspect built one row and one JSON array of
them all, and derive compared every compact summary's uuid with every compaction's anchor (N
summaries × N compactions). Now they are a ``compactions.Compactions``: a ``HeldList`` in the scan's
spill file past ``held.HELD_AT`` items, found by anchor through ``HeldRows``; inspect's row
shows the first ``FIRST_SEEN`` and how many more, its JSON array is walked as it is written.

Memory: the transcript of claude_hostile.compactions — three entries, then N boundaries each
preserving those three (the same uuids: what grows is the compactions, not the entries they
name) and anchored on the compact summary after it, all on the active chain — of N and of 4N
compactions, N = 5,000 (20,000 until stop 36: files of 4.7 and 19 MB), the children run with
the thresholds lowered to 1,024 as in test_claude_hostile.py, their peak RSS read from the
kernel, never timed.

Measured from N to 4N, ``validate``/``derive``/``inspect``/``inspect --json`` (two runs):
+0.32/+0.47/+0.27/+0.21 and +0.29/+0.16/+0.34/+0.17 MiB. The same children on the code before
(079b1a8^, the parent of the commit that added this test; a worktree of 079b1a8 with its
``sesstool`` checked out from the parent, N set to 5,000): ``validate`` +12.63, ``derive``
+13.35, ``inspect`` +14.89, ``inspect --json`` +35.54 MiB, each at least six times the bound
(at N = 20,000 main's code then grew ``validate`` +50.2, ``inspect`` +63.9, ``inspect --json``
+143.1, its ``derive`` N² anchor comparisons per pass, which the operation count below catches)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.claude_hostile import SESSION, write
from tests.adversarial.lowered import LoweredRuns, assert_flat, lowered_runs

N = 5_000
_COMMANDS = {
    "validate": ["validate"],
    "derive": ["derive", "--format", "jsonl"],
    "inspect": ["inspect"],
    "inspect-json": ["inspect", "--json"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-compactions")


def _scan(log: Path) -> Any:
    from sesstool.dialects.claude.transcript import TranscriptScanner

    scanner = TranscriptScanner(str(log), keep_raw=True)
    offset = 0
    with log.open("rb") as lines:
        for lineno, line in enumerate(lines, 1):
            scanner.line(line.rstrip(b"\n"), offset, lineno)
            offset += len(line)
    scan = scanner.finish()
    return scan, scanner.entries(scan)


def test_the_transcript_holds_what_it_is_named_for(tmp_path: Path) -> None:
    """Each boundary a compaction preserving the three first entries, anchored on the summary
    after it, every summary on the active chain."""
    scan, entries = _scan(write(tmp_path / f"{SESSION}.jsonl", "compactions", 50))
    assert len(scan.compactions) == 50
    summaries = [e for e in entries.values() if e.get("isCompactSummary") is True]
    assert [e["uuid"] for e in summaries] == [c.anchor for c in scan.compactions]
    assert {c.preserved for c in scan.compactions} == {tuple(e["uuid"] for e in list(entries.values())[:3])}


class _Counted(str):
    """A summary's uuid that counts the comparisons made with it."""

    seen = 0

    def __eq__(self, other: object) -> bool:
        _Counted.seen += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__


@pytest.mark.parametrize("n", [100, 400])
def test_derive_finds_a_compaction_by_its_anchor(tmp_path: Path, n: int) -> None:
    """Each compact summary's uuid is compared with at most a few anchors (a dict's look-up), never
    with every compaction's: linear in N (n² = 10,000 and 160,000 comparisons on main's code),
    and each summary still followed by the entries its compaction preserved."""
    from sesstool.dialects.claude.derive import derive

    scan, entries = _scan(write(tmp_path / f"{SESSION}.jsonl", "compactions", n))
    for entry in entries.values():
        if entry.get("isCompactSummary") is True:
            entry["uuid"] = _Counted(entry["uuid"])
    _Counted.seen = 0
    messages = derive(scan, entries).messages
    assert _Counted.seen <= n, _Counted.seen  # one per summary
    texts = [b.get("text") for m in messages for b in m.content]
    assert texts.count("go\n") == n and texts.count(f"summary {n - 1}") == 1


def _write(path: Path, n: int) -> Path:
    return write(path, "compactions", n)


@pytest.mark.slow  # eight children, on transcripts of 4.7 and 19 MB
@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_memory_does_not_grow_with_compactions(runs: LoweredRuns, command: str) -> None:
    peaks = []
    for n in (N, 4 * N):
        log = runs.log(f"compactions-{n}", functools.partial(_write, n=n))
        peaks.append(runs.run(log, _COMMANDS[command]).peak_rss)  # 1: validate's verdict (a user turn last)
    assert_flat(*peaks, label=command)
