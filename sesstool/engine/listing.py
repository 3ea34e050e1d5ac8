"""The sessions a directory holds, one row each: ``sesstool list ROOT`` and ``inspect ROOT`` (a
forensic triage view; issue 15 item 11).

What a path is comes from the store (``store.paths.classify_path``): a dialect's root (a Claude
Code home, a Codex home, a dsh root: its logs found by that dialect's ``layout.patterns`` and
read as that dialect), a directory of logs (every file with a log suffix, any case, found by a
walk bounded in depth and entries — ``store.paths.bounded_walk``; the report says what it did not
search —, its dialect detected), a session directory (each of its generations) or a
remote prefix. Every log is scanned once and summarised: id, dialect, version, verdict, size,
last time, cwd, lines, pending calls (how many, and the first ``FIRST_SEEN`` ids: a row is
held until the rows are sorted, and a log may leave any number of calls dangling) and findings.
Rows are sorted newest activity first (a log without a time after those with one), then by path
(docs/format.md "Listing a root"): held in memory up to ``ROWS_HELD``, past which every row
moves to a spill file's table (``store.spill``) and is read back in that order by SQLite's
sorter (issue 11 item 1: a root of many logs costs a fixed amount, not a row each).
"""

from __future__ import annotations

import pickle
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from sesstool.core.errors import Address, InputError, NotASessionLog, SesstoolError
from sesstool.core.first_seen import FIRST_SEEN
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.dialects import registry
from sesstool.engine.scan import Progress, scan_source
from sesstool.store.generations import generations
from sesstool.store.paging import text_key
from sesstool.store.paths import Group, PathClass, WalkBound, classify_path, file_size
from sesstool.store.source import ReadLimits

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile


@dataclass(frozen=True, slots=True)
class ListRequest:
    root: str
    limits: ReadLimits = field(default_factory=ReadLimits)


@dataclass(frozen=True, slots=True)
class SessionRow:
    path: str
    dialect: str | None  # None: the log could not be read far enough to tell
    session_id: str | None
    cwd: str | None
    version: int | None
    version_label: str | None  # a version that is not a number (Claude Code, Codex CLI)
    verdict: str  # a scan verdict, "not-a-log" or "unreadable" (``error`` says why)
    size: int | None
    last_time: str | None  # ISO 8601
    encoding: str | None = None
    lines: int = 0  # complete lines read
    pending: tuple[str, ...] = ()  # the first ``FIRST_SEEN`` call ids of the dangling tool calls
    findings: tuple[int, int, int] = (0, 0, 0)  # info, warning, error
    error: str | None = None
    verdict_reason: str | None = None  # why the verdict (a scan's reason, or ``error``)
    verdict_address: Address | None = None  # where it was decided
    pending_count: int = 0  # how many calls dangle (a log may leave any number: issue 11 item 1)

    @property
    def version_text(self) -> str | None:
        return self.version_label if self.version_label is not None else _num(self.version)


def _num(version: int | None) -> str | None:
    return None if version is None else str(version)


@dataclass(frozen=True, slots=True)
class ListReport:
    root: str
    layout: str  # what the directory is: "<dialect title> root", "directory of logs", …
    layout_dialect: str | None  # the dialect whose root layout it has (None: found by suffix)
    sessions: Collection[SessionRow]  # sorted; walked (``SortedRows``)
    walk: WalkBound | None = None  # a directory of logs: how far its search went

    def close(self) -> None:
        """Give back the rows' spill file, when they spilled."""
        if isinstance(self.sessions, SortedRows):
            self.sessions.close()


ROWS_HELD = 1024  # rows sorted in memory; past them a spill file's table sorts them


class SortedRows(Collection[SessionRow]):
    """The rows, added in any order and walked newest first, then by path: a list while there are
    at most ``ROWS_HELD`` of them, else a spill file's table ordered by SQLite on the same keys
    (the time, then the path, as UTF-8 bytes with any lone surrogate passed through: the byte
    order of that encoding is the order of the code points Python compares)."""

    def __init__(self) -> None:
        self._held: list[SessionRow] | None = []
        self._file: SpillFile | None = None
        self._table = ""
        self._count = 0

    def add(self, row: SessionRow) -> None:
        self._count += 1
        if self._held is not None:
            self._held.append(row)
            if len(self._held) > ROWS_HELD:
                held, self._held = self._held, None
                self._spill(held)
            return
        self._spill((row,))

    def _spill(self, rows: Iterable[SessionRow]) -> None:
        if self._file is None:
            from sesstool.store.spill import SpillFile  # sqlite3: only for a root this large

            self._file = SpillFile("the rows of a listing")
            self._table = self._file.table("time BLOB NOT NULL, path BLOB NOT NULL, row BLOB NOT NULL")
        self._file.executemany(
            f"INSERT INTO {self._table} VALUES (?, ?, ?)",
            ((text_key(r.last_time or ""), text_key(r.path), pickle.dumps(r)) for r in rows),
        )

    def __len__(self) -> int:
        return self._count

    def __contains__(self, row: object) -> bool:
        return any(r == row for r in self)

    def __iter__(self) -> Iterator[SessionRow]:
        if self._held is not None:
            rows = sorted(self._held, key=lambda r: r.path)
            rows.sort(key=lambda r: r.last_time or "", reverse=True)  # stable: newest first, by path
            return iter(rows)
        return self._spilled()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _spilled(self) -> Iterator[SessionRow]:
        store = self._file
        assert store is not None
        cursor = store.execute(f"SELECT row FROM {self._table} ORDER BY time DESC, path, rowid")
        while found := store.fetch(cursor, 256):
            for (row,) in found:
                yield pickle.loads(row)  # this process's own rows, from its own unnamed file


