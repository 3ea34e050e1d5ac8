"""Issue 11 item 1, stop 30: the Codex shapes stop 29's audit did not try. A rollout of N turns
then N ``thread_rolled_back`` of one turn each (``codex_hostile.rolled_back_one_by_one``): the
peak RSS of a child (``hostile_logs.run_measured``, the history's spill threshold lowered to
1,024 items, ``FIXED_MMAP``) must not grow from N = 5,000 to 4N.

On main's code before (a74b652) each rollback copied the history it kept into new columns — past
the threshold, new tables of the spill file each time: ``derive`` of 1,000 → 4,000 such turns
peaked 33.77 → 41.20 MiB (``report`` 33.67 → 42.95), the 4N run taking 104 s (366 s) of n²
copies; now 32.45 → 35.69 (36.84) in 2.7 s (both with a run this short's one-time ramp), and
from 5,000 to 20,000 turns 36.60 → 36.84 (``report`` 36.86 → 38.13). A guard of that risk: main's
run at 20,000 turns (n² time, over half an hour) was not measured. The other shapes tried, and
flat, are in docs/reliability.md ("Audit, stop 30")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.codex_hostile import rolled_back_one_by_one
from tests.adversarial.hostile_logs import FIXED_MMAP, MiB, assert_flat, run_measured
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

LOWERED = "from sesstool.dialects.codex import history\nhistory.SPILL_AT = 1024\n"
N = 5_000
NAME = "rollout-2026-12-01T13-53-17-01a231e1-985a-79f2-b0b7-1aef24b0bd09.jsonl"


def _peak(where: Path, n: int, args: list[str]) -> int:
    log = where / f"rolled-{n}" / NAME
    if not log.exists():
        log.parent.mkdir(parents=True)
        rolled_back_one_by_one(log, n)
    (log.parent / "out.html").unlink(missing_ok=True)
    measured = run_measured(
        [*args, str(log)],
        address_space=2 << 30,
        cwd=log.parent,
        env={"PYTHONPATH": f"{where / 'site'}:{ROOT}", **FIXED_MMAP},
    )
    assert measured.exit_code == 0, measured.stderr
    if args[0] == "derive":
        assert measured.stdout == b""  # every turn rolled back
    return measured.peak_rss


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("codex-rollbacks")
    (made / "site").mkdir()
    (made / "site" / "sitecustomize.py").write_text(LOWERED)
    return made


@pytest.mark.parametrize(
    "args", [["derive", "--format", "jsonl"], ["report", "-o", "out.html"]], ids=["derive", "report"]
)
def test_rolling_back_turn_by_turn_holds_no_more_for_more_turns(where: Path, args: list[str]) -> None:
    small, large = _peak(where, N, args), _peak(where, 4 * N, args)
    print(args[0], N, round(small / MiB, 2), "→", round(large / MiB, 2))
    assert_flat(small, large)
