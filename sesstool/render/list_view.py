"""The sessions of a root, one row each (``list ROOT`` and ``inspect ROOT``): a human table of
two lines per session, or one JSON document."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.closer_list import Closers
from sesstool.core.documents import SCHEMA_VERSION, verdict_doc
from sesstool.core.humanize import plural
from sesstool.core.rules import Severity
from sesstool.engine.listing import ListReport, SessionRow
from sesstool.render.escape import safe_line
from sesstool.render.json_stream import pretty_pieces
from sesstool.render.jsonout import Writable
from sesstool.store.paths import WalkBound

VERDICT_STYLE = {"clean": "green", "interrupted": "yellow", "torn": "yellow", "corrupt": "red"}
INDENT = " " * 12


def list_doc(rep: ListReport, command: str = "list") -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "root": rep.root,
        "layout": rep.layout,
        "dialect": rep.layout_dialect,
        "sessions": Closers(lambda: map(_session, rep.sessions), len(rep.sessions)),  # walked
        "walk": None if rep.walk is None else _walk(rep.walk),
    }


def write_list_json(rep: ListReport, out: Writable, command: str = "list") -> None:
    """``dumps_pretty(list_doc(rep, command))``, without its final newline, in pieces: the rows
    are written as they are read back (``json_stream.pretty_pieces``), never held as a document."""
    for piece in pretty_pieces(list_doc(rep, command)):
        out.write(piece)


def _walk(w: WalkBound) -> dict[str, Any]:
    """How far the search of a directory of logs went (null for a root layout's logs)."""
    return {
        "max_depth": w.max_depth,
        "max_entries": w.max_entries,
        "entries": w.entries,
        "deeper_directories": w.deeper,
        "unreadable_directories": w.unreadable,
        "stopped": w.stopped,
        "complete": not w.skipped,
    }


def _session(r: SessionRow) -> dict[str, Any]:
    return {
        "path": r.path,
        "dialect": r.dialect,
        "session": r.session_id,
        "cwd": r.cwd,
        "version": r.version_text,
        "verdict": verdict_doc(r.verdict, r.verdict_reason, r.verdict_address),
        "size": r.size,
        "last_time": r.last_time,
        "encoding": r.encoding,
        "lines": r.lines,
        "pending_calls": list(r.pending),
        **_more_pending(r),
        "findings": {sev.label: n for sev, n in zip(Severity, r.findings, strict=True)},
        **({"error": r.error} if r.error is not None else {}),
    }


def _more_pending(r: SessionRow) -> dict[str, Any]:
    """A row whose pending calls were cut at ``FIRST_SEEN`` ids says so, and how many there are."""
    if r.pending_count <= len(r.pending):
        return {}
    return {"more": ["pending_calls"], "pending_count": r.pending_count}


UNSCANNED = ("not-a-log", "unreadable")  # the verdicts of a row that is not a session read


def counted(rep: ListReport) -> tuple[str, str]:
    """What the rows are, for the header and for the summary line: "3 session logs" when every
    row is a log read, else "N files: …" with the files that are not session logs (or could not
    be opened) counted apart, so that no file is called a session log it is not."""
    n = len(rep.sessions)
    other = {v: sum(1 for r in rep.sessions if r.verdict == v) for v in UNSCANNED}
    if not any(other.values()):
        return plural(n, "session log"), plural(n, "session log")
    parts = [plural(n - sum(other.values()), "session log")]
    if other["not-a-log"]:
        k = other["not-a-log"]
        parts.append(f"{k} not a session log" if k == 1 else f"{k} not session logs")
    if other["unreadable"]:
        parts.append(f"{other['unreadable']} unreadable")
    return f"{plural(n, 'file')}: {', '.join(parts)}", plural(n, "file")


def render_list(rep: ListReport, console: Console) -> None:
    head, noun = counted(rep)
    console.print(Text(f"{safe_line(rep.root)}: {rep.layout}, {head}, newest first", style="bold"))
    for r in rep.sessions:
        line = Text(f"{r.verdict:<12}", style=VERDICT_STYLE.get(r.verdict, "red"))
        if r.error is not None:
            line.append(safe_line(r.error))
        else:
            line.append(safe_line(f"{r.session_id or '?'}  {r.dialect or '?'} {r.version_text or '?'}  "))
            pending = f" · {plural(r.pending_count, 'pending call')}" if r.pending_count else ""
            line.append(
                f"{r.size} bytes  last {safe_line(r.last_time or '?')}  {plural(r.lines, 'line')}"
                f"{pending} · {plural(sum(r.findings), 'finding')}"
            )
        console.print(line)
        where = safe_line(r.path) + (f"  cwd {safe_line(r.cwd)}" if r.cwd else "")
        console.print(Text(INDENT + where, style="dim"))
    counts: dict[str, int] = {}
    for r in rep.sessions:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    summary = ", ".join(f"{k} {v}" for v, k in sorted(counts.items()))
    console.print(Text(f"{noun}: {summary}", style="dim"))
    if rep.walk is not None and rep.walk.skipped:
        w = rep.walk
        console.print(
            Text(
                f"not searched (at most {w.max_depth} levels, {w.max_entries} entries): {w.describe()}",
                style="yellow",
            )
        )
