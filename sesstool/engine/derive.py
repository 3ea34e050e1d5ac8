"""derive: the model-visible message list and the current request envelope (spec §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sesstool.core.errors import Address, InputError, UnsupportedError
from sesstool.core.model import RequestEnvelope
from sesstool.core.scanner import ScanOptions
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.store.source import ReadLimits


@dataclass(frozen=True, slots=True)
class DeriveRequest:
    path: str
    at: int | None = None
    limits: ReadLimits = field(default_factory=ReadLimits)
    fixture: bool = False


@dataclass(frozen=True, slots=True)
class DeriveReport:
    scan: ScanReport
    messages: tuple[Any, ...]
    request: RequestEnvelope
    at: int | None


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
        last = result.stopped_at
        raise InputError(
            f"--at {request.at}: the log's committed events end at seq {last}", Address(report.source.display)
        )
    assert result.messages is not None
    return DeriveReport(report, result.messages, result.request, request.at)
