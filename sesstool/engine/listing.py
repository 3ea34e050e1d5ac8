"""list: the sessions a root directory holds (a Claude Code home's ``projects/``, …), one row each.

Every registered dialect's root layout (``Dialect.layout.patterns``) is walked; each log found
is scanned by that dialect and summarised (id, cwd, version, verdict, size, last time).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from sesstool.core.errors import InputError, SesstoolError
from sesstool.core.options import ScanOptions
from sesstool.dialects import registry
from sesstool.engine.scan import Progress, scan_source
from sesstool.store.roots import root_logs
from sesstool.store.source import ReadLimits


@dataclass(frozen=True, slots=True)
class ListRequest:
    root: str
    limits: ReadLimits = field(default_factory=ReadLimits)


@dataclass(frozen=True, slots=True)
class SessionRow:
    path: str
    dialect: str
    session_id: str | None
    cwd: str | None
    version: str | None
    verdict: str
    size: int
    last_time: str | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ListReport:
    root: str
    sessions: tuple[SessionRow, ...]


def run_list(request: ListRequest, progress: Progress | None = None) -> ListReport:
    root = Path(request.root)
    if not root.is_dir():
        raise InputError(f"{request.root}: not a directory")
    rows: list[SessionRow] = []
    for dialect in registry.DIALECTS:
        for path in root_logs(root, dialect.layout.patterns):
            shown = str(path)
            size = path.stat().st_size
            try:
                report = scan_source(
                    shown, ScanOptions(), replace(request.limits, dialect=dialect.name), progress
                )
            except SesstoolError as err:
                rows.append(
                    SessionRow(shown, dialect.name, None, None, None, "unreadable", size, None, err.message)
                )
                continue
            scan = report.scan
            facts = dialect.list_facts(scan)
            version = scan.version_label if scan.version is None else str(scan.version)
            rows.append(
                SessionRow(
                    shown,
                    dialect.name,
                    scan.session_id,
                    facts.get("cwd"),
                    version,
                    scan.verdict,
                    size,
                    facts.get("last_time"),
                )
            )
    if not rows:
        raise InputError(f"{request.root}: no session logs in any known root layout")
    return ListReport(request.root, tuple(rows))
