"""Issue 11 item 1, a directory's paths (docs/reliability.md, the "one report per file" row and
"Still growing, not bounded" (3)): ``list`` and ``inspect`` of a root kept the root's sorted
list of paths (pathlib's glob, a set, a sorted list, a tuple), and ``validate DIR`` its expanded
list (pathlib's ``rglob``, which keeps a set of every path it yielded, a ``dict.fromkeys`` copy)
and the set of paths it checked. Now the walks stream into ``store.paths.SortedPaths`` (a
``SpillingOrder``: sorted in memory up to ``PATHS_HELD``, then by SQLite in a spill file) and
``validate`` keeps the paths checked in a ``core.held_map.HeldMap``.

Peak RSS of a child (``hostile_logs.run_measured``, one malloc arena, ``FIXED_MMAP``) for a
Claude Code home of N = 2,000 and 4N = 8,000 tiny transcripts in one project, every threshold a
run passes lowered so that both sizes are past it (the paths and the paths checked to 64, the
rows to 64, the spool to 64 KiB): within 1.5 MiB. On the code before (e8a464b) every case grew
by more and fails: ``list`` / ``list --json`` / ``inspect`` / ``validate`` / ``validate
--format json`` 32.11 → 35.74 / 32.08 → 35.83 / 32.09 → 34.79 / 29.52 → 35.50 / 29.42 → 35.49
MiB (+3.63 / +3.75 / +2.70 / +5.98 / +6.07); now 31.95 → 32.76 / 31.79 → 32.70 / 32.31 →
32.49 / 30.00 → 30.64 / 29.22 → 29.98 (+0.81 / +0.91 / +0.18 / +0.64 / +0.76; up to +0.98 over
two runs: what is left is one-time, SQLite's page cache of the spill file filling to its bound
and the interpreter's table of interned names, which each file's ``Path`` passes through)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, Measured, MiB, assert_flat
from tests.adversarial.lowered import LoweredRuns
from tests.adversarial.many_files import SEED, SESSION

pytestmark = pytest.mark.slow

N = 2000
BOUND = MiB + MiB // 2
LOWERED = """\
from sesstool.core import held_map
from sesstool.engine import listing
from sesstool.store import paths, spool
held_map.HELD_AT = 64
listing.ROWS_HELD = 64
paths.PATHS_HELD = 64
spool.ITEMS_MEMORY = 64 << 10
"""

CASES = [["list"], ["list", "--json"], ["inspect"], ["validate"], ["validate", "--format", "json"]]


def write_home(home: Path, n: int) -> None:
    """``home/projects/many/<id>.jsonl``: ``n`` transcripts of one entry each (the seed session's
    first), each its own session."""
    project = home / "projects" / "many"
    project.mkdir(parents=True)
    first = json.loads((SEED / f"{SESSION}.jsonl").read_bytes().splitlines()[0])
    for i in range(n):
        session = f"{i:08x}-0000-4000-8000-000000000000"
        entry = {**first, "sessionId": session, "uuid": f"00000000-0000-4000-8000-{i:012x}"}
        (project / f"{session}.jsonl").write_bytes(json.dumps(entry).encode() + b"\n")


class Runs(LoweredRuns):
    """A Claude Code home of ``n`` transcripts per size, written once, run as ``LoweredRuns``."""

    def home(self, n: int) -> Path:
        home = self.where / f"home-{n}"
        if not home.exists():
            write_home(home, n)
        return home

    def run_home(self, n: int, args: list[str]) -> Measured:
        return self.run(self.home(n), args, env=FIXED_MMAP)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory.mktemp("many-logs"), LOWERED)


def test_every_log_is_listed_and_checked(runs: Runs) -> None:
    listed = runs.run_home(200, ["list"]).stdout.decode()
    assert "200 session logs: 200 clean" in listed
    checked = runs.run_home(200, ["validate", "--format", "json"]).stdout
    assert json.loads(checked)["summary"]["files"] == 200


@pytest.mark.parametrize("args", CASES, ids=["-".join(a.lstrip("-") for a in c) for c in CASES])
def test_memory_does_not_grow_with_the_logs(runs: Runs, args: list[str]) -> None:
    small = runs.run_home(N, args).peak_rss
    large = runs.run_home(4 * N, args).peak_rss
    print(args, N, round(small / MiB, 2), "→", round(large / MiB, 2))
    assert_flat(small, large, BOUND)