def classify(arg: str) -> PathClass:
    """What ``arg`` is, with every registered dialect's root layout and log suffixes. Only a
    directory's or a URL's class depends on them, so only those import every dialect (a
    file's dialect is imported when its first record is read: issue 14, start-up)."""
    found = classify_path(arg)
    if found.kind in _WITHOUT_LAYOUTS:
        return found
    return classify_path(arg, registry.layouts(), registry.log_suffixes())


# what ``classify_path`` says of a path without looking at any dialect's layout or suffixes
_WITHOUT_LAYOUTS = frozenset({"log", "stdin", "stream", "special", "missing", "session-dir"})


def run_list(
    request: ListRequest, progress: Progress | None = None, found: PathClass | None = None
) -> ListReport:
    """List the sessions under ``request.root`` (``found``: its classification, when the caller
    already has it). Raises InputError (exit 3) when the path holds no session log."""
    found = found or classify(request.root)
    if found.kind == "session-dir":
        logs = tuple(str(g.path) for g in generations(Path(request.root)))
        found = replace(found, groups=(Group(None, logs),))
    elif not found.listable:
        why = found.reason or f"{request.root}: not a directory of session logs"
        unusable = found.kind in ("missing", "unreadable")
        raise InputError(why if unusable else nothing_found(request.root, found))
    rows = SortedRows()
    for group in found.groups:
        for log in group.logs:
            rows.add(_row(log, group.layout, request.limits, progress))
    if not rows:
        raise InputError(nothing_found(request.root, found))
    layout_dialect = next((g.layout for g in found.groups if g.layout is not None), None)
    layout = _layout_text(found, layout_dialect)
    return ListReport(request.root, layout, layout_dialect, rows, found.walk)


def nothing_found(root: str, found: PathClass) -> str:
    """Why ``root`` lists nothing; for a directory whose search was bounded, what it skipped."""
    if found.kind in ("log", "stream", "stdin", "remote-object"):
        return f"{root}: a single log, not a directory of sessions (inspect it)"
    endings = ", ".join("*" + s for s in registry.log_suffixes())
    why = f"{root}: no session logs in any known root layout, nor any {endings} file"
    walk = found.walk
    if walk is not None and walk.skipped:
        why += f" within {walk.max_depth} levels and {walk.max_entries} entries ({walk.describe()})"
    return why


def _layout_text(found: PathClass, owner: str | None) -> str:
    if owner is not None:
        return f"{registry.by_name(owner).title} root"
    if found.kind == "session-dir":
        return "session directory"
    return "directory of logs"


def _row(path: str, layout: str | None, limits: ReadLimits, progress: Progress | None) -> SessionRow:
    read = replace(limits, dialect=layout) if layout is not None else limits
    try:
        report = scan_source(path, ScanOptions(), read, progress)
    except SesstoolError as err:
        verdict = "not-a-log" if isinstance(err, NotASessionLog) else "unreadable"
        why = err.message.removeprefix(f"{path}: ")  # the row names the path already
        return SessionRow(
            path,
            layout,
            None,
            None,
            None,
            None,
            verdict,
            file_size(path),
            None,
            error=why,
            verdict_reason=why,
        )
    scan, dialect = report.scan, report.dialect
    facts = dialect.list_facts(scan)
    counts = tuple(scan.count(sev) for sev in Severity)
    return SessionRow(
        path,
        dialect.name,
        scan.session_id,
        facts.get("cwd"),
        scan.version,
        scan.version_label,
        scan.verdict,
        report.source.size,
        facts.get("last_time"),
        report.source.encoding,
        report.read.lines,
        tuple(p.call_id for p in islice(scan.open.pending, FIRST_SEEN)),
        (counts[0], counts[1], counts[2]),
        verdict_reason=scan.verdict_reason,
        verdict_address=scan.verdict_address,
        pending_count=len(scan.open.pending),
    )
