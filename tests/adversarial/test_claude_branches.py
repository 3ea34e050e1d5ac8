"""Issue 11 item 1, fourth round: a Claude Code transcript of many branches — many parents each
with two children that are not blocks of one streamed reply, or one parent with a fan of such
children — no longer grows the branch check (``entry_graph.branch_check``): once the graph is in
its spill file, the children are rows of a table there, counted per reply and sorted by SQLite,
and walked a batch at a time (``EntryGraph._spilled_siblings``), where they were a dict of
Python lists of every parent with two children or more. The same kind of transcript of N and of
4N units, N = 20,000, the children run with the thresholds lowered to 1,024 (``sitecustomize``,
as test_claude_hostile.py does: both sizes far past them), their peak RSS read from the kernel
under an address-space limit, never timed. Figures: the commit that added this test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.claude_branches import PATTERNS, write
from tests.adversarial.lowered import LoweredRuns, assert_flat, lowered_runs

pytestmark = pytest.mark.slow  # 6 pairs of children, the larger on transcripts of 30 to 60 MB

N = 20_000
_COMMANDS = {
    "validate": ["validate"],
    "derive": ["derive", "--format", "jsonl"],
    "inspect": ["inspect"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-branches")


def _log(runs: LoweredRuns, pattern: str, n: int) -> Path:
    return runs.log(f"{pattern}-{n}", lambda path: write(path, pattern, n))


def test_the_transcripts_hold_what_they_are_named_for(tmp_path: Path) -> None:
    """Small ones, scanned: a branch per prompt (every other one interleaved), a branch per
    reply of the fan but one."""
    from sesstool.engine.scan import scan_source

    def scan(pattern: str) -> Any:
        return scan_source(str(_log(LoweredRuns(tmp_path), pattern, 50))).scan

    branching, fanned = scan("branching"), scan("fan")
    assert branching.facts.scan.branches == 50
    interleaved = [f for f in branching.findings if f.rule == "claude-concurrent-writers"]
    assert len(interleaved) == 25
    assert fanned.facts.scan.branches == 49


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("command", _COMMANDS)
def test_memory_does_not_grow_with_branches(runs: LoweredRuns, pattern: str, command: str) -> None:
    args = _COMMANDS[command]  # exit 1: validate's verdict on interleaved branches
    small = runs.run(_log(runs, pattern, N), args).peak_rss
    assert_flat(small, runs.run(_log(runs, pattern, 4 * N), args).peak_rss)
