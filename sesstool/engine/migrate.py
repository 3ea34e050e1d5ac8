"""migrate: upgrade a log through the chain and publish the new generation (spec §1.3, §10).

The source is scanned first (it must be valid at its own version); the committed events are
then streamed through the upgrade steps, encoded, and published as a new immutable file that
the publisher re-reads and validates in full at the target version before it becomes visible.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from sesstool.core import rule_ids as R
from sesstool.core.errors import UnsupportedError, UsageError, WriteRefusedError
from sesstool.core.physical import Encoding
from sesstool.core.upgrade import Step, UpgradeRefused
from sesstool.dialects import registry
from sesstool.dialects.base import Dialect
from sesstool.engine.children import ChildIndex, child_search_note, with_child_evidence
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import Progress, ScanReport
from sesstool.engine.write import (
    SourceRead,
    gate,
    output_target,
    phased,
    read_for_write,
    refuse_unless_valid,
    rescan,
)
from sesstool.store.digest import BackgroundDigest
from sesstool.store.framing import FrameWriter, compress_frame
from sesstool.store.generations import (
    canonical_name,
    check_publication_name,
    log_name,
    log_stem,
    parse_generation_name,
)
from sesstool.store.liveness import LockState
from sesstool.store.publish import Published, Sink, publish
from sesstool.store.source import ReadLimits

MigrateStatus = Literal["migrated", "up-to-date", "planned"]


@dataclass(frozen=True, slots=True)
class MigrateRequest:
    path: str
    to: int | None = None  # None: the current version of the log's dialect
    output: str | None = None
    encoding: Encoding | None = None
    dry_run: bool = False
    repair: bool = False
    limits: ReadLimits = field(default_factory=ReadLimits)
    # a fleet run's index of its roots' subagent children (§13.A item 5); None: the root is
    # walked, as `sesstool migrate` of one session does
    children: ChildIndex | None = None


@dataclass(frozen=True, slots=True)
class MigrateReport:
    status: MigrateStatus
    source: Path
    source_sha256: str
    scan: ScanReport
    from_version: int
    to_version: int
    steps: tuple[str, ...]
    target: Path | None
    output: Published | None
    output_scan: ScanReport | None
    closers_added: int
    torn_dropped_bytes: int
    torn_dropped_lines: int
    lock: LockState | None
    notes: tuple[str, ...]


def migrated_name(source: Path, version: int, encoding: Encoding) -> str:
    """§10.1 canonical generation name; a non-canonical source ``foo.jsonl`` → ``foo.vN.jsonl``."""
    zstd = encoding == "zstd"
    if parse_generation_name(source.name) is not None:
        return canonical_name(version, zstd)
    return log_name(f"{log_stem(source.name)}.v{version}", zstd)


def run_migrate(request: MigrateRequest, progress: Progress | None = None) -> MigrateReport:
    newest = max(d.current_version for d in registry.DIALECTS if d.current_version is not None)
    if request.to is not None and not 0 <= request.to <= newest:
        raise UsageError(f"--to {request.to}: sesstool writes versions 0–{newest}")
    with read_for_write(request.path, "migrate", request.limits, progress, dry_run=request.dry_run) as source:
        gate(source.scan, "migrate")
        base = _plan(request, source)
        if base.status == "up-to-date" or request.dry_run:
            return base
        return _publish(request, source, base)


def _target_version(request: MigrateRequest, dialect: Dialect, version: int) -> int:
    current = dialect.current_version
    assert current is not None
    target = current if request.to is None else request.to
    if target > current:
        raise UsageError(f"--to {target}: the newest {dialect.name} format sesstool writes is v{current}")
    if version > target:
        raise UsageError(
            f"the log is already v{version}; --to {target} would be a downgrade, which no harness defines"
        )
    return target


def _plan(request: MigrateRequest, source: SourceRead) -> MigrateReport:
    """The report of what migrate would do (status "up-to-date" or "planned")."""
    scan, dialect, notes = source.scan, source.dialect, source.notes
    if dialect.current_version is None or scan.version is None:
        raise UnsupportedError(f"cannot migrate: sesstool has no upgrade chain for {dialect.title} logs")
    assert scan.header is not None
    version = scan.version
    target_version = _target_version(request, dialect, version)
    if dialect.rewrites_framing(scan):
        notes.append(
            "the source is one zstd frame (as `zstd FILE` writes it): "
            + (
                "`sesstool repair` rewrites it in the harness's framing"
                if version == target_version
                else "the new generation is written in the harness's framing (header frame, then the body)"
            )
        )
    base = MigrateReport(
        status="up-to-date",
        source=source.path,
        source_sha256=source.sha256,
        scan=source.report,
        from_version=version,
        to_version=target_version,
        steps=(),
        target=None,
        output=None,
        output_scan=None,
        closers_added=0,
        torn_dropped_bytes=scan.tail.dropped_bytes,
        torn_dropped_lines=scan.tail.dropped_lines,
        lock=source.lock,
        notes=tuple(notes),
    )
    if version == target_version:
        return base
    steps = _steps(dialect, version, target_version)
    # the note depends on the layout/binding check alone: a plan reads no child (§13.A item 5)
    note = child_search_note(steps, source.path, dict(scan.header.raw))
    if note is not None:
        notes.append(note)
    closers = dialect.closers(scan) if request.repair else []
    unsafe = [f for f in scan.findings if f.rule == R.UNSAFE_INTEGER]
    if unsafe:
        # issue 11 item 12: what a JavaScript round trip does, stated rather than done silently
        first = unsafe[0].address
        notes.append(
            f"{len(unsafe)} record(s) hold integers beyond ±(2^53−1) (first: line {first.line}, "
            f"byte {first.offset}): records carried unchanged keep their digits; a record a step "
            "rewrites carries them as decoded — exact up to 2^64, beyond that the nearest double "
            "(what a JavaScript round trip does)"
        )
    if scan.open.turn is not None and not request.repair:
        notes.append(f"turn {scan.open.turn} is open: carried as it is (--repair balances it first)")
    out_encoding: Encoding = request.encoding or source.report.source.encoding
    name = migrated_name(source.path, target_version, out_encoding)
    if closers:
        # a repaired migration is not the plain one: its own name, as repair names its output
        # (session.v4.repaired.jsonl), so `migrate --repair` after `migrate` does not collide
        # with the generation already published (issue 15 item 12)
        name = dialect.repaired_name(name, out_encoding == "zstd")
    target = output_target(request.output, source.path.parent / name)
    check_publication_name(target, target_version, out_encoding == "zstd")
    return replace(
        base,
        status="planned",
        steps=tuple(s.name for s in steps),
        target=target,
        closers_added=len(closers),
        notes=tuple(notes),
    )


def _steps(dialect: Dialect, version: int, target: int) -> list[Step]:
    try:
        return dialect.upgrade_chain(version, target)
    except UpgradeRefused as err:
        raise UnsupportedError(str(err)) from None


def _publish(request: MigrateRequest, source: SourceRead, plan: MigrateReport) -> MigrateReport:
    """Produce the upgraded log (streamed from the committed region) and publish it once its
    rescan at the target version validates."""
    scan, dialect = source.scan, source.dialect
    assert scan.header is not None and plan.target is not None
    target_version = plan.to_version
    steps, _ = with_child_evidence(
        _steps(dialect, plan.from_version, target_version), source.path, dict(scan.header.raw),
        request.limits, request.children,
    )  # fmt: skip
    closers = dialect.closers(scan) if request.repair else []
    encoding = source.report.source.encoding
    out_encoding: Encoding = request.encoding or encoding
    header = dict(scan.header.raw)

    def produce(sink: Sink) -> None:
        head, lines = upgraded_lines(
            source.path, encoding, header, dialect, scan.body_offset or 0, scan.tail.committed_bytes,
            steps, target_version, request.limits, closers,
        )  # fmt: skip
        if out_encoding == "zstd":
            sink.write(compress_frame(head))
            frame = FrameWriter(sink)
            for line in lines:
                frame.write(line)
            if frame.plaintext:
                frame.close()
        else:
            sink.write(head)
            for line in lines:
                sink.write(line)

    checked: list[ScanReport] = []

    def verify(tmp: Path) -> None:
        hashing = BackgroundDigest(source.path)  # the source re-read beside the rescan
        try:
            result = rescan(tmp, dialect, request.limits, source.progress)
        finally:
            now = hashing.result()
        if result.scan.version != target_version:
            raise WriteRefusedError(
                f"verification: the new file is v{result.scan.version}, not v{target_version}"
            )
        refuse_unless_valid(result, f"the v{target_version} output")
        # an in-place edit keeps size and mtime: only the bytes tell
        if now != source.sha256:
            raise WriteRefusedError(
                f"source changed while it was migrated: {source.path} had SHA-256 {source.sha256} "
                f"when it was scanned, now {now} (an in-place edit); nothing was published"
            )
        checked.append(result)

    producing, verifying = phased(source.progress, produce, verify)
    published = publish(
        plan.target, producing, verify=verifying, source=source.path, source_identity=source.identity
    )
    return replace(plan, status="migrated", output=published, output_scan=checked[-1])
