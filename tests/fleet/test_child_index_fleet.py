"""`fleet migrate` over a dsh root does O(S) header reads for S sessions (spec §13.A item 5;
docs/fleet.md "Subagent children"): the client lists the root once and reads each session's
header once, and each migration visits only its listed candidates — where every migration used
to walk the whole root twice (~2·S² header reads; 12.5× the CPU for 4× the sessions).

Operation counts, never wall clock: the run's workers are threads of this process (a
LocalCluster without processes) so that engine.children's reads can be counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sesstool.fleet.entry import FleetOutput, run_fleet
from sesstool.fleet.rows import Row
from sesstool.fleet.run import FleetRequest
from sesstool.fleet.work import FleetSettings
from sesstool.store.summary import read_jsonl
from tests.conftest import plaintext_of
from tests.migrate.test_child_index import GOLDEN, PARENT, Counts, make_root

pytestmark = pytest.mark.fleet


@pytest.fixture(scope="module")
def threads() -> Iterator[Any]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
        ) as c,
        Client(c) as client,  # type: ignore[no-untyped-call]
    ):
        yield client


def _run(threads: Any, tmp_path: Path, fillers: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, Counts]:
    root = make_root(tmp_path, fillers)
    sessions = sum(1 for p in root.glob("*/*") if p.is_dir())
    with monkeypatch.context() as patch:
        counts = Counts(patch)
        request = FleetRequest((str(root),), FleetSettings("migrate"), scheduler=threads.scheduler.address)
        report = run_fleet(request, FleetOutput(tmp_path / "rows.jsonl", None, None))
    rows = [Row.from_dict(r) for r in read_jsonl(tmp_path / "rows.jsonl")]
    assert report.failed == 0 and len(rows) == sessions
    assert {r.status for r in rows} == {"migrated"}
    assert plaintext_of(root / str(PARENT).replace("v3", "v4")) == GOLDEN.read_bytes()
    return sessions, counts


def test_fleet_migrate_reads_each_header_once(
    threads: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, at_s = _run(threads, tmp_path / "s", 20, monkeypatch)
    large, at_4s = _run(threads, tmp_path / "4s", 80, monkeypatch)
    children = 4  # parent-1's kid-a, kid-b, kid-c, kid-known: each re-verified when used
    for sessions, counts in ((small, at_s), (large, at_4s)):
        assert counts.listings == 1, "one listing of the root per run"
        assert counts.headers == sessions + children, (sessions, counts.headers)
    assert at_4s.headers < 4 * at_s.headers
