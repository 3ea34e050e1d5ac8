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
from tests.adversarial.claude_hostile import SESSION
from tests.adversarial.hostile_logs import run_measured
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # 6 pairs of children, the larger on transcripts of 30 to 60 MB

MiB = 1 << 20
N = 20_000
LOWERED = """\
from sesstool.dialects.claude import derive, entry_graph, held, key_index
derive.SPILL_AT = entry_graph.SPILL_AT = held.HELD_AT = key_index.FLUSH_AT = 1024
"""
_COMMANDS = {
    "validate": ["validate"],
    "derive": ["derive", "--format", "jsonl"],
    "inspect": ["inspect"],
}


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("claude-branches")
    (made / "site").mkdir()
    (made / "site" / "sitecustomize.py").write_text(LOWERED)
    return made


def _log(where: Path, pattern: str, n: int) -> Path:
    folder = where / f"{pattern}-{n}"
    log = folder / f"{SESSION}.jsonl"
    if not log.exists():
        folder.mkdir()
        write(log, pattern, n)
    return log


def _peak(where: Path, log: Path, args: list[str]) -> int:
    measured = run_measured(
        [*args, str(log)],
        address_space=2 << 30,
        cwd=log.parent,
        env={"PYTHONPATH": f"{where / 'site'}:{ROOT}"},
    )
    assert measured.exit_code in (0, 1), measured.stderr  # 1: validate's verdict on interleaved branches
    return measured.peak_rss


def test_the_transcripts_hold_what_they_are_named_for(tmp_path: Path) -> None:
    """Small ones, scanned: a branch per prompt (every other one interleaved), a branch per
    reply of the fan but one."""
    from sesstool.engine.scan import scan_source

    def scan(pattern: str) -> Any:
        return scan_source(str(_log(tmp_path, pattern, 50))).scan

    branching, fanned = scan("branching"), scan("fan")
    assert branching.facts.scan.branches == 50
    interleaved = [f for f in branching.findings if f.rule == "claude-concurrent-writers"]
    assert len(interleaved) == 25
    assert fanned.facts.scan.branches == 49


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("command", _COMMANDS)
def test_memory_does_not_grow_with_branches(where: Path, pattern: str, command: str) -> None:
    args = _COMMANDS[command]
    small = _peak(where, _log(where, pattern, N), args)
    large = _peak(where, _log(where, pattern, 4 * N), args)
    assert large - small < 2 * MiB, (round(small / MiB, 2), round(large / MiB, 2))
