"""Issue 11 item 1: the fleet's plan streams (``fleet.run.plan``: items in a
``store.spool.ItemSpool``, the paths listed in a ``core.held_map.HeldMap``; ``batches`` made one
at a time; ``engine.validate.expand_paths`` and ``store.remote.list_logs`` each path once through
a ``HeldMap``; a target prefix once through ``store.paths.SortedPaths``). Differential: what it
plans, and the summary and totals a run writes, are those of the lists it replaced (``listed``
and ``model_batches`` below: main's code before, 2a80eb3) — the same items, skipped files,
bytes and batches, in the same order — at the default thresholds and with every threshold the
plan passes lowered so that it spills (2 paths, 2 keys, no byte of items in memory); local
fixtures here, the moto S3 lane's prefix in ``test_the_s3_plan_and_run_are_the_listed_ones``."""

from __future__ import annotations

import shutil
import sys
import types
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import orjson
import pytest

from sesstool.core import held_map
from sesstool.dialects import registry
from sesstool.engine.validate import iter_paths
from sesstool.fleet import entry, run
from sesstool.fleet.entry import FleetOutput, FleetReport, run_fleet
from sesstool.fleet.run import BATCH_BYTES, MAX_AUTO_BATCH, FleetRequest, Plan, batches, plan
from sesstool.fleet.work import FleetSettings, Item, process_batch
from sesstool.store import paths, spool
from sesstool.store.paths import SortedPaths, classify_path, file_size
from sesstool.store.remote import is_url, list_logs, using_storage_options
from sesstool.store.run_spill import spilled_strings
from tests.conftest import FIXTURES
from tests.fleet._plan_child import AsCompleted, Client
from tests.fleet.conftest import S3, corpus_files, rel, write_corpus

pytest.importorskip("distributed")

