"""A `fleet migrate` run's child index (spec §13.A item 5; docs/fleet.md "Subagent children")
travels to the cluster once per run, not once per batch: the client submits it as one task of
its own (work.shared_index) whose result every batch takes as an input, so each worker holds
one copy however many batches it runs. Where the index rode inside every batch's settings, a
root of S sessions cut into B batches serialized it B times (and each worker rebuilt it once
per batch it ran).

Counted, never timed: ChildIndex's pickling is wrapped (``__reduce_ex__``) so that every
serialization is counted in the process that makes it, and every rebuild in the process that
receives it — the test process (client and scheduler; with a threads cluster also the
workers) and, on a cluster of processes, each worker (``client.run``). Batches of one file make
B = S, at 27 and 87 sessions. The rows and every output byte equal those of the same items
migrated one by one with the index in their settings, the path the workers took before.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, SupportsIndex

import pytest

from sesstool.engine.children import ChildIndex
from sesstool.fleet.entry import FleetOutput, run_fleet
from sesstool.fleet.rows import Row
from sesstool.fleet.run import FleetRequest, plan, with_child_index
from sesstool.fleet.work import FleetSettings, process, process_batch, shared_index
from sesstool.store.summary import read_jsonl
from tests.conftest import plaintext_of
from tests.migrate.test_child_index import GOLDEN, PARENT, make_root

pytestmark = pytest.mark.fleet

SIZES = (20, 80)  # filler sessions: 27 and 87 sessions in the root

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


def _migrate(client: Any, root: Path, out: Path) -> list[Row]:
    """``fleet migrate`` of the root on ``client``'s cluster, one file per batch."""
    sessions = sum(1 for p in root.glob("*/*") if p.is_dir())
    address = client.scheduler.address
    request = FleetRequest((str(root),), FleetSettings("migrate"), scheduler=address, batch=1)
    report = run_fleet(request, FleetOutput(out, None, None))
    rows = [Row.from_dict(r) for r in read_jsonl(out)]
    assert report.failed == 0 and len(rows) == sessions, [r.message for r in rows if not r.succeeded]
    assert {r.status for r in rows} == {"migrated"}
    (parent,) = (root / PARENT).parent.glob("session.v4.jsonl*")  # raw, or .zstd
    assert plaintext_of(parent) == GOLDEN.read_bytes()
    return rows


def test_the_index_is_serialized_once_per_run(threads: Any, tmp_path: Path) -> None:
    """Threads: client, scheduler and worker share this process, so every serialization and
    rebuild of the run is counted here — the same few at 27 and 87 batches (measured: one and
    one; main's code: one of each per batch, 27 and 87)."""
    seen: list[dict[str, int]] = []
    for fillers in SIZES:
        _install()
        try:
            _migrate(threads, make_root(tmp_path / str(fillers), fillers), tmp_path / f"{fillers}.jsonl")
        finally:
            _uninstall()
        seen.append(_counts())
    small, large = seen
    assert small == large, seen
    assert 1 <= large["pickled"] <= 2 and large["rebuilt"] <= 2, seen


def test_each_worker_receives_the_index_once(cluster: Any, tmp_path: Path) -> None:
    """Processes: each worker rebuilds the index at most once, however many batches it runs,
    and the client serializes it the same few times at 27 and 87 batches (measured: two, and
    one rebuild per worker; main's code: each worker rebuilt it once per batch it ran — 12 + 15
    and 38 + 49 — and the client serialized it twice per batch, 54 and 174 times)."""
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
    (small, small_workers), (large, large_workers) = seen
    assert small["pickled"] == large["pickled"] <= 2, seen
    assert len(large_workers) == 2 and max(small_workers + large_workers) <= 1, seen
    assert sum(large_workers) >= 1, seen


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


def test_an_index_lost_with_its_worker_is_computed_again(tmp_path: Path) -> None:
    """The index is a task's result, not scattered data: when the one worker holding it is
    killed, the scheduler computes it again on the restarted worker, and a batch that takes it
    as an input still migrates every file (scattered data would be lost for good)."""
    from distributed import Client, LocalCluster

    root = make_root(tmp_path, 3)
    request = FleetRequest((str(root),), FleetSettings("migrate"))
    items = plan(request).items
    settings = with_child_index(request, items).settings
    assert settings.children is not None
    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
        ) as c,
        Client(c) as client,  # type: ignore[no-untyped-call]
    ):
        shared = client.submit(shared_index, settings.children, pure=False)
        assert shared.result() == settings.children
        (pid,) = client.run(os.getpid).values()
        os.kill(pid, signal.SIGKILL)
        batch = client.submit(process_batch, replace(settings, children=None), items, shared, pure=False)
        rows = batch.result(timeout=120)
    assert [r.status for r in rows] == ["migrated"] * len(items), [r.message for r in rows]
    (parent,) = (root / PARENT).parent.glob("session.v4.jsonl")
    assert plaintext_of(parent) == GOLDEN.read_bytes()


def _relative(row: Row, root: Path) -> str:
    return Path(row.path).relative_to(root).as_posix()


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
