"""`run_fleet`: the fleet's one entry point — plan, run on Dask, write the summary, total it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sesstool.fleet.rows import COLUMNS, RETRY, Row
from sesstool.fleet.run import (
    FleetRequest,
    Plan,
    Progress,
    check_targets,
    dask_client,
    execute,
    plan,
    with_child_index,
)
from sesstool.store.summary import ColumnTypes, publish_jsonl, publish_parquet, read_jsonl

PARQUET_COLUMNS: ColumnTypes = (
    ("path", "str"),
    ("command", "str"),
    ("status", "str"),
    ("exit", "int"),
    ("dialect", "str"),
    ("version", "int"),
    ("verdict", "str"),
    ("events", "int"),
    ("errors", "int"),
    ("warnings", "int"),
    ("infos", "int"),
    ("findings_dropped", "int"),
    ("rules", "list[str]"),
    ("bytes", "int"),
    ("seconds", "float"),
    ("output", "str"),
    ("output_sha256", "str"),
    ("message", "str"),
)
assert tuple(name for name, _ in PARQUET_COLUMNS) == COLUMNS


@dataclass(frozen=True, slots=True)
class FleetOutput:
    summary: Path | None  # None: rows go to ``emit`` (standard output)
    parquet: Path | None
    resume: Path | None


@dataclass(frozen=True, slots=True)
class FleetReport:
    command: str
    files: int  # rows in the summary (carried over from --resume included)
    processed: int  # files processed by this run
    carried: int  # rows carried over from --resume
    failed: int  # rows whose status is not a success
    by_status: tuple[tuple[str, int], ...]
    by_verdict: tuple[tuple[str, int], ...]
    bytes: int
    seconds: float
    summary: Path | None
    parquet: Path | None
    interrupted: bool

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.interrupted


def resumed_rows(path: Path) -> list[Row]:
    """Rows of an earlier summary that count as done (everything but "crashed")."""
    return [row for row in map(Row.from_dict, read_jsonl(path)) if row.status not in RETRY]


def run_fleet(
    request: FleetRequest,
    output: FleetOutput,
    emit: Callable[[dict[str, Any]], None] | None = None,
    on_plan: Callable[[Plan], Progress | None] | None = None,
) -> FleetReport:
    started = time.perf_counter()
    carried = resumed_rows(output.resume) if output.resume else []
    request = replace(request, done=frozenset(r.path for r in carried))
    todo = plan(request)
    request = with_child_index(request, todo.items)
    if check_targets(request, todo.items):
        request = replace(request, settings=replace(request.settings, create_checked=True))
    progress = on_plan(todo) if on_plan else None
    seen: list[Row] = []
    interrupted = [False]

    def rows() -> Iterator[dict[str, Any]]:
        for row in carried:
            seen.append(row)
            yield row.to_dict()
        if not todo.items:
            return
        try:
            with dask_client(request) as client:
                for row in execute(request, todo, client, progress):
                    seen.append(row)
                    yield row.to_dict()
        except KeyboardInterrupt:
            interrupted[0] = True  # the summary keeps the rows finished so far

    if output.summary is None:
        assert emit is not None, "rows need a summary file or an emitter"
        for row in rows():
            emit(row)
    else:
        publish_jsonl(output.summary, rows())
        if output.parquet is not None:
            publish_parquet(output.parquet, output.summary, PARQUET_COLUMNS)
    statuses = Counter(r.status for r in seen)
    verdicts = Counter(r.verdict or "-" for r in seen)
    return FleetReport(
        command=request.settings.command,
        files=len(seen),
        processed=len(seen) - len(carried),
        carried=len(carried),
        failed=sum(1 for r in seen if not r.succeeded),
        by_status=tuple(sorted(statuses.items())),
        by_verdict=tuple(sorted(verdicts.items())),
        bytes=sum(r.bytes or 0 for r in seen),
        seconds=round(time.perf_counter() - started, 3),
        summary=output.summary,
        parquet=output.parquet,
        interrupted=interrupted[0],
    )
