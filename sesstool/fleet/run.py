"""Run one command over a fleet of logs on Dask: list, skip what --resume says is done, batch,
submit with a bounded number of tasks in flight, and hand back rows as batches finish.

A batch is a Dask task (`work.process_batch`); Dask re-runs the batches of a worker that dies,
and a batch that keeps killing workers (or fails for any other reason) becomes one "crashed"
row per file: every listed file gets exactly one row.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sesstool.core.errors import UsageError
from sesstool.core.held_map import HeldMap
from sesstool.dialects import registry
from sesstool.engine.children import index_children
from sesstool.fleet.rows import Row, error_row
from sesstool.fleet.work import FleetSettings, Item, process_batch
from sesstool.store.generations import parse_generation_name
from sesstool.store.layout import dsh_session_dir
from sesstool.store.object_publish import check_conditional_create
from sesstool.store.paths import SortedPaths, file_size
from sesstool.store.remote import basename, is_url, list_logs, parent, using_storage_options
from sesstool.store.run_spill import spilled_strings
from sesstool.store.spool import ItemSpool

# Files per task when --batch is not given: enough tasks to balance the workers, few enough
# that the scheduler's per-task cost (about a millisecond) stays small next to the work.
MAX_AUTO_BATCH = 64
BATCH_BYTES = 512 * 1024**2
IN_FLIGHT_PER_THREAD = 4

Progress = Callable[[int, int], None]  # (files done, bytes done)


@dataclass(frozen=True, slots=True)
class FleetRequest:
    urls: tuple[str, ...]
    settings: FleetSettings
    scheduler: str | None = None  # address of an existing cluster; None: a LocalCluster
    workers: int | None = None  # LocalCluster size (default: the CPU count)
    threads_per_worker: int = 1
    batch: int | None = None  # files per task (None: automatic)
    done: HeldMap | frozenset[str] = frozenset()  # --resume: paths that already have a final row


@dataclass(frozen=True, slots=True)
class Plan:
    items: Collection[Item]  # to process, in listing order (a ``store.spool.ItemSpool``)
    skipped: int  # already done according to --resume
    total_bytes: int


LISTED_HELD = "the files a fleet run lists"  # a ``HeldMap``'s purpose: in memory up to ``HELD_AT``


def plan(request: FleetRequest) -> Plan:
    """List every input once (the client does this once; see docs/fleet.md on listing cost),
    each path once — the first time it is listed — in listing order, as it is listed: the items
    go to a ``store.spool.ItemSpool`` (pickled, past ``ITEMS_MEMORY`` bytes in an unnamed
    temporary file) and the paths listed to a ``core.held_map.HeldMap`` (past ``HELD_AT`` in a
    spill file), so the driver holds no item per file (issue 11 item 1)."""
    items: ItemSpool[Item] = ItemSpool()
    listed = HeldMap(LISTED_HELD, spilled_strings)
    skipped = total = 0
    with using_storage_options(request.settings.options):
        for url in request.urls:
            for entry in _listed(url):
                if entry.path in request.done:
                    skipped += 1
                elif entry.path not in listed:
                    listed.put(entry.path, "")
                    items.append(entry)
                    total += entry.size or 0
    return Plan(items, skipped, total)


def with_child_index(request: FleetRequest, items: Iterable[Item]) -> FleetRequest:
    """migrate: the request with one index of the subagent children (§13.A item 5) of every
    local dsh root its items lie in, built here once — one listing of each root and one header
    read per session — and shipped to every item, instead of each migration walking its root.
    The candidates are the root as listed when the run starts, as the items are (docs/fleet.md).
    The roots are held (a few, each of many sessions), not the items: they are walked."""
    if request.settings.command != "migrate":
        return request
    roots: dict[str, Path] = {}
    for item in items:
        layout = None if is_url(item.path) else dsh_session_dir(Path(item.path))
        if layout is not None:
            roots.setdefault(str(layout[0]), layout[0])
    if not roots:
        return request
    index = index_children(roots.values(), request.settings.limits)
    return replace(request, settings=replace(request.settings, children=index))


def _listed(url: str) -> Iterator[Item]:
    if is_url(url):
        for entry in list_logs((url,), suffixes=registry.log_suffixes()):
            yield Item(entry.url, entry.size, entry.tag)
        return
    from sesstool.engine.validate import expand_paths

    for path in expand_paths((url,)):
        yield Item(path, file_size(path), None)  # None: becomes the engine's own "cannot open" row


def batches(items: Collection[Item], size: int | None, threads: int) -> Iterator[tuple[Item, ...]]:
    """Consecutive (so prefix-grouped) runs of files, cut at ``size`` files or BATCH_BYTES —
    never between two files of one local session directory: the write commands hold its
    ``session.lock``, so its generations run one after the other in one task. Made as the items
    are walked, one batch at a time (the caller submits a bounded number: ``execute``)."""
    if size is None:
        size = max(1, min(MAX_AUTO_BATCH, len(items) // max(1, threads * 8)))
    current: list[Item] = []
    weight = 0
    for item in items:
        same_dir = bool(current) and _session_dir(current[-1]) == _session_dir(item) is not None
        if current and not same_dir and (len(current) >= size or weight + (item.size or 0) > BATCH_BYTES):
            yield tuple(current)
            current, weight = [], 0
        current.append(item)
        weight += item.size or 0
    if current:
        yield tuple(current)


def _session_dir(item: Item) -> str | None:
    """The local session directory whose lock a write command takes for this file, if any."""
    if is_url(item.path) or parse_generation_name(basename(item.path)) is None:
        return None
    return parent(item.path)


def check_targets(request: FleetRequest, items: Iterable[Item]) -> bool:
    """Write commands on object storage: refuse before any work unless every target prefix's
    store refuses overwrites (the probe in store.object_publish, run here on the client only).
    True when prefixes were proven (the workers then publish without probing again). The
    prefixes (one per remote session directory) are a ``store.paths.SortedPaths``: sorted and
    each once, past ``PATHS_HELD`` in a spill file."""
    if request.settings.command not in ("migrate", "repair"):
        return False
    prefixes = SortedPaths(parent(i.path) for i in items if is_url(i.path))
    try:
        with using_storage_options(request.settings.options):
            for prefix in prefixes:
                check_conditional_create(f"{prefix}/probe", request.settings.options)
        return bool(prefixes)
    finally:
        prefixes.close()


@contextmanager
def dask_client(request: FleetRequest) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    if request.scheduler:
        with Client(request.scheduler) as client:  # type: ignore[no-untyped-call]
            yield client
        return
    workers = request.workers or os.cpu_count() or 1
    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers,
            threads_per_worker=request.threads_per_worker,
            processes=True,
            dashboard_address=":0",
            host="127.0.0.1",
        ) as cluster,
        Client(cluster) as client,  # type: ignore[no-untyped-call]
    ):
        yield client


def execute(
    request: FleetRequest, todo: Plan, client: Any, progress: Progress | None = None
) -> Iterator[Row]:
    """Rows as their batches finish (order varies); exactly one row per planned item."""
    from distributed import as_completed

    threads = sum(client.nthreads().values()) or 1
    pending = batches(todo.items, request.batch, threads)
    limit = threads * IN_FLIGHT_PER_THREAD
    batch_of: dict[Any, tuple[Item, ...]] = {}

    with _shared_index(request.settings, client) as (settings, index):

        def submit() -> Any | None:
            batch = next(pending, None)
            if batch is None:
                return None
            future = client.submit(process_batch, settings, batch, index, pure=False)
            batch_of[future] = batch
            return future

        first = [f for f in (submit() for _ in range(limit)) if f is not None]
        files = done_bytes = 0
        queue = as_completed(first)  # type: ignore[no-untyped-call]
        for future in queue:
            batch = batch_of.pop(future)
            rows = _rows_of(future, batch, request.settings.command)
            future.release()
            nxt = submit()
            if nxt is not None:
                queue.add(nxt)  # type: ignore[no-untyped-call]
            for row in rows:
                files += 1
                done_bytes += row.bytes or 0
                yield row
            if progress is not None:
                progress(files, done_bytes)


@contextmanager
def _shared_index(settings: FleetSettings, client: Any) -> Iterator[tuple[FleetSettings, str | None]]:
    """The settings every batch gets and the name the run's child index is installed under on
    every worker (fleet/shared.py), for the run: serialized once by the client and rebuilt once
    by each worker, where inside the settings it was serialized with every batch and rebuilt by
    every batch (docs/fleet.md "Subagent children"). Removed when the run ends; a cluster that
    is already gone then has nothing to remove."""
    if settings.children is None:
        yield settings, None
        return
    from sesstool.fleet.shared import SharedIndex

    name = f"sesstool-child-index-{uuid.uuid4().hex}"
    client.register_plugin(SharedIndex(settings.children), name=name)
    try:
        yield replace(settings, children=None), name
    finally:
        with suppress(OSError):  # the scheduler is lost (its rows say so): no plugin to remove
            client.unregister_worker_plugin(name)


def _rows_of(future: Any, batch: tuple[Item, ...], command: str) -> list[Row]:
    try:
        rows = future.result()
    except Exception as exc:  # KilledWorker after repeated worker deaths, a lost scheduler, …
        message = f"the task failed on the cluster: {type(exc).__name__}: {exc}"
        return [error_row(i.path, command, "crashed", None, message, i.size, 0.0) for i in batch]
    assert isinstance(rows, list) and len(rows) == len(batch)
    return rows


def validate_request(request: FleetRequest) -> None:
    if request.batch is not None and request.batch < 1:
        raise UsageError("--batch must be at least 1")
