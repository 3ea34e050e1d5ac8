"""``python -m tests.migrate.upgrade_child LOG``: the log's committed records through the upgrade
chain to the newest version as ``migrate`` runs it (``engine.records.upgraded_lines``, one run
spill), the lines counted and dropped: what a memory test of the chain alone measures in a child
(tests/migrate/test_run_spill_memory.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from sesstool.core.options import ScanOptions
from sesstool.core.upgrade.chain import chain
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import scan_source
from sesstool.store.source import ReadLimits


def main(path: Path) -> int:
    report = scan_source(path, ScanOptions())
    scan = report.scan
    assert scan.version is not None and scan.header is not None
    _, lines = upgraded_lines(
        path, report.source.encoding, dict(scan.header.raw), report.dialect, scan.body_offset or 0,
        scan.tail.committed_bytes, chain(scan.version, 4), 4, ReadLimits(),
    )  # fmt: skip
    return sum(1 for _ in lines)


if __name__ == "__main__":
    sys.stdout.write(f"{main(Path(sys.argv[1]))}\n")
