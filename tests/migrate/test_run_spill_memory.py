"""Issue 11 item 1, docs/reliability.md "Audit, stop 29" (1) and (2): the upgrade chain alone, as
``migrate`` runs it (``tests.migrate.upgrade_child``: one run spill), in a child whose peak RSS
(read from the kernel, never timed: ``hostile_logs.run_measured``) must not grow from N to 4N
units of the audit's shapes (tests/adversarial/test_growth_audit.py) — ``SeqRemap``'s change
points (a v2 → v3 system message per changed request/header) and dropped runs (an unclaimed v1
attempt per step: through ``migrate`` in test_growth_audit.py), and the events v1 → v2 holds
behind an attempt nobody claims. On main's code before (a74b652), N → 4N MiB: changed headers
(80,000) 30.68 → 33.72, held behind an attempt (20,000) 54.43 → 149.70: both fail there (now
29.56 → 29.82 and 29.70 → 30.71)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, MiB, assert_flat, run_measured
from tests.adversarial.test_growth_audit import changed_headers, held_behind_attempt
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

CASES = [
    ("changed-headers", changed_headers, "session.v2.jsonl", 80_000),
    ("held-behind-attempt", held_behind_attempt, "session.v1.jsonl", 20_000),
]


def _peak(where: Path, shape: str, write: Callable[[Path, int], None], name: str, n: int) -> int:
    log = where / f"{shape}-{n}" / name
    log.parent.mkdir(parents=True)
    write(log, n)
    measured = run_measured(
        [str(log)],
        address_space=2 << 30,
        cwd=log.parent,
        env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
        module=("tests.migrate.upgrade_child",),
    )
    assert measured.exit_code == 0, measured.stderr
    assert int(measured.stdout) > n
    log.unlink()
    return measured.peak_rss


@pytest.mark.parametrize(("shape", "write", "name", "n"), CASES, ids=[c[0] for c in CASES])
def test_the_chain_does_not_grow_with_the_units(
    tmp_path: Path, shape: str, write: Callable[[Path, int], None], name: str, n: int
) -> None:
    small = _peak(tmp_path, shape, write, name, n)
    large = _peak(tmp_path, shape, write, name, 4 * n)
    print(shape, n, round(small / MiB, 2), "→", round(large / MiB, 2))
    assert_flat(small, large)
