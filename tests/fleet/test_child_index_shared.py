"""A `fleet migrate` run's child index (spec §13.A item 5; docs/fleet.md "Subagent children")
travels to the cluster once per run, not once per batch: run.execute installs it on every
worker as a Dask worker plugin (fleet/shared.py) and each batch finds it there by the run's
name. Where the index rode inside every batch's settings, a root of S sessions cut into B
batches serialized it B times on the client (2B with process workers) and each worker rebuilt
it once per batch it ran.

Counted, never timed: ChildIndex's pickling is wrapped (``__reduce_ex__``) so that every
serialization is counted in the process that makes it, and every rebuild in the process that
receives it — the test process (client and scheduler; with a threads cluster also the worker)
and, on a cluster of processes, each worker (``client.run``). Batches of one file make B = S,
at 27 and 87 sessions. The counts are exact, not bounds: the index is no task's data, so
nothing Dask does with task data (work stealing, the active memory manager dropping a replica
that a later batch fetches again, a result computed again) moves it — an earlier version that
shipped it as a task's result saw a worker rebuild it twice now and then, and was reverted.
The rows and every output byte equal those of the same items migrated one by one with the
index in their settings, the path the workers took before; a worker killed mid-run comes back
with the index.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, SupportsIndex

import pytest

from sesstool.engine.children import ChildIndex
from sesstool.fleet.entry import FleetOutput, run_fleet
from sesstool.fleet.rows import Row
from sesstool.fleet.run import FleetRequest, Plan, plan, with_child_index
from sesstool.fleet.work import FleetSettings, process
from sesstool.store.summary import read_jsonl
from tests.conftest import plaintext_of
from tests.migrate.test_child_index import GOLDEN, PARENT, make_root

pytestmark = pytest.mark.fleet

SIZES = (20, 80)  # filler sessions: 27 and 87 sessions in the root
PREFIX = "sesstool-child-index-"

# serializations made and rebuilds received by the process this module runs in (each worker
# process of a cluster has its own copy of this module, hence its own counts)
COUNTS = {"pickled": 0, "rebuilt": 0}


def _reduce(index: ChildIndex, protocol: SupportsIndex) -> tuple[Any, ...]:
    COUNTS["pickled"] += 1
    return _rebuilt, (index.roots,)


def _rebuilt(roots: dict[str, dict[str, tuple[str, ...]]]) -> ChildIndex:
    COUNTS["rebuilt"] += 1
    return ChildIndex(roots)


def _install() -> None:
    """Count here (called in the test process and, by ``client.run``, in every worker)."""
    assert "__reduce_ex__" not in vars(ChildIndex)
    setattr(ChildIndex, "__reduce_ex__", _reduce)  # noqa: B010 (a method set on the class)
    COUNTS.update(pickled=0, rebuilt=0)


def _uninstall() -> None:
    delattr(ChildIndex, "__reduce_ex__")


def _counts() -> dict[str, int]:
    return dict(COUNTS)


def _plugins(dask_worker: Any) -> list[str]:
    return [name for name in dask_worker.plugins if name.startswith(PREFIX)]


def _scheduler_plugins(dask_scheduler: Any) -> list[str]:
    return [name for name in dask_scheduler.worker_plugins if name.startswith(PREFIX)]


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


def _migrate(client: Any, root: Path, out: Path, on_plan: Callable[[Plan], Any] | None = None) -> list[Row]:
    """``fleet migrate`` of the root on ``client``'s cluster, one file per batch; afterwards
    no worker and not the scheduler holds the run's index any more."""
    sessions = sum(1 for p in root.glob("*/*") if p.is_dir())
    address = client.scheduler.address
    request = FleetRequest((str(root),), FleetSettings("migrate"), scheduler=address, batch=1)
    report = run_fleet(request, FleetOutput(out, None, None), on_plan=on_plan)
    rows = [Row.from_dict(r) for r in read_jsonl(out)]
    assert report.failed == 0 and len(rows) == sessions, [r.message for r in rows if not r.succeeded]
    # "exists": a batch whose worker was killed after it published, run again (the kill test)
    assert {r.status for r in rows} <= ({"migrated", "exists"} if on_plan else {"migrated"})
    assert all(next(Path(r.path).parent.glob("session.v4.jsonl*"), None) for r in rows)
    (parent,) = (root / PARENT).parent.glob("session.v4.jsonl*")  # raw, or .zstd
    assert plaintext_of(parent) == GOLDEN.read_bytes()
    assert client.run_on_scheduler(_scheduler_plugins) == []
    assert all(names == [] for names in client.run(_plugins).values())
    return rows


