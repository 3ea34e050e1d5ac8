"""redact output: where the copy is, and what was replaced, by kind."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import document, kept_source_doc
from sesstool.engine.cold import visible_notes
from sesstool.engine.redact import RedactReport
from sesstool.render.escape import safe_line
from sesstool.render.published import already


def redact_doc(rep: RedactReport) -> dict[str, Any]:
    scan = rep.scan.scan
    return document(
        "redact",
        status=rep.status,
        source=kept_source_doc(str(rep.source), rep.source_sha256, rep.scan.source.encoding, scan),
        target=str(rep.target),
        output=(
            {
                "path": str(rep.output.path),
                "size": rep.output.size,
                "sha256": rep.output.sha256,
                "identical": rep.output.identical,
            }
            if rep.output is not None
            else None
        ),
        replaced={
            "values": rep.counts.values,
            "occurrences": rep.counts.replacements,
            "by_kind": dict(rep.counts.by_kind),
            "records_changed": rep.records_changed,
            "records_reencoded": rep.records_reencoded,
        },
        notes=list(rep.notes),
    )


def render_redact(rep: RedactReport, console: Console, verbose: bool = False) -> None:
    def row(label: str, text: str) -> None:
        console.print(Text(f"{label:<11} ") + Text(safe_line(text)))

    scan = rep.scan.scan
    row("source", f"{rep.source} (unchanged, sha256 {rep.source_sha256}) · {scan.verdict}")
    if rep.output is not None:
        out = rep.output
        row(
            "wrote",
            f"{already(out)}{out.path} · {out.size} bytes · sha256 {out.sha256} · reads as {scan.verdict}",
        )
    else:
        row("would write", str(rep.target))
    c = rep.counts
    kinds = ", ".join(f"{kind} {n}" for kind, n in c.by_kind) or "nothing found"
    row(
        "replaced",
        f"{c.values} distinct value(s), {c.replacements} occurrence(s) in {rep.records_changed} record(s)",
    )
    row("by kind", kinds)
    if rep.records_reencoded:
        row("re-encoded", f"{rep.records_reencoded} record(s) whose secret was spelled with other escapes")
    for note in visible_notes(rep.notes, verbose):
        row("note", note)
