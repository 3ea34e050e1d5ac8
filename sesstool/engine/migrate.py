"""migrate: upgrade a log through the chain and publish the new generation (spec §1.3, §10).

The source is scanned first (it must be valid at its own version); the committed events are
then streamed through the upgrade steps, encoded, and published as a new immutable file that
the publisher re-reads and validates in full at the target version before it becomes visible.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from sesstool.core import mini
from sesstool.core.closers import closers_for
from sesstool.core.errors import InputError, UnsupportedError, UsageError, WriteRefusedError
from sesstool.core.physical import Encoding
from sesstool.core.rules import Severity
from sesstool.core.scanner import ScanOptions
from sesstool.core.upgrade import UpgradeRefused
from sesstool.core.upgrade.chain import chain
from sesstool.core.vocabulary import CURRENT_VERSION
from sesstool.engine.cold import ColdSource, cold_session
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import Progress, ScanReport, run_scan, scan_source
from sesstool.store.digest import sha256_file
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


@dataclass(frozen=True, slots=True)
class MigrateRequest:
    path: str
    to: int | None = None  # None: the current version of the log's dialect
    output: str | None = None
    encoding: Encoding | None = None
    dry_run: bool = False
    repair: bool = False
    limits: ReadLimits = field(default_factory=ReadLimits)


@dataclass(frozen=True, slots=True)
class MigrateReport:
    status: str  # "migrated" | "up-to-date" | "planned"
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
    if request.to is not None and not 0 <= request.to <= CURRENT_VERSION:
        raise UsageError(f"--to {request.to}: sesstool writes versions 0–{CURRENT_VERSION}")
    with cold_session(request.path, "migrate") as cold:
        return _migrate(request, cold, progress)


def _migrate(request: MigrateRequest, cold: ColdSource, progress: Progress | None) -> MigrateReport:
    source, identity, lock, notes = cold.path, cold.identity, cold.lock, cold.notes
    digest = hashlib.sha256()
    report, _ = run_scan(source, ScanOptions(), request.limits, progress, digest=digest)
    if report.live:
        cold.recheck()
    scan = report.scan
    if scan.verdict == "unsupported":
        raise UnsupportedError(f"cannot migrate: {scan.verdict_reason}", scan.verdict_address)
    if scan.verdict == "corrupt":
        raise InputError(f"cannot migrate a corrupt log: {scan.verdict_reason}", scan.verdict_address)
    assert scan.version is not None and scan.header is not None
    version = scan.version
    encoding = report.source.encoding
    out_encoding: Encoding = request.encoding or encoding
    dialect_current = mini.CURRENT_VERSION if scan.dialect == mini.DIALECT else CURRENT_VERSION
    target_version = dialect_current if request.to is None else request.to
    if target_version > dialect_current:
        raise UsageError(
            f"--to {target_version}: the newest {scan.dialect} format sesstool writes is v{dialect_current}"
        )
    if version > target_version:
        raise UsageError(
            f"the log is already v{version}; --to {target_version} would be a downgrade, which "
            "no harness defines"
        )
    source_sha = digest.hexdigest()
    base = MigrateReport(
        status="up-to-date",
        source=source,
        source_sha256=source_sha,
        scan=report,
        from_version=version,
        to_version=target_version,
        steps=(),
        target=None,
        output=None,
        output_scan=None,
        closers_added=0,
        torn_dropped_bytes=scan.tail.dropped_bytes,
        torn_dropped_lines=scan.tail.dropped_lines,
        lock=lock,
        notes=tuple(notes),
    )
    if version == target_version:
        return base
    try:
        steps = chain(version, target_version, scan.dialect)
    except UpgradeRefused as err:
        raise UnsupportedError(str(err)) from None
    closers = closers_for(scan) if request.repair else []
    unsafe = [f for f in scan.findings if f.rule == "unsafe-integer"]
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
    target = (
        Path(request.output)
        if request.output
        else source.parent / migrated_name(source, target_version, out_encoding)
    )
    check_publication_name(target, target_version, out_encoding == "zstd")
    base = replace(
        base,
        status="planned",
        steps=tuple(s.name for s in steps),
        target=target,
        closers_added=len(closers),
        notes=tuple(notes),
    )
    if request.dry_run:
        return base
    committed = scan.tail.committed_bytes
    body_offset = scan.body_offset or 0
    header = dict(scan.header.raw)

    def produce(sink: Sink) -> None:
        with open(source, "rb") as f:  # read-only
            head, lines = upgraded_lines(
                f, encoding, header, scan.dialect, body_offset, committed, steps, target_version,
                request.limits, closers,
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
        result = scan_source(tmp, ScanOptions(filename_version=None), request.limits)
        problems = [f for f in result.scan.findings if f.severity is Severity.ERROR]
        if result.scan.version != target_version:
            raise WriteRefusedError(
                f"verification: the new file is v{result.scan.version}, not v{target_version}"
            )
        if problems or result.scan.verdict in ("corrupt", "unsupported", "torn"):
            f = problems[0] if problems else None
            detail = f"[{f.rule}] {f.message} ({f.address.describe()})" if f else result.scan.verdict_reason
            raise WriteRefusedError(f"verification: the v{target_version} output does not validate: {detail}")
        now = sha256_file(source)  # an in-place edit keeps size and mtime: only the bytes tell
        if now != source_sha:
            raise WriteRefusedError(
                f"source changed while it was migrated: {source} had SHA-256 {source_sha} when it "
                f"was scanned, now {now} (an in-place edit); nothing was published"
            )
        checked.append(result)

    published = publish(target, produce, verify=verify, source=source, source_identity=identity)
    return replace(base, status="migrated", output=published, output_scan=checked[-1])
