"""fork output: the child, its lineage, and the records appended after the seed."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import SCHEMA_VERSION, scan_verdict_doc
from sesstool.core.jsonline import dumps
from sesstool.engine.fork import ForkReport
from sesstool.render.escape import safe_line
from sesstool.render.json_stream import array
from sesstool.render.published import already


def fork_doc(rep: ForkReport) -> dict[str, Any]:
    """The ``--json`` document (exact log values, never escaped)."""
    plan, src, pub = rep.plan, rep.source, rep.published
    header = src.scan.header
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "fork",
        "dry_run": rep.dry_run,
        "source": {
            "path": src.source.display,
            "encoding": src.source.encoding,
            "session": header.id if header is not None else src.scan.session_id,
            "version": src.scan.version,
            "verdict": scan_verdict_doc(src.scan),
            "sha256": rep.source_sha256,
            "sha256_after": rep.source_sha256_after,
            "unchanged": rep.source_unchanged,
        },
        "boundary": {
            "seq": plan.boundary,
            "chosen": rep.boundary_chosen,
            "open_turn": plan.open_turn,
            "open_turn_seq": plan.open_turn_seq,
        },
        "output": {
            "path": str(rep.target),
            "layout": rep.layout,
            "encoding": rep.encoding,
            "created_directory": str(rep.created_directory) if rep.created_directory else None,
            "size": pub.size if pub is not None else None,
            "sha256": pub.sha256 if pub is not None else None,
            "identical": pub.identical if pub is not None else None,
            "exists": rep.target_exists if rep.dry_run else None,
        },
        "child": {
            "id": plan.child_id,
            "version": plan.version,
            "header": plan.header,
            "inherited_events": plan.inherited,
            "events": plan.events,
            "seed_bytes": rep.seed_bytes,
        },
        "marker": plan.marker,
        "closers": array(plan.closers),
    }


def _record_line(record: dict[str, Any]) -> str:
    return dumps(record).decode("utf-8")


def render_fork(rep: ForkReport, console: Console) -> None:
    """Human summary; every value that comes from a log, a path or an option is escaped."""

    plan, src, pub = rep.plan, rep.source, rep.published

    def row(key: str, value: str, style: str = "") -> None:
        line = Text(f"{key:<11} ", style="bold")
        line.append(Text(value, style=style))
        console.print(line)

    parent = src.scan.header.id if src.scan.header is not None else src.scan.session_id
    title = "fork plan (dry run: nothing written)" if rep.dry_run else "forked"
    console.print(
        Text(
            f"{title}: {safe_line(str(parent))} → {safe_line(str(plan.child_id))}"
            + (f" (v{plan.version})" if plan.header else ""),
            style="bold yellow" if rep.dry_run else "bold green",
        )
    )
    known = {"option": "-o", "dsh-root": "own session directory", "beside-source": "beside the source"}
    where = (
        known.get(rep.layout)
        or f"beside the source, named as its {rep.layout.removesuffix('-root')} root names logs"
    )
    if pub is not None:
        row("output", f"{safe_line(str(rep.target))} ({where}, {rep.encoding})")
        row("", f"{already(pub)}{pub.size} bytes · sha256 {pub.sha256}")
    else:
        exists = " — exists already: a real run would be refused" if rep.target_exists else ""
        row("output", f"{safe_line(str(rep.target))} ({where}, {rep.encoding}){exists}")
    row("source", f"{safe_line(src.source.display)} ({src.source.encoding}, {src.scan.verdict})")
    if rep.source_sha256_after is None:
        row("", f"sha256 {rep.source_sha256}")
    else:
        same = "unchanged" if rep.source_unchanged else "CHANGED"
        row("", f"sha256 {rep.source_sha256} before · {rep.source_sha256_after} after ({same})")
    how = "--at" if rep.boundary_chosen == "at" else "default: end of the last completed turn"
    row("boundary", f"seq {plan.boundary} ({how})")
    if plan.open_turn is not None:
        row("", f"inside open turn {plan.open_turn} (turn/start seq {plan.open_turn_seq})", "yellow")
    row(
        "inherited",
        f"{plan.inherited} events (seq 0–{plan.boundary}), {rep.seed_bytes} bytes copied verbatim",
    )
    if plan.header:
        row("header", safe_line(_record_line(plan.header)))
    if plan.rewrite is not None:
        row("rewrite", src.dialect.fork_rewrite_note(plan))
    if plan.marker is not None:
        row("marker", safe_line(_record_line(plan.marker)))
    else:
        row("marker", src.dialect.fork_marker_note(plan))
    if not plan.closers:
        row("closers", "none")
    for i, closer in enumerate(plan.closers):
        row("closers" if i == 0 else "", safe_line(_record_line(closer)), "yellow")
