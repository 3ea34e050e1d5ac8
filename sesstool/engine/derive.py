"""derive: the model-visible message list and the current request envelope (spec §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sesstool.core.errors import InputError, UnsupportedError, UsageError
from sesstool.core.fork_plan import check_at
from sesstool.core.model import RequestEnvelope
from sesstool.core.options import ScanOptions
from sesstool.core.redact import Redactor
from sesstool.core.rules import Severity
from sesstool.core.upgrade import UpgradeRefused
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.store.source import ReadLimits


@dataclass(frozen=True, slots=True)
class DeriveRequest:
    path: str
    at: int | None = None
    limits: ReadLimits = field(default_factory=ReadLimits)
    fixture: bool = False
    as_version: int | None = None  # derive what a reader of this version sees after upgrading
    redact: bool = False  # replace credential-shaped values with stable tokens


@dataclass(frozen=True, slots=True)
class DeriveReport:
    scan: ScanReport
    messages: tuple[Any, ...]
    request: RequestEnvelope
    at: int | None
    as_version: int | None = None
    redactions: tuple[tuple[str, int], ...] | None = None  # kind -> values replaced (--redact)


def run_derive(request: DeriveRequest, progress: Progress | None = None) -> DeriveReport:
    """Raises UnsupportedError (exit 4) or InputError (exit 3) when no trustworthy fold exists."""
    report = scan_source(
        request.path,
        ScanOptions(fixture=request.fixture, at_seq=request.at, collect_messages=True),
        request.limits,
        progress,
    )
    result = report.scan
    if result.verdict == "unsupported":
        raise UnsupportedError(f"cannot derive: {result.verdict_reason}", result.verdict_address)
    if result.verdict == "corrupt":
        raise InputError(f"cannot derive from a corrupt log: {result.verdict_reason}", result.verdict_address)
    if request.at is not None and (result.stopped_at is None or result.stopped_at < request.at):
        check_at(request.at, result.stopped_at)  # past the end: exit 2, as for fork
    assert result.messages is not None
    messages, envelope = result.messages, result.request
    if request.as_version is not None and request.as_version != result.version:
        messages, envelope = _as_version(request, report)
    if request.redact:
        return _redacted(DeriveReport(report, messages, envelope, request.at, request.as_version))
    return DeriveReport(report, messages, envelope, request.at, request.as_version)


def _redacted(rep: DeriveReport) -> DeriveReport:
    """Messages and request envelope with every credential-shaped value replaced: the same
    value by the same token throughout (core.redact)."""
    redactor = Redactor()
    messages = tuple(redactor.value(m) for m in rep.messages)
    req = rep.request
    envelope = RequestEnvelope(
        redactor.value(req.header), req.header_seq, redactor.value(req.context), req.context_seq
    )
    return DeriveReport(rep.scan, messages, envelope, rep.at, rep.as_version, redactor.counts().by_kind)


def _as_version(request: DeriveRequest, report: ScanReport) -> tuple[tuple[Any, ...], RequestEnvelope]:
    """Upgrade the committed events in memory through the chain (§1.3) and fold the result with
    the same scanner: the messages a reader of ``as_version`` derives. Nothing is written."""
    result = report.scan
    assert result.version is not None and result.header is not None and request.as_version is not None
    if request.as_version < result.version:
        raise UsageError(
            f"--as-version {request.as_version}: the log is v{result.version}, and no harness "
            "defines a downgrade"
        )
    try:
        steps = report.dialect.upgrade_chain(result.version, request.as_version)
    except UpgradeRefused as err:
        raise UnsupportedError(str(err)) from None
    path = report.source.path
    if path is None:
        raise UsageError("--as-version needs a file: standard input cannot be read twice")
    committed = result.stop_offset if result.stop_offset is not None else result.tail.committed_bytes
    scanner = report.dialect.scanner(report.source.display, ScanOptions(collect_messages=True))
    head, lines = upgraded_lines(
        path, report.source.encoding, dict(result.header.raw), report.dialect,
        result.body_offset or 0, committed, steps, request.as_version, request.limits,
    )  # fmt: skip
    batch: list[bytes] = [head[:-1]]
    for line in lines:
        batch.append(line[:-1])
        if len(batch) >= 4096:
            scanner.feed_lines(batch, 0, 1, None)
            batch = []
    scanner.feed_lines(batch, 0, 1, None)
    upgraded_scan = scanner.finish(None)
    errors = [f for f in upgraded_scan.findings if f.severity is Severity.ERROR]
    if errors:
        raise UnsupportedError(
            f"the log upgraded to v{request.as_version} does not validate: [{errors[0].rule}] "
            f"{errors[0].message}"
        )
    assert upgraded_scan.messages is not None
    return upgraded_scan.messages, upgraded_scan.request
