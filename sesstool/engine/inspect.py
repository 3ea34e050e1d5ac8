"""inspect: scan one log and predict what a repair would append."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sesstool.core.options import ScanOptions
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.store.source import ReadLimits


@dataclass(frozen=True, slots=True)
class InspectRequest:
    path: str
    limits: ReadLimits = field(default_factory=ReadLimits)
    timeline: bool = False
    fixture: bool = False


@dataclass(frozen=True, slots=True)
class InspectReport:
    scan: ScanReport
    closers: tuple[dict[str, Any], ...]  # what `repair` would append (empty if nothing/refused)
    repairable: bool


def run_inspect(request: InspectRequest, progress: Progress | None = None) -> InspectReport:
    report = scan_source(
        request.path,
        ScanOptions(fixture=request.fixture, collect_timeline=request.timeline),
        request.limits,
        progress,
    )
    result = report.scan
    repairable = result.verdict in ("interrupted", "torn")
    closers = tuple(report.dialect.closers(result)) if repairable else ()
    return InspectReport(report, closers, repairable)