DSH, MINI = str(FIXTURES / "dsh"), str(FIXTURES / "mini")
URLS = [
    (DSH, str(FIXTURES / "mini"), str(FIXTURES / "migrate")),
    # a directory listed twice and inside another, a glob, a file given again, a missing file
    (str(FIXTURES / "dsh" / "v4-tiny"), DSH, str(FIXTURES / "dsh" / "*" / "*.zstd"), MINI,
     str(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"), str(FIXTURES / "no-such.jsonl")),
]  # fmt: skip


def lower(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every threshold the plan passes, lowered: the paths of a walk past 2, the paths listed and
    given past 2 keys, every item's bytes on disk. Gives the purposes of the maps that spilled."""
    monkeypatch.setattr(held_map, "HELD_AT", 2)
    monkeypatch.setattr(paths, "PATHS_HELD", 2)
    monkeypatch.setattr(spool, "ITEMS_MEMORY", 0)
    spilled: list[str] = []
    make = spilled_strings

    def counted(purpose: str) -> Any:
        spilled.append(purpose)
        return make(purpose)

    monkeypatch.setattr(run, "spilled_strings", counted)
    return spilled


# -- main's plan (2a80eb3), as lists: the model ------------------------------------------------


def listed(request: FleetRequest) -> tuple[list[Item], int]:
    found: list[Item] = []
    skipped = 0
    with using_storage_options(request.settings.options):
        for url in request.urls:
            if is_url(url):
                entries = [
                    Item(e.url, e.size, e.tag) for e in list_logs((url,), suffixes=registry.log_suffixes())
                ]
            else:
                entries = [Item(p, file_size(p), None) for p in dict.fromkeys(iter_paths((url,)))]
            for item in entries:
                if item.path in request.done:
                    skipped += 1
                    continue
                found.append(item)
    seen: dict[str, Item] = {}
    for item in found:
        seen.setdefault(item.path, item)
    return list(seen.values()), skipped


def model_batches(items: list[Item], size: int | None, threads: int) -> list[tuple[Item, ...]]:
    if size is None:
        size = max(1, min(MAX_AUTO_BATCH, len(items) // max(1, threads * 8)))
    out: list[tuple[Item, ...]] = []
    current: list[Item] = []
    weight = 0
    for item in items:
        same_dir = bool(current) and run._session_dir(current[-1]) == run._session_dir(item) is not None
        if current and not same_dir and (len(current) >= size or weight + (item.size or 0) > BATCH_BYTES):
            out.append(tuple(current))
            current, weight = [], 0
        current.append(item)
        weight += item.size or 0
    if current:
        out.append(tuple(current))
    return out


def assert_planned_as_listed(request: FleetRequest, todo: Plan) -> None:
    items, skipped = listed(request)
    assert list(todo.items) == items and len(todo.items) == len(items)
    assert list(todo.items) == items, "a second walk gives the same"
    assert (todo.skipped, todo.total_bytes) == (skipped, sum(i.size or 0 for i in items))
    for size in (None, 1, 3, 64):
        for threads in (1, 2, 5):
            assert list(batches(todo.items, size, threads)) == model_batches(items, size, threads)


# -- a run whose cluster answers in submission order: the summary is the plan's order -----------


def in_order(monkeypatch: pytest.MonkeyPatch) -> Client:
    """``run_fleet`` on a client that runs each batch (``work.process_batch``) as it is submitted."""
    client = Client(process_batch)
    fake = types.ModuleType("distributed")
    fake.as_completed = AsCompleted  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "distributed", fake)
    monkeypatch.setattr(entry, "dask_client", lambda request: nullcontext(client))
    return client


def summary_of(report: FleetReport, root: Path | None = None) -> tuple[bytes, tuple[Any, ...]]:
    """The summary's bytes, each row's seconds (the one column that varies) set to 0 and a
    mirror's root cut from paths, and the totals but the run's seconds."""
    assert report.summary is not None
    lines = []
    for line in report.summary.read_bytes().splitlines():
        row = {**orjson.loads(line), "seconds": 0}
        for key in ("path", "output", "message"):
            if root is not None and isinstance(row[key], str):
                row[key] = row[key].replace(str(root), "<root>")
        lines.append(orjson.dumps(row))
    totals = (report.files, report.processed, report.carried, report.failed, report.by_status,
              report.by_verdict, report.bytes, report.interrupted)  # fmt: skip
    return b"\n".join(lines), totals


@pytest.mark.parametrize("lowered", [False, True], ids=["held", "spilled"])
@pytest.mark.parametrize("urls", URLS, ids=["corpus", "repeats"])
def test_the_plan_is_the_listed_one(
    monkeypatch: pytest.MonkeyPatch, urls: tuple[str, ...], lowered: bool
) -> None:
    spilled = lower(monkeypatch) if lowered else []
    done = frozenset(
        {str(FIXTURES / "dsh" / "v1-tiny" / "session.v1.jsonl.zstd"), str(FIXTURES / "mini" / "x.jsonl")}
    )
    for request in (
        FleetRequest(urls, FleetSettings("validate")),
        FleetRequest(urls, FleetSettings("inspect"), done=done),
    ):
        todo = plan(request)
        assert isinstance(todo.items, spool.ItemSpool) and todo.items.spilled == lowered
        assert_planned_as_listed(request, todo)
        assert todo.skipped == (bool(request.done) and (2 if len(urls) > 3 else 1))  # each time listed
    assert spilled == ([run.LISTED_HELD] * 2 if lowered else [])


@pytest.mark.parametrize("command", ["validate", "inspect"])
def test_a_run_writes_the_listed_summary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str
) -> None:
    """Rows in submission order (the plan's, batch by batch), every fixture: the same bytes and
    totals held and spilled, and the model's files in the model's order."""
    client = in_order(monkeypatch)
    request = FleetRequest(URLS[1], FleetSettings(command), batch=5)
    held = summary_of(run_fleet(request, FleetOutput(tmp_path / "held.jsonl", None, None)))
    sizes = list(client.submitted)
    lower(monkeypatch)
    spilled = summary_of(run_fleet(request, FleetOutput(tmp_path / "spilled.jsonl", None, None)))
    assert spilled == held and client.submitted == sizes * 2
    items, _ = listed(request)
    assert [orjson.loads(line)["path"] for line in held[0].splitlines()] == [i.path for i in items]
    assert sizes == [len(b) for b in model_batches(items, 5, 2)]


def test_a_write_run_writes_the_listed_summary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """migrate over a mirror of the write corpus (its child index and target check walk the
    items too): the same summary, totals and files written, held and spilled."""
    in_order(monkeypatch)
    got = []
    for name in ("held", "spilled"):
        if name == "spilled":
            lower(monkeypatch)
        root = tmp_path / name
        for path in write_corpus():
            (root / rel(path)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, root / rel(path))
        request = FleetRequest((str(root),), FleetSettings("migrate"), batch=3)
        report = run_fleet(request, FleetOutput(tmp_path / f"{name}.jsonl", None, None))
        tree = {
            p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
        }
        got.append((summary_of(report, root), tree))
    assert got[0] == got[1]
    assert got[0][0][1][4] != (("up-to-date", len(write_corpus())),), "something was migrated"


@pytest.mark.fleet
def test_the_s3_plan_and_run_are_the_listed_ones(
    s3: S3, cluster: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The moto lane's prefix: the plan is the listed one, held and spilled, and a run on the
    cluster writes the same rows (in completion order: compared sorted) and totals."""
    bucket = s3.new_bucket()
    s3.upload(bucket, [p for p in corpus_files() if rel(p).startswith(("dsh/v", "mini/"))])
    settings = FleetSettings("validate", storage_options=s3.storage_options())
    urls = (f"s3://{bucket}/dsh/", f"s3://{bucket}/", f"s3://{bucket}/mini/basic/session.jsonl")
    request = FleetRequest(urls, settings, scheduler=cluster.scheduler.address, batch=4)
    got = []
    for lowered in (False, True):
        if lowered:
            lower(monkeypatch)
        todo = plan(request)
        assert todo.items.spilled == lowered  # type: ignore[attr-defined]
        assert_planned_as_listed(request, todo)
        lines, totals = summary_of(run_fleet(request, FleetOutput(tmp_path / f"{lowered}.jsonl", None, None)))
        got.append((sorted(lines.splitlines()), totals))
    assert got[0] == got[1]
    assert len(got[0][0]) == len(listed(request)[0]) > 10


@pytest.mark.parametrize("lowered", [False, True], ids=["held", "spilled"])
def test_a_remote_prefix_is_classified_with_its_listing(
    monkeypatch: pytest.MonkeyPatch, lowered: bool
) -> None:
    """``list``/``inspect`` of a prefix: its URLs a ``SortedPaths`` (was a tuple), the listing's."""
    import fsspec

    if lowered:
        lower(monkeypatch)
    mem = fsspec.filesystem("memory")
    names = ("b/2.jsonl", "a/1.JSONL", "a/notes.txt", "c/3.jsonl.zstd", "a/0.jsonl", "a/é.jsonl")
    mem.pipe({f"/plan-prefix-{lowered}/{n}": b"" for n in names})
    url = f"memory://plan-prefix-{lowered}/"
    try:
        found = classify_path(url, suffixes=registry.log_suffixes())
        assert found.kind == "remote-prefix"
        (group,) = found.groups
        assert isinstance(group.logs, SortedPaths) and group.logs.spilled == lowered
        expected = [e.url for e in list_logs((url,), suffixes=registry.log_suffixes())]
        assert list(group.logs) == expected == sorted(expected) and len(expected) == 5
    finally:
        mem.rm(f"/plan-prefix-{lowered}", recursive=True)
