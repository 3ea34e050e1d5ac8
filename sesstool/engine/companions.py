"""The side files that belong to a log (``Dialect.companion_patterns``; Claude Code: the
subagents' transcripts under ``<session-id>/subagents/``), found beside it and each scanned on
its own: ``inspect`` shows them with the log, ``validate`` reports them under their own paths.
A log's sidecar (``Dialect.sidecar_name``: a subagent's ``agent-<id>.meta.json``) is read with
it for ``inspect``.

``scan_companions`` keeps no scan: each side file is summed up as it is scanned — its verdict,
findings, the dialect's ``inspect`` rows and ``--json`` members of it — and the summary appended
to a ``store.spool.ItemSpool`` (in memory up to a fixed number of bytes, then an unnamed
temporary file) that the views walk (issue 11 item 1: a session's 800 subagent files cost what
200 do)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from sesstool.core.errors import Address, InputError, NotASessionLog
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Finding
from sesstool.dialects.base import Dialect, Row
from sesstool.engine.scan import ScanReport, scan_source
from sesstool.store.paths import root_logs
from sesstool.store.remote import is_url
from sesstool.store.sidecar import Sidecar, read_sidecar
from sesstool.store.source import ReadLimits, is_stream
from sesstool.store.spool import ItemSpool


@dataclass(frozen=True, slots=True)
class Companion:
    """One side file read with a log, summed up for the views (the scan itself is not kept)."""

    path: str
    error: str | None  # why it could not be read (then nothing below is set but ``sidecar``)
    sidecar: Sidecar | None = None  # the document that describes it, when it has one
    reader: str | None = None  # the name of the dialect that read it (its sidecar row: ``registry.by_name``)
    display: str | None = None  # as the scan names it
    encoding: str | None = None
    size: int | None = None
    verdict: str | None = None
    verdict_reason: str | None = None
    verdict_address: Address | None = None
    findings: tuple[Finding, ...] = ()
    findings_dropped: int = 0
    rows: tuple[Row, ...] = ()  # ``Dialect.companion_rows`` of it (none: the view's default row)
    body: dict[str, Any] = field(default_factory=dict)  # ``Dialect.companion_body`` of it

    @property
    def scanned(self) -> bool:
        return self.error is None


def summed_up(path: str, report: ScanReport, sidecar: Sidecar | None) -> Companion:
    """What the views show of the side file ``path`` scanned into ``report``."""
    s, src, dialect = report.scan, report.source, report.dialect
    name = PurePath(path).name
    return Companion(
        path,
        None,
        sidecar,
        dialect.name,
        src.display,
        src.encoding,
        src.size,
        s.verdict,
        s.verdict_reason,
        s.verdict_address,
        s.findings,
        s.findings_dropped,
        dialect.companion_rows(((name, s),)),
        dialect.companion_body(s),
    )


def companion_paths(path: str, dialect: Dialect) -> Collection[str]:
    """The side files of the log at ``path``, sorted (``store.paths.SortedPaths``: a session of
    many side files holds a fixed amount of their paths); none for a stream or a remote object."""
    if is_url(path) or is_stream(path):
        return []
    patterns = dialect.companion_patterns(path)
    return root_logs(Path(path).parent, patterns) if patterns else []


def sidecar_of(path: str, dialect: Dialect) -> Sidecar | None:
    """The sidecar of the log at ``path`` (``Dialect.sidecar_name``), read; None when the dialect
    names none, no file has that name, or the log is a stream or a remote object."""
    if is_url(path) or is_stream(path):
        return None
    name = dialect.sidecar_name(path)
    return read_sidecar(Path(path).parent / name) if name else None


def scan_companions(
    sides: Iterable[str], dialect: Dialect, options: ScanOptions, limits: ReadLimits
) -> ItemSpool[Companion]:
    """Each side file ``sides`` names (``companion_paths``: found once, and inspect's timeline
    merges the same ones) scanned with ``options`` and summed up (a ``Companion``), in path order;
    one that cannot be read says why."""
    found: ItemSpool[Companion] = ItemSpool()
    try:
        for side in sides:
            try:
                report = scan_source(side, options, limits)
            except (InputError, NotASessionLog) as err:
                found.append(Companion(side, err.message, sidecar_of(side, dialect)))
                continue
            found.append(summed_up(side, report, sidecar_of(side, report.dialect)))
    except BaseException:
        found.close()
        raise
    return found
