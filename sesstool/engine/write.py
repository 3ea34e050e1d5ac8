"""The one write pipeline every command that writes a log shares (DESIGN §3–§5).

1. ``read_for_write``: resolve the source, hold ``session.lock`` (``engine.cold``), refuse a
   live writer, and scan it once through its dialect with the SHA-256 fed by the same bytes;
2. ``gate``: refuse a source whose verdict forbids the command (unsupported: exit 4; corrupt:
   exit 3 unless the command can salvage);
3. the command plans purely, then ``produce`` writes the bytes (reading ranges back through
   ``store.plaintext``) and ``store.publish`` links them after ``verify`` — for a rewritten log,
   ``rescan``: the temp file read back with the same dialect's scanner.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from sesstool.core import rule_ids as R
from sesstool.core.errors import InputError, UnsupportedError, WriteRefusedError
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Encoding, FramingFact, PhysicalIssue
from sesstool.core.rules import Finding, Severity
from sesstool.dialects.base import Dialect, DialectScanner
from sesstool.engine.cold import cold_session
from sesstool.engine.scan import FrameHook, Progress, ScanReport, Tap, run_scan
from sesstool.store.liveness import LockState
from sesstool.store.paths import is_directory
from sesstool.store.plaintext import LogReading
from sesstool.store.publish import FileIdentity, Sink
from sesstool.store.source import ReadLimits


@dataclass(slots=True)
class SourceRead:
    """A cold source, read once: its scan, the scanner's state at the end, its digest."""

    path: Path
    identity: FileIdentity  # as first seen: compared again before publication
    lock: LockState | None
    notes: list[str]
    sha256: str
    report: ScanReport
    scanner: DialectScanner
    progress: Progress | None = None  # the write and verify phases report here too

    @property
    def scan(self) -> ScanResult:
        return self.report.scan

    @property
    def dialect(self) -> Dialect:
        return self.report.dialect


@contextmanager
def read_for_write(
    arg: str,
    command: str,
    limits: ReadLimits,
    progress: Progress | None = None,
    on_frame_end: FrameHook | None = None,
    dry_run: bool = False,
) -> Iterator[SourceRead]:
    """Steps 1 of the pipeline; the lock is held until the ``with`` block ends. A dry run
    creates no ``session.lock`` (it writes nothing at all); an existing one is still honoured."""
    with cold_session(arg, command, create_lock=not dry_run) as cold:
        digest = hashlib.sha256()
        report, scanner = run_scan(
            cold.path, ScanOptions(), limits, progress, digest=digest, on_frame_end=on_frame_end
        )
        if report.live:
            cold.recheck()
        yield SourceRead(
            cold.path, cold.identity, cold.lock, cold.notes, digest.hexdigest(), report, scanner, progress
        )


def gate(scan: ScanResult, verb: str, corrupt: str | None = None) -> None:
    """Refuse what ``verb`` cannot work on: an unsupported log (exit 4), a corrupt one (exit 3,
    with ``corrupt`` as the message when the command words it itself)."""
    if scan.verdict == "unsupported":
        raise UnsupportedError(f"cannot {verb}: {scan.verdict_reason}", scan.verdict_address)
    if scan.verdict == "corrupt":
        raise InputError(
            corrupt or f"cannot {verb} a corrupt log: {scan.verdict_reason}", scan.verdict_address
        )


def first_error(findings: tuple[Finding, ...]) -> Finding | None:
    return next((f for f in findings if f.severity is Severity.ERROR), None)


def rescan(
    tmp: Path, dialect: Dialect, limits: ReadLimits, progress: Progress | None = None, tap: Tap | None = None
) -> ScanReport:
    """Verify by rescan: the temporary output read back by the same dialect (no file-name
    version: a temp name is not canonical); reported as the ``verify`` phase. ``tap`` sees
    every batch of lines the scanner is fed (fork hashes the plaintext read back there)."""
    options = ScanOptions(filename_version=None)
    limits = replace(limits, dialect=dialect.name)
    return run_scan(tmp, options, limits, progress, tap=tap, phase="verify")[0]


