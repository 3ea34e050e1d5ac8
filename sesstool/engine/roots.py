"""inspect ROOT: every log under a root directory of some dialect's layout (a Codex home), each
scanned once, summarised one line apiece."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sesstool.core.options import ScanOptions
from sesstool.dialects.base import Dialect
from sesstool.dialects.registry import DIALECTS
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.store.roots import is_session_directory, root_logs
from sesstool.store.source import ReadLimits


@dataclass(frozen=True, slots=True)
class RootReport:
    root: str
    dialect: Dialect  # whose layout the root has
    logs: tuple[ScanReport, ...]


def find_root(path: str) -> tuple[Dialect, list[Path]] | None:
    """The dialect whose root layout ``path`` has, with its logs; None for a file, a session
    directory, or a directory where no layout matches."""
    directory = Path(path)
    try:
        if path == "-" or not directory.is_dir() or is_session_directory(directory):
            return None
    except OSError:
        return None  # e.g. an unsearchable parent: opening it as a log reports why (exit 3)
    for dialect in DIALECTS:
        logs = root_logs(directory, dialect.layout.patterns)
        if logs:
            return dialect, logs
    return None


def run_root(
    path: str, found: tuple[Dialect, list[Path]], limits: ReadLimits, progress: Progress | None
) -> RootReport:
    dialect, logs = found
    reports = tuple(scan_source(str(log), ScanOptions(), limits, progress) for log in logs)
    return RootReport(path, dialect, reports)
