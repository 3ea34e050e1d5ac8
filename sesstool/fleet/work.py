"""What a worker does with one file: the single-file engine entry point, turned into a row.

Nothing here re-implements a command. Read commands (validate, inspect) pass the path or URL
to the engine, which streams it (store.source → store.remote). Write commands (migrate,
repair) run the engine on a local path: a local source in place (the hardlink publisher
writes beside it, as `sesstool migrate` would), a remote source on a scratch copy, whose
output then goes to the object store through the object publisher (conditional create,
read back and re-scanned). Every outcome, including an unexpected exception, is a row.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from sesstool.core.errors import ExitStatus, SesstoolError, WriteRefusedError
from sesstool.core.physical import Encoding
from sesstool.core.rules import Severity
from sesstool.engine.children import ChildIndex
from sesstool.engine.inspect import InspectRequest, run_inspect
from sesstool.engine.migrate import MigrateRequest, run_migrate
from sesstool.engine.repair import RepairRequest, run_repair
from sesstool.engine.scan import ScanReport, scan_source
from sesstool.engine.validate import ValidateRequest, run_validate
from sesstool.fleet.rows import Row, error_row, scan_row
from sesstool.store.digest import sha256_file
from sesstool.store.object_publish import TargetExistsError, publish_object
from sesstool.store.paths import exists
from sesstool.store.publish import Published
from sesstool.store.remote import (
    StorageOptions,
    describe,
    is_url,
    object_digest,
    parent,
    using_storage_options,
)
from sesstool.store.scratch import local_copy, scratch_directory
from sesstool.store.source import ReadLimits

COMMANDS = ("validate", "inspect", "migrate", "repair")


@dataclass(frozen=True, slots=True)
class FleetSettings:
    """Per-command options, shipped to every worker (picklable, frozen)."""

    command: str
    limits: ReadLimits = field(default_factory=ReadLimits)
    fail_on: Severity = Severity.ERROR
    fixture: bool = False
    to: int | None = None  # migrate --to
    repair_first: bool = False  # migrate --repair
    encoding: Encoding | None = None  # write commands: output encoding
    storage_options: tuple[tuple[str, object], ...] = ()
    scratch: str | None = None  # base directory for remote sources' local copies
    create_checked: bool = False  # the client proved conditional create on every target prefix
    # migrate: the run's subagent-child index of its local dsh roots, built once by the client
    # (run.with_child_index; docs/fleet.md); None: each migration walks its root. On a cluster
    # it is not shipped in here: run.execute installs it once on every worker (fleet/shared.py)
    # and every batch gets settings without it and the name it is installed under
    children: ChildIndex | None = None

    @property
    def options(self) -> StorageOptions:
        return dict(self.storage_options)


@dataclass(frozen=True, slots=True)
class Item:
    """One listed file: where it is, its size and version tag when listed."""

    path: str
    size: int | None
    tag: str | None


def process_batch(settings: FleetSettings, items: tuple[Item, ...], index: str | None = None) -> list[Row]:
    """A Dask task: one row per item, in order. Never raises for a file's sake. ``index``: the
    name the run's child index is installed under on this worker (fleet/shared.py), if any."""
    if index is not None:
        from sesstool.fleet.shared import installed

        settings = replace(settings, children=installed(index))
    with using_storage_options(settings.options):
        return [process(settings, item) for item in items]


def process(settings: FleetSettings, item: Item) -> Row:
    started = time.perf_counter()
    try:
        return _HANDLERS[settings.command](settings, item, started)
    except SesstoolError as err:
        return error_row(
            item.path, settings.command, "error", int(err.exit_status), str(err), item.size, _since(started)
        )
    except Exception as exc:  # a bug or an infrastructure failure: still a row (docs/fleet.md)
        last = traceback.extract_tb(exc.__traceback__)[-1:] or None
        where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
        return error_row(
            item.path,
            settings.command,
            "crashed",
            None,
            f"{type(exc).__name__}: {exc}{where}",
            item.size,
            _since(started),
        )


def _since(started: float) -> float:
    return time.perf_counter() - started


def _validate(settings: FleetSettings, item: Item, started: float) -> Row:
    # one row per file: a session's subagent files are items of their own in a fleet run
    request = ValidateRequest(
        (item.path,), settings.fail_on, settings.limits, settings.fixture, companions=False
    )
    report = run_validate(request)
    (result,) = report.files
    if result.report is None:
        return error_row(
            item.path, "validate", "error", int(ExitStatus.FINDINGS), result.error or "unreadable",
            item.size, _since(started),
        )  # fmt: skip
    failing = result.failing(settings.fail_on)
    exit_status = ExitStatus.FINDINGS if failing else ExitStatus.OK
    return scan_row(
        item.path, "validate", "findings" if failing else "ok", int(exit_status), result.report.scan,
        _size(result.report, item), _since(started),
    )  # fmt: skip


def _inspect(settings: FleetSettings, item: Item, started: float) -> Row:
    request = InspectRequest(item.path, settings.limits, fixture=settings.fixture, companions=False)
    report = run_inspect(request)
    return scan_row(
        item.path, "inspect", "ok", int(ExitStatus.OK), report.scan.scan, _size(report.scan, item),
        _since(started),
    )  # fmt: skip


def _size(report: ScanReport, item: Item) -> int | None:
    return report.source.size if report.source.size is not None else item.size