_WRITE_REPORT_EVERY = 1 << 20


class _ReportingSink:
    """A sink that reports the bytes written so far as the ``write`` phase, once per MiB."""

    def __init__(self, sink: Sink, progress: Progress) -> None:
        self._sink = sink
        self._progress = progress
        self.done = 0
        self._next = 0

    def write(self, data: bytes) -> None:
        self._sink.write(data)
        self.done += len(data)
        if self.done >= self._next:
            self._progress("write", self.done, None)
            self._next = self.done + _WRITE_REPORT_EVERY


def phased(
    progress: Progress | None, produce: Callable[[Sink], None], verify: Callable[[Path], None]
) -> tuple[Callable[[Sink], None], Callable[[Path], None]]:
    """``produce`` and ``verify`` for ``store.publish`` that report the ``write`` and ``verify``
    phases (verify is announced when it starts; a rescan then reports its bytes)."""
    if progress is None:
        return produce, verify
    report = progress

    def producing(sink: Sink) -> None:
        report("write", 0, None)
        counted = _ReportingSink(sink, report)
        produce(counted)
        report("write", counted.done, counted.done)  # the phase ends with its exact size

    def verifying(tmp: Path) -> None:
        report("verify", 0, None)
        verify(tmp)

    return producing, verifying


def read_back_lines(
    tmp: Path,
    encoding: Encoding,
    expected: Iterator[bytes],
    limits: ReadLimits,
    header_frame: bool,
    what: str,
    verbatim: int = 0,
) -> None:
    """The temporary file read back with the project's reader (zstd: every frame decoded, its
    checksum checked): its lines must be exactly ``expected``, complete, nothing after them. A
    framing rule of a layout the dialect does not have (``header_frame``) is not a defect, nor
    is a frame without a checksum in the first ``verbatim`` bytes, the source's frames copied
    as they were (Codex writes none); a frame sesstool wrote has one."""
    reading = LogReading(tmp, encoding, limits)
    count = 0
    for item in reading.batches():
        if isinstance(item, PhysicalIssue):
            if isinstance(item, FramingFact) and not header_frame:
                continue  # frame 0 of a layout without a header frame may hold more
            copied = item.frame_offset is not None and item.frame_offset < verbatim
            if item.rule == R.ZSTD_NO_CHECKSUM and copied and not item.fatal:
                continue
            raise WriteRefusedError(f"verification: {what} has {item.rule}: {item.message}")
        for line in item[0]:
            count += 1
            if line != next(expected, None):
                raise WriteRefusedError(f"verification: line {count} of {what} differs from what was planned")
    if next(expected, None) is not None:
        raise WriteRefusedError(f"verification: {what} is shorter than planned")
    summary = reading.summary
    assert summary is not None
    if summary.partial_line is not None or summary.torn_frame is not None:
        raise WriteRefusedError(f"verification: {what} ends in a torn record")


def refuse_unless_valid(report: ScanReport, what: str) -> None:
    """A rewritten log must validate: no error, and neither corrupt, unsupported nor torn."""
    scan = report.scan
    f = first_error(scan.weighed)
    if f is not None or scan.verdict in ("corrupt", "unsupported", "torn"):
        detail = f"[{f.rule}] {f.message} ({f.address.describe()})" if f else scan.verdict_reason
        raise WriteRefusedError(f"verification: {what} does not validate: {detail}")


def output_target(output: str | None, default: Path) -> Path:
    """Where a write command publishes: ``-o FILE``; ``-o DIR`` (an existing directory) the
    default name inside DIR; no ``-o`` the default beside the source (docs/format.md "Output
    paths")."""
    if not output:
        return default
    chosen = Path(output)
    return chosen / default.name if is_directory(chosen) else chosen
