"""Issue 11 item 1, what is still held: the fleet's plan kept an ``Item`` per listed file (a
tuple of them, and a list and a dict on the way), ``engine.validate.expand_paths`` a list of a
local directory's paths (and a dict to drop repeats), and ``batches`` a list of every batch, all
made before the first task was submitted. Now the listing streams: the paths from the walk's
``store.paths.SortedPaths``, each once by a ``core.held_map.HeldMap``, the items to a
``store.spool.ItemSpool``, and the batches are made one at a time as ``run.execute`` submits
them (a bounded number in flight).

Peak RSS of a child (``hostile_logs.run_measured``, one malloc arena, ``FIXED_MMAP``) running the
driver (``_plan_child``: the real listing, plan and ``execute``, the cluster replaced by one that
answers each batch at once) over a directory of N = 4,000 and 4N = 16,000 tiny logs, every
threshold the plan passes lowered so that both sizes are past it (the paths and the paths
listed to 64, the spool to 64 KiB): within 1.5 MiB, as ``test_many_logs.py``. Figures in the
docstring of ``test_the_plan_holds_no_item_per_file`` and docs/reliability.md."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, MiB, assert_flat, run_measured
from tests.adversarial.lowered import LoweredRuns
from tests.conftest import FIXTURES, ROOT

N = 4000
BOUND = MiB + MiB // 2
LOWERED = """\
from sesstool.core import held_map
from sesstool.store import paths, spool
held_map.HELD_AT = 64
paths.PATHS_HELD = 64
spool.ITEMS_MEMORY = 64 << 10
"""
TINY = FIXTURES / "dsh" / "v4-tiny" / "session.v4.jsonl"


def write_logs(where: Path, n: int) -> Path:
    """``n`` copies of a tiny v4 log under ``where/logs-n``, in 16 folders, each name 120
    characters (a listing's paths are as long as the store's keys)."""
    root = where / f"logs-{n}"
    if root.exists():
        return root
    tiny = TINY.read_bytes()
    for i in range(n):
        folder = root / f"team-{i % 16:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:08d}-{'s' * 100}.jsonl").write_bytes(tiny)
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return LoweredRuns(tmp_path_factory.mktemp("fleet-plan"), LOWERED)


def _driver(runs: LoweredRuns, n: int, command: str) -> int:
    root = write_logs(runs.where, n)
    summary = runs.where / f"summary-{n}-{command}.jsonl"
    summary.unlink(missing_ok=True)
    measured = run_measured(
        [command, str(summary), str(root)],
        address_space=2 << 30,
        cwd=runs.where,
        env={"PYTHONPATH": f"{runs.where / 'site'}:{ROOT}", **FIXED_MMAP},
        module=("tests.fleet._plan_child",),
    )
    assert measured.exit_code == 0, measured.stderr
    assert measured.stdout.decode().startswith(f"{n} 0 "), measured.stdout
    rows = summary.read_bytes().splitlines()
    assert len(rows) == n
    names = [orjson.loads(row)["path"] for row in rows]
    assert names == sorted(names) and len(set(names)) == n  # every file once, in listing order
    return measured.peak_rss


@pytest.mark.slow  # four children over 4,000 and 16,000 files
@pytest.mark.parametrize("command", ["validate", "migrate"])
def test_the_plan_holds_no_item_per_file(runs: LoweredRuns, command: str) -> None:
    """On main's code before (2a80eb3) N → 4N grew validate 31.19 → 35.45 MiB (+4.26) and
    migrate 31.70 → 35.80 (+4.10): both fail; now 30.29 → 30.23 and 30.70 → 30.66 (a second
    run: 30.32 → 30.25, 30.78 → 31.19). Each change alone leaves most of it: the plan streamed
    with ``expand_paths``' list +3.01, ``expand_paths`` streamed with the plan's tuple +3.80."""
    small = _driver(runs, N, command)
    large = _driver(runs, 4 * N, command)
    print(command, N, round(small / MiB, 2), "→", round(large / MiB, 2))
    assert_flat(small, large, BOUND)
