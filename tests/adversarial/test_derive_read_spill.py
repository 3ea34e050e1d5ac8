"""Issue 11 item 1, second round: dsh derive reads its messages back by address
(engine/derive_read.py), and when replacements moved lines out of file order it must put the
wanted offsets in surface order again and hold the lines that come before their turn. Up to
``derive_read.SORT_AT`` offsets that happens in memory; past it the sort and the waiting lines
are in a spill file (store/spill_sort.py), so a log of 4N such nodes costs every command that
reads back within a fixed bound (2 MiB) of the log of N. Peak RSS from the kernel for a child
under an address-space limit, never the clock; the children run with both thresholds (the
fold's ``SPILL_AT`` too, else the fold's own words grow) at 4,096, so tens of thousands of
nodes take the path millions take.

The hostile log: N user messages, then N/2 replace events each swapping one of the first N/2
messages for a new line at the end of the file — the surface starts with the last lines of the
file, and every original message after them waits for its turn. Before: a sorted list of every
wanted offset (~40 bytes each) and a dict entry per waiting line. Measured from 20,000 to
80,000 messages: derive JSONL +0.82 MiB, JSON +0.82, ``report`` +0.77; before +5.77, +5.60 and
+4.40."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import V4_HEADER, v4_user
from tests.adversarial.lowered import DERIVE_COMMANDS, READ_BACK_LOWERED, LoweredRuns, lowered_fixture

pytestmark = pytest.mark.slow  # six children, the larger on a 25 MB log

MiB = 1 << 20
SMALL = 20_000


def replaced_out_of_order(path: Path, count: int) -> Path:
    """``count`` user messages, then ``count // 2`` replaces of the first ``count // 2``, one
    node each, by new lines at the end (§5: the surface order is no longer the file order)."""
    with path.open("wb") as f:
        f.write(V4_HEADER)
        for seq in range(count):
            f.write(v4_user(seq, "m"))
        for k in range(count // 2):
            op = {"op": "replace", "startSeq": k, "endSeq": k}
            f.write(v4_user(count + k, "r", sourceEventSeqs=[k], surfaceOp=op))
    return path


where = lowered_fixture("derive-read-spill", READ_BACK_LOWERED)


def _peak(where: LoweredRuns, n: int, args: list[str]) -> tuple[int, bytes]:
    log = where.log(f"r{n}", lambda path: replaced_out_of_order(path, n), f"r{n}.v4")
    measured = where.run(log, args, ok=(0,))
    return measured.peak_rss, measured.stdout


@pytest.mark.parametrize(
    "args",
    [DERIVE_COMMANDS["jsonl"], DERIVE_COMMANDS["json"], [*DERIVE_COMMANDS["report"], "-o", "report.html"]],
    ids=["jsonl", "json", "report"],
)  # fmt: skip
def test_read_back_memory_does_not_grow_out_of_file_order(where: LoweredRuns, args: list[str]) -> None:
    small, _ = _peak(where, SMALL, args)
    large, out = _peak(where, 4 * SMALL, args)
    assert large - small < 2 * MiB, (round(small / MiB, 2), round(large / MiB, 2))
    if args[-1] == "jsonl":
        ids = [orjson.loads(line)["id"] for line in out.splitlines()]
        n = 4 * SMALL
        assert ids == [f"u{n + k}" for k in range(n // 2)] + [f"u{k}" for k in range(n // 2, n)]
