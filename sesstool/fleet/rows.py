"""One summary row per file: what the single-file command reported, as flat data."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from sesstool.core.model import ScanResult
from sesstool.core.rules import Severity

# Outcomes that count as success in a fleet run's exit status (docs/fleet.md).
SUCCESS = frozenset({"ok", "migrated", "up-to-date", "repaired", "balanced", "exists"})
# A row with this status is retried by --resume (the file was not processed to an answer).
RETRY = frozenset({"crashed"})


@dataclass(frozen=True, slots=True)
class Row:
    path: str  # as listed (URL or local path)
    command: str  # validate | inspect | migrate | repair
    status: str  # ok | findings | migrated | up-to-date | repaired | balanced | exists | error | crashed
    exit: int | None  # the exit status the single-file command gives for this file (None: crashed)
    dialect: str | None
    version: int | None
    verdict: str | None
    events: int | None
    errors: int
    warnings: int
    infos: int
    findings_dropped: int
    rules: tuple[str, ...]  # distinct rule ids of the findings, sorted
    bytes: int | None  # the source's size
    seconds: float  # wall time spent on this file (varies run to run)
    output: str | None  # the new file or object (for "exists": the identical one already there)
    output_sha256: str | None
    message: str | None  # the error, or a note

    @property
    def succeeded(self) -> bool:
        return self.status in SUCCESS

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rules"] = list(self.rules)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Row:
        values: dict[str, Any] = {f.name: d.get(f.name) for f in fields(cls)}
        values["rules"] = tuple(values["rules"] or ())
        return cls(**values)


COLUMNS = tuple(f.name for f in fields(Row))


def scan_row(
    path: str,
    command: str,
    status: str,
    exit_status: int,
    scan: ScanResult,
    size: int | None,
    seconds: float,
    output: str | None = None,
    output_sha256: str | None = None,
    message: str | None = None,
) -> Row:
    by = {s: 0 for s in Severity}
    for f in scan.findings:
        by[f.severity] += 1
    return Row(
        path=path,
        command=command,
        status=status,
        exit=exit_status,
        dialect=scan.dialect,  # decided before any line: a transcript has no version, still a dialect
        version=scan.version,
        verdict=scan.verdict,
        events=scan.stats.events,
        errors=by[Severity.ERROR],
        warnings=by[Severity.WARNING],
        infos=by[Severity.INFO],
        findings_dropped=scan.findings_dropped,
        rules=tuple(sorted({f.rule for f in scan.findings})),
        bytes=size,
        seconds=round(seconds, 6),
        output=output,
        output_sha256=output_sha256,
        message=message,
    )


def error_row(
    path: str,
    command: str,
    status: str,
    exit_status: int | None,
    message: str,
    size: int | None,
    seconds: float,
) -> Row:
    return Row(
        path=path,
        command=command,
        status=status,
        exit=exit_status,
        dialect=None,
        version=None,
        verdict=None,
        events=None,
        errors=0,
        warnings=0,
        infos=0,
        findings_dropped=0,
        rules=(),
        bytes=size,
        seconds=round(seconds, 6),
        output=None,
        output_sha256=None,
        message=message,
    )
