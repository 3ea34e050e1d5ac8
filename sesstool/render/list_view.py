"""list output: one row per session of a root (human table, or one JSON document)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import SCHEMA_VERSION
from sesstool.engine.listing import ListReport
from sesstool.render.escape import safe_line

VERDICT_STYLE = {"clean": "green", "interrupted": "yellow", "torn": "yellow", "corrupt": "red"}


def list_doc(rep: ListReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "list",
        "root": rep.root,
        "sessions": [
            {
                "path": r.path,
                "dialect": r.dialect,
                "session": r.session_id,
                "cwd": r.cwd,
                "version": r.version,
                "verdict": r.verdict,
                "size": r.size,
                "last_time": r.last_time,
                **({"error": r.error} if r.error is not None else {}),
            }
            for r in rep.sessions
        ],
    }


def render_list(rep: ListReport, console: Console) -> None:
    for r in rep.sessions:
        line = Text(f"{r.verdict:<12}", style=VERDICT_STYLE.get(r.verdict, "red"))
        line.append(safe_line(f"{r.session_id or '?'}  {r.dialect} {r.version or '?'}  {r.size} bytes  "))
        line.append(safe_line(f"last {r.last_time or '?'}  cwd {r.cwd or '?'}"))
        console.print(line)
        console.print(Text("            " + safe_line(r.path), style="dim"))
    counts: dict[str, int] = {}
    for r in rep.sessions:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    console.print(
        Text(f"{len(rep.sessions)} session log(s) under {safe_line(rep.root)}: {summary}", style="dim")
    )
