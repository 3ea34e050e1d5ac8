"""The peak RSS of a whole ``migrate`` of a generated log, in a child with the audit's
thresholds lowered (a ``sitecustomize`` in ``where/site``) and glibc's mmap threshold fixed
(``hostile_logs.FIXED_MMAP``): shared by the migrate memory tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.adversarial.hostile_logs import FIXED_MMAP, run_measured
from tests.conftest import ROOT


def migrate_peak(where: Path, log: Path, write: Callable[[Path, int], None], n: int) -> tuple[int, bytes]:
    """Write ``n`` units to ``log`` (under ``where``), migrate it to ``out.jsonl`` beside it and
    answer (peak RSS, what was written); both files are removed."""
    log.parent.mkdir(parents=True)
    write(log, n)
    measured = run_measured(
        ["migrate", "-o", "out.jsonl", str(log)],
        address_space=2 << 30,
        cwd=log.parent,
        env={"PYTHONPATH": f"{where / 'site'}:{ROOT}", **FIXED_MMAP},
    )
    assert measured.exit_code == 0, measured.stderr
    out = log.parent / "out.jsonl"
    written = out.read_bytes()
    log.unlink()
    out.unlink()
    return measured.peak_rss, written
