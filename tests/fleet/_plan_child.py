"""``python -m tests.fleet._plan_child COMMAND SUMMARY URL…``: ``fleet.entry.run_fleet`` as the
CLI's driver runs it — the real listing, plan, batches and ``run.execute`` — with the cluster
replaced by one that answers each batch at once with a row per file (what a worker hands back),
in the order the batches were submitted. What is measured is what the driver holds per listed
file (docs/reliability.md "Item 1, what is still held"), not the workers or the scheduler.

The rows come back in submission order, so the summary is the plan's order: the differential
tests (``test_plan_streamed.py``) compare it byte for byte."""

from __future__ import annotations

import sys
import types
from collections import deque
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from sesstool.fleet import entry
from sesstool.fleet.rows import Row
from sesstool.fleet.run import FleetRequest
from sesstool.fleet.work import FleetSettings, Item


def answer(item: Item, command: str) -> Row:
    """A worker's row for ``item`` (a clean v4 log), without reading it."""
    return Row(
        item.path, command, "ok", 0, "dsh", 4, "clean", 3, 0, 0, 0, 0, (), item.size, 0.0, None, None, None
    )


class Answered:
    """A finished future: its batch's rows."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def result(self) -> list[Row]:
        return self.rows

    def release(self) -> None:
        self.rows = []


class Client:
    """Two worker threads; a batch submitted is answered at once (``work`` makes its rows)."""

    def __init__(self, work: Any = None) -> None:
        self.work = work
        self.submitted: list[int] = []  # the size of each batch, in submission order

    def nthreads(self) -> dict[str, int]:
        return {"worker-0": 1, "worker-1": 1}

    def submit(
        self, function: Any, settings: FleetSettings, batch: tuple[Item, ...], *args: Any, **_: Any
    ) -> Any:
        self.submitted.append(len(batch))
        if self.work is not None:
            return Answered(self.work(settings, batch, *args))
        return Answered([answer(item, settings.command) for item in batch])


class AsCompleted:
    """``distributed.as_completed`` over answered futures: in the order they were added."""

    def __init__(self, futures: list[Any]) -> None:
        self.queue = deque(futures)

    def __iter__(self) -> Iterator[Any]:
        while self.queue:
            yield self.queue.popleft()

    def add(self, future: Any) -> None:
        self.queue.append(future)


def without_cluster(client: Client) -> None:
    """Make ``run_fleet`` use ``client`` instead of a cluster (in this process)."""
    fake = types.ModuleType("distributed")
    fake.as_completed = AsCompleted  # type: ignore[attr-defined]
    sys.modules["distributed"] = fake
    vars(entry)["dask_client"] = lambda request: nullcontext(client)


def main() -> None:
    command, summary, *urls = sys.argv[1:]
    without_cluster(Client())
    request = FleetRequest(tuple(urls), FleetSettings(command))
    report = entry.run_fleet(request, entry.FleetOutput(Path(summary), None, None))
    print(report.files, report.failed, dict(report.by_status), report.bytes)


if __name__ == "__main__":
    main()
