"""Issue 11 item 1, fourth round: a Claude Code transcript of many branches — many parents each
with two children that are not blocks of one streamed reply, or one parent with a fan of such
children — no longer grows the branch check (``entry_graph.branch_check``): once the graph is in
its spill file, the children are rows of a table there, counted per reply and sorted by SQLite,
and walked a batch at a time (``EntryGraph._spilled_siblings``), where they were a dict of
Python lists of every parent with two children or more. The same kind of transcript of N and of
4N units, N = 10,000 branching prompts or 20,000 replies of the fan, the children run with the
thresholds lowered to 1,024 (``sitecustomize``, as test_claude_hostile.py does: both sizes far
past them), their peak RSS read from the kernel under an address-space limit, never timed.

Measured from N to 4N, ``validate``/``derive``/``inspect`` (two runs): branching −0.09/+0.30/−0.11
and +0.20/+0.28/−0.27 MiB, fan −0.02/+0.52/−0.08 and +0.16/+0.75/−0.14. The code before (91e0ba8^;
a worktree of 91e0ba8, its ``sesstool`` checked out from the parent) grew branching at N = 10,000
+14.27/+10.67/+13.80 MiB, five times the bound or more, and (the commit that added this test, at
N = 20,000 for both) the fan +11.25/+11.08/+11.14: the fan keeps its N, half of it would leave
the code before within three times the bound. Branching was 20,000 until stop 36 (the suite's
time: its three cases took 50 of this file's 65 s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.claude_branches import PATTERNS, write
from tests.adversarial.lowered import LoweredRuns, assert_flat, lowered_runs

pytestmark = pytest.mark.slow  # 6 pairs of children, the larger on transcripts of 34 and 51 MB

N = {"branching": 10_000, "fan": 20_000}  # units in the smaller transcript (see above)
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
    args, n = _COMMANDS[command], N[pattern]  # exit 1: validate's verdict on interleaved branches
    small = runs.run(_log(runs, pattern, n), args).peak_rss
    large = runs.run(_log(runs, pattern, 4 * n), args).peak_rss
    assert_flat(small, large, label=f"{pattern}-{command}")
