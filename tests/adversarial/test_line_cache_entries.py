"""Issue 11 item 1: derive's read-back cache of lines (``store.line_fetch.LineFetcher``) is
bounded in bytes, ``CACHE_BYTES`` (4 MiB) — and counted only the lines' bytes: an entry of a
tiny line cost about 230 bytes (its offset, the ``bytes`` object, the ordered dict's slot) that
the budget never saw, so a log of many tiny lines filled the cache with up to 4 Mi entries of
one byte (hundreds of MiB). Now each entry counts ``ENTRY_BYTES`` (256) beside its line.

Peak RSS of a child (``_line_fetch_child``: every line of a raw log of N lines ``{}`` fetched in
order), the mmap threshold fixed, never timed: N = 200,000 and 4N. On main's code the 4N child
peaked +107.1 MiB above the N child (55.73 → 162.79 MiB); here +0.03 and +0.04 in two runs
(24.88 → 24.91, 24.89 → 24.93). (With 160 an entry, the 4N child was within 0.3 MiB at N =
200,000 but +1.8 MiB from N = 100,000: the cache full, its table not yet grown to the size of
its steady state, where entries come and go; 256 counts that table too.)"""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.hostile_logs import FIXED_MMAP, assert_flat, run_measured
from tests.conftest import ROOT

N = 200_000  # the cache full, and its table grown to its steady size, at N already


def _tiny_lines(where: Path, n: int) -> Path:
    log = where / f"tiny-{n}.jsonl"
    log.write_bytes(b"{}\n" * n)
    return log


def test_many_tiny_entries_keep_the_cache_within_its_bytes(tmp_path: Path) -> None:
    peaks = []
    for n in (N, 4 * N):
        run = run_measured(
            [str(_tiny_lines(tmp_path, n)), str(n)],
            address_space=2 << 30,
            cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
            module=("tests.adversarial._line_fetch_child",),
        )
        assert run.exit_code == 0, run.stderr
        peaks.append(run.peak_rss)
    assert_flat(*peaks)