def test_the_index_is_serialized_once_per_run(threads: Any, tmp_path: Path) -> None:
    """Threads: client, scheduler and worker share this process, so every serialization and
    rebuild of the run is counted here: one and one at 27 and at 87 batches (main's code: one
    of each per batch, 27 and 87)."""
    seen: list[dict[str, int]] = []
    for fillers in SIZES:
        _install()
        try:
            _migrate(threads, make_root(tmp_path / str(fillers), fillers), tmp_path / f"{fillers}.jsonl")
        finally:
            _uninstall()
        seen.append(_counts())
    assert seen == [{"pickled": 1, "rebuilt": 1}] * 2, seen


def test_each_worker_receives_the_index_once(cluster: Any, tmp_path: Path) -> None:
    """Processes: the client serializes the index once and each of the 2 workers rebuilds it
    once, at 27 and at 87 batches (main's code: the client serialized it twice per batch, 54
    and 174 times, and each worker rebuilt it once per batch it ran, e.g. 12 + 15 and 38 + 49)."""
    cluster.wait_for_workers(2)  # a worker killed by another test is back
    seen: list[tuple[dict[str, int], list[int]]] = []
    for fillers in SIZES:
        cluster.run(_install)
        _install()
        try:
            _migrate(cluster, make_root(tmp_path / str(fillers), fillers), tmp_path / f"{fillers}.jsonl")
            workers = [c["rebuilt"] for c in cluster.run(_counts).values()]
        finally:
            _uninstall()
            cluster.run(_uninstall)
        seen.append((_counts(), workers))
    assert seen == [({"pickled": 1, "rebuilt": 0}, [1, 1])] * 2, seen


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_the_rows_and_outputs_are_those_of_the_index_in_the_settings(
    threads: Any, tmp_path: Path, zstd: bool
) -> None:
    """The run with the shared index against the same items migrated one by one, the index in
    their settings (what every batch carried before): the same rows, byte-identical trees."""
    fleet = make_root(tmp_path / "fleet", SIZES[0], zstd=zstd)
    alone = make_root(tmp_path / "alone", SIZES[0], zstd=zstd)
    request = FleetRequest((str(alone),), FleetSettings("migrate"))
    items = plan(request).items
    settings = with_child_index(request, items).settings
    assert settings.children is not None and settings.children.candidates(alone, "parent-1")
    before = {_relative(r, alone): r for r in (process(settings, item) for item in items)}
    after = {_relative(r, fleet): r for r in _migrate(threads, fleet, tmp_path / "rows.jsonl")}
    assert before.keys() == after.keys()
    for name, row in after.items():
        was = before[name]
        assert (row.status, row.exit, row.version, row.verdict, row.events, row.rules, row.output_sha256) == (
            was.status, was.exit, was.version, was.verdict, was.events, was.rules, was.output_sha256,
        ), name  # fmt: skip
        expected = was.message.replace(str(alone), str(fleet)) if was.message else None
        assert row.message == expected, name
    assert _tree(fleet) == _tree(alone)


def test_a_restarted_worker_gets_the_index_again(tmp_path: Path) -> None:
    """The only worker of the cluster is killed mid-run: its nanny starts a new one, which gets
    the run's index when it registers, before it takes a batch; every file is migrated (a batch
    on a worker without the index would be "crashed" rows)."""
    from distributed import Client, LocalCluster

    root = make_root(tmp_path, SIZES[0])
    killed: list[int] = []
    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
        ) as c,
        Client(c) as client,  # type: ignore[no-untyped-call]
    ):

        def on_plan(todo: Plan) -> Callable[[int, int], None]:
            def progress(done: int, size: int) -> None:
                if not killed and done >= 2:
                    (pid,) = client.run(os.getpid).values()
                    os.kill(pid, signal.SIGKILL)
                    killed.append(done)

            return progress

        rows = _migrate(client, root, tmp_path / "rows.jsonl", on_plan)
    assert killed and killed[0] < len(rows), "the worker died mid-run"


def _relative(row: Row, root: Path) -> str:
    return Path(row.path).relative_to(root).as_posix()


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
