"""migrate output: the versions, steps, and the new generation."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import SCHEMA_VERSION, scan_verdict_doc
from sesstool.engine.cold import visible_notes
from sesstool.engine.migrate import MigrateReport
from sesstool.render.escape import safe_line
from sesstool.render.published import already


def migrate_doc(rep: MigrateReport) -> dict[str, Any]:
    out = rep.output
    checked = rep.output_scan.scan if rep.output_scan is not None else None
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "migrate",
        "status": rep.status,
        "source": {
            "path": str(rep.source),
            "sha256": rep.source_sha256,
            "unchanged": True,
            "version": rep.from_version,
            "encoding": rep.scan.source.encoding,
            "events": rep.scan.scan.stats.events,
            "verdict": scan_verdict_doc(rep.scan.scan),
        },
        "to_version": rep.to_version,
        "steps": list(rep.steps),
        "target": str(rep.target) if rep.target is not None else None,
        "output": None
        if out is None
        else {
            "path": str(out.path),
            "size": out.size,
            "sha256": out.sha256,
            "identical": out.identical,
            "events": checked.stats.events if checked else None,
            "verdict": scan_verdict_doc(checked) if checked else None,
        },
        "closers_added": rep.closers_added,
        "torn_tail_dropped": {"bytes": rep.torn_dropped_bytes, "lines": rep.torn_dropped_lines},
        "notes": list(rep.notes),
    }


def render_migrate(rep: MigrateReport, console: Console, verbose: bool = False) -> None:
    src = safe_line(str(rep.source))
    if rep.status == "up-to-date":
        console.print(Text(f"{src}: up to date (already v{rep.to_version}); nothing written", style="green"))
        return
    head = "would migrate" if rep.status == "planned" else "migrated"
    console.print(
        Text(
            f"{head}  {src} (v{rep.from_version}) → {safe_line(str(rep.target))} (v{rep.to_version})",
            style="bold",
        )
    )
    console.print(f"  steps     {' → '.join(rep.steps)}")
    console.print(
        f"  source    sha256 {rep.source_sha256} (unchanged), "
        f"{rep.scan.scan.stats.events} events, verdict {rep.scan.scan.verdict}"
    )
    if rep.torn_dropped_bytes or rep.torn_dropped_lines:
        console.print(
            f"  not carried  torn tail of {rep.torn_dropped_bytes} byte(s), {rep.torn_dropped_lines} line(s)"
        )
    if rep.closers_added:
        console.print(f"  repaired  {rep.closers_added} closer(s) appended before migrating")
    if rep.output is not None:
        events = rep.output_scan.scan.stats.events if rep.output_scan else "?"
        console.print(
            f"  output    {already(rep.output)}{rep.output.size} bytes, {events} events, sha256 "
            f"{rep.output.sha256}; validated at v{rep.to_version}"
        )
    for note in visible_notes(rep.notes, verbose):
        console.print(Text(f"  note      {safe_line(note)}", style="yellow"))