# --- write commands ----------------------------------------------------------------------------

Outcome = tuple[str, ScanReport, Path | None, str | None]  # status, source scan, output, note
Runner = Callable[[FleetSettings, str, str | None], Outcome]


def _outcome(status: str, scan: ScanReport, output: Published | None, notes: tuple[str, ...]) -> Outcome:
    """A re-run onto an identical target publishes nothing (the publisher's re-run rule): the
    row says "exists", as for a retried task."""
    if output is not None and output.identical:
        note = f"{output.path} already holds exactly this output; nothing written"
        return "exists", scan, output.path, note
    return status, scan, output.path if output else None, "; ".join(notes) or None


def _run_migrate(settings: FleetSettings, path: str, output: str | None) -> Outcome:
    report = run_migrate(
        MigrateRequest(path, settings.to, output, settings.encoding, repair=settings.repair_first,
                       limits=settings.limits, children=settings.children)
    )  # fmt: skip
    return _outcome(report.status, report.scan, report.output, report.notes)


def _run_repair(settings: FleetSettings, path: str, output: str | None) -> Outcome:
    report = run_repair(RepairRequest(path, output, settings.encoding, limits=settings.limits))
    return _outcome(report.status, report.scan, report.output, report.notes)


def _planned_target(settings: FleetSettings, path: str) -> Path | None:
    """Where the single-file command would write (its dry run), for an existing-target check."""
    if settings.command == "migrate":
        m = run_migrate(
            MigrateRequest(path, settings.to, None, settings.encoding, dry_run=True,
                           repair=settings.repair_first, limits=settings.limits)
        )  # fmt: skip
        return m.target
    r = run_repair(RepairRequest(path, None, settings.encoding, dry_run=True, limits=settings.limits))
    return r.target


def _write(settings: FleetSettings, item: Item, started: float) -> Row:
    runner: Runner = _run_migrate if settings.command == "migrate" else _run_repair
    if is_url(item.path):
        return _write_remote(settings, item, started, runner)
    try:
        status, scan, out, note = runner(settings, item.path, None)
    except WriteRefusedError as err:
        return _existing_local(settings, item, started, runner, err)
    sha = sha256_file(out) if out is not None else None
    return scan_row(
        item.path, settings.command, status, 0, scan.scan, scan.source.size, _since(started),
        str(out) if out else None, sha, note,
    )  # fmt: skip


def _existing_local(
    settings: FleetSettings, item: Item, started: float, runner: Runner, err: WriteRefusedError
) -> Row:
    """The target name is taken (a second run, or a retried task): "exists" when it holds
    exactly the bytes this run would publish, else the single-file command's refusal."""
    target = _planned_target(settings, item.path)
    if target is None or not exists(target):
        raise err
    with scratch_directory(settings.scratch) as scratch:
        _, scan, out, _ = runner(settings, item.path, str(scratch / target.name))
        assert out is not None
        ours = sha256_file(out)
    if ours != sha256_file(target):
        raise err
    return scan_row(
        item.path, settings.command, "exists", 0, scan.scan, scan.source.size, _since(started),
        str(target), ours, f"{target} already holds exactly this output; nothing written",
    )  # fmt: skip


def _write_remote(settings: FleetSettings, item: Item, started: float, runner: Runner) -> Row:
    with scratch_directory(settings.scratch) as scratch:
        copy, entry = local_copy(item.path, scratch)
        status, scan, out, note = runner(settings, str(copy), None)
        source_row = scan_row(
            item.path, settings.command, status, 0, scan.scan, entry.size, 0.0, message=note
        )
        if out is None:  # up to date / already balanced: nothing to publish
            return replace(source_row, seconds=round(_since(started), 6))
        target = f"{parent(item.path)}/{out.name}"
        ours = sha256_file(out)
        now = describe(item.path)
        if now is None or now.tag != entry.tag or now.size != entry.size:
            raise WriteRefusedError(f"source changed while it was read: {item.path}; nothing was published")
        try:
            published = publish_object(
                target, out, verify=_same_scan(out), options=settings.options,
                probe=not settings.create_checked,
            )  # fmt: skip
        except TargetExistsError:
            _, theirs = object_digest(target)
            if theirs != ours:
                raise
            return replace(
                source_row, status="exists", output=target, output_sha256=ours,
                message=f"{target} already holds exactly this output; nothing written",
                seconds=round(_since(started), 6),
            )  # fmt: skip
        return replace(
            source_row, output=published.url, output_sha256=published.sha256,
            seconds=round(_since(started), 6),
        )  # fmt: skip


def _same_scan(local: Path) -> Callable[[str], None]:
    """The object, scanned where it now lives, must read exactly as the verified local output."""
    expected = scan_source(str(local)).scan

    def verify(url: str) -> None:
        got = scan_source(url).scan
        mine = (
            expected.version,
            expected.verdict,
            expected.stats.events,
            [f.rule for f in expected.findings],
        )
        theirs = (got.version, got.verdict, got.stats.events, [f.rule for f in got.findings])
        if mine != theirs:
            raise WriteRefusedError(f"{url} reads back as {theirs}, the verified output as {mine}")

    return verify


_HANDLERS: dict[str, Callable[[FleetSettings, Item, float], Row]] = {
    "validate": _validate,
    "inspect": _inspect,
    "migrate": _write,
    "repair": _write,
}
