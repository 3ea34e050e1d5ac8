"""``python -m tests.fleet._driver_child ROWS SUMMARY [RESUME]``: ``fleet.entry.run_fleet`` as
the CLI's driver runs it, the cluster replaced by ``ROWS`` finished rows (each of one listed
file, a 200-character path) handed back as ``run.execute`` hands back a cluster's: what the
driver does with the rows — the summary, the totals, a ``--resume`` summary's rows carried over
— and nothing the workers or the scheduler hold (docs/reliability.md "Audit, stop 30")."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from sesstool.fleet import entry
from sesstool.fleet.rows import Row
from sesstool.fleet.run import FleetRequest, Plan
from sesstool.fleet.work import FleetSettings, Item


def row(n: int) -> Row:
    path = f"/fleet/{n:08d}/" + "p" * 180 + ".jsonl"
    status = "ok" if n % 3 else "findings"
    return Row(
        path,
        "validate",
        status,
        0,
        "dsh",
        4,
        "clean",
        21,
        0,
        0,
        0,
        0,
        (),
        1000 + n,
        0.001 * n,
        None,
        None,
        None,
    )


def main() -> None:
    count = int(sys.argv[1])
    summary = Path(sys.argv[2])
    resume = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    one = Item("/fleet/one.jsonl", 1, None)

    def execute(*_: Any) -> Iterator[Row]:
        return (row(n) for n in range(count))

    vars(entry).update(
        plan=lambda request: Plan((one,), 0, 1), dask_client=lambda request: nullcontext(), execute=execute
    )
    request = FleetRequest(("/fleet",), FleetSettings("validate"))
    report = entry.run_fleet(request, entry.FleetOutput(summary, None, resume))
    print(report.files, report.carried, report.failed, dict(report.by_status), report.bytes)


if __name__ == "__main__":
    main()
