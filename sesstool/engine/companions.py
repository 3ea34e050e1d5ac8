"""The side files that belong to a log (``Dialect.companion_patterns``; Claude Code: the
subagents' transcripts under ``<session-id>/subagents/``), found beside it and each scanned on
its own: ``inspect`` shows them with the log, ``validate`` reports them under their own paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sesstool.core.errors import InputError, NotASessionLog
from sesstool.core.options import ScanOptions
from sesstool.dialects.base import Dialect
from sesstool.engine.scan import ScanReport, scan_source
from sesstool.store.paths import root_logs
from sesstool.store.remote import is_url
from sesstool.store.source import ReadLimits, is_stream


@dataclass(frozen=True, slots=True)
class Companion:
    path: str
    report: ScanReport | None
    error: str | None  # why it could not be read (then ``report`` is None)


def companion_paths(path: str, dialect: Dialect) -> list[str]:
    """The side files of the log at ``path``, sorted; none for a stream or a remote object."""
    if is_url(path) or is_stream(path):
        return []
    patterns = dialect.companion_patterns(path)
    return [str(p) for p in root_logs(Path(path).parent, patterns)] if patterns else []


def scan_companions(
    path: str, dialect: Dialect, options: ScanOptions, limits: ReadLimits
) -> tuple[Companion, ...]:
    """Each side file scanned with ``options``; one that cannot be read says why."""
    found: list[Companion] = []
    for side in companion_paths(path, dialect):
        try:
            found.append(Companion(side, scan_source(side, options, limits), None))
        except (InputError, NotASessionLog) as err:
            found.append(Companion(side, None, err.message))
    return tuple(found)
