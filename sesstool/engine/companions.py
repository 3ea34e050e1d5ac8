"""The side files that belong to a log (``Dialect.companion_patterns``; Claude Code: the
subagents' transcripts under ``<session-id>/subagents/``), found beside it and each scanned on
its own: ``inspect`` shows them with the log, ``validate`` reports them under their own paths.
A log's sidecar (``Dialect.sidecar_name``: a subagent's ``agent-<id>.meta.json``) is read with
it for ``inspect``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sesstool.core.errors import InputError, NotASessionLog
from sesstool.core.options import ScanOptions
from sesstool.dialects.base import Dialect
from sesstool.engine.scan import ScanReport, scan_source
from sesstool.store.paths import root_logs
from sesstool.store.remote import is_url
from sesstool.store.sidecar import Sidecar, read_sidecar
from sesstool.store.source import ReadLimits, is_stream


@dataclass(frozen=True, slots=True)
class Companion:
    path: str
    report: ScanReport | None
    error: str | None  # why it could not be read (then ``report`` is None)
    sidecar: Sidecar | None = None  # the document that describes it, when it has one


def companion_paths(path: str, dialect: Dialect) -> list[str]:
    """The side files of the log at ``path``, sorted; none for a stream or a remote object."""
    if is_url(path) or is_stream(path):
        return []
    patterns = dialect.companion_patterns(path)
    return [str(p) for p in root_logs(Path(path).parent, patterns)] if patterns else []


def sidecar_of(path: str, dialect: Dialect) -> Sidecar | None:
    """The sidecar of the log at ``path`` (``Dialect.sidecar_name``), read; None when the dialect
    names none, no file has that name, or the log is a stream or a remote object."""
    if is_url(path) or is_stream(path):
        return None
    name = dialect.sidecar_name(path)
    return read_sidecar(Path(path).parent / name) if name else None


def scan_companions(
    path: str, dialect: Dialect, options: ScanOptions, limits: ReadLimits
) -> tuple[Companion, ...]:
    """Each side file scanned with ``options``; one that cannot be read says why."""
    found: list[Companion] = []
    for side in companion_paths(path, dialect):
        try:
            report = scan_source(side, options, limits)
        except (InputError, NotASessionLog) as err:
            found.append(Companion(side, None, err.message, sidecar_of(side, dialect)))
            continue
        found.append(Companion(side, report, None, sidecar_of(side, report.dialect)))
    return tuple(found)
