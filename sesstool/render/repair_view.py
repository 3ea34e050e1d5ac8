"""repair output: what was kept, dropped and appended, and where the new file is."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import defect_doc, document, kept_source_doc
from sesstool.engine.cold import visible_notes
from sesstool.engine.relink import edit_doc
from sesstool.engine.repair import RepairReport
from sesstool.render.escape import safe_line
from sesstool.render.json_stream import array
from sesstool.render.published import already


def repair_doc(rep: RepairReport) -> dict[str, Any]:
    scan = rep.scan.scan
    plan = rep.plan
    source = kept_source_doc(str(rep.source), rep.source_sha256, rep.scan.source.encoding, scan)
    doc = document(
        "repair",
        status=rep.status,
        source=source,
        target=str(rep.target) if rep.target is not None else None,
        output=None,
        plan=None,
        salvage=None,
        lock=None,
        notes=list(rep.notes),
    )
    if rep.lock is not None:
        doc["lock"] = {"path": str(rep.lock.path), "existed": rep.lock.existed, "held": rep.lock.held}
    if plan is not None:
        doc["plan"] = {
            "output_encoding": plan.output_encoding,
            "committed_bytes": plan.committed,
            "committed_events": plan.committed_events,
            "copied_verbatim_bytes": plan.copy_file,
            "dropped_plaintext_bytes": plan.dropped_plain,
            "dropped_lines": plan.dropped_lines,
            "recovered_lines": plan.recovered_lines,
            "reframed": plan.reframed,
            "closers": array(plan.closers),
        }
    if rep.output is not None:
        doc["output"] = {
            "path": str(rep.output.path),
            "size": rep.output.size,
            "sha256": rep.output.sha256,
            "identical": rep.output.identical,
        }
    if rep.relink is not None:
        manifest = rep.relink.manifest
        doc["relink"] = {
            "manifest": str(manifest.path if manifest is not None else rep.relink.manifest_target),
            "manifest_sha256": manifest.sha256 if manifest is not None else None,
            "changes": [edit_doc(e) for e in rep.relink.edits],
        }
    if plan is not None and plan.salvage is not None:
        sv = plan.salvage
        doc["salvage"] = {
            "defect": defect_doc(sv.defect),
            "kept_plaintext_bytes": sv.cut,
            "dropped_file_offset": sv.dropped_file_offset,
            "dropped_file_bytes": sv.dropped_file_bytes,
            "sidecar": str(rep.salvage.sidecar.path) if rep.salvage and rep.salvage.sidecar else None,
            "report": str(rep.salvage.report.path) if rep.salvage and rep.salvage.report else None,
            "dropped_sha256": rep.salvage.dropped_sha256 if rep.salvage else None,
        }
        if rep.dropped_ranges:  # a line salvage (Codex): every dropped range, not one cut
            doc["salvage"]["dropped_ranges"] = [
                {
                    "rule": r.rule,
                    "line": r.line,
                    "plaintext_offset": r.plaintext_offset,
                    "file_offset": r.file_offset,
                    "bytes": r.length,
                    "rest_of_line_kept": r.recovered,
                }
                for r in rep.dropped_ranges
            ]
    return doc


def render_repair(rep: RepairReport, console: Console, verbose: bool = False) -> None:
    scan = rep.scan.scan
    src = safe_line(str(rep.source))
    if rep.status == "balanced":
        console.print(
            Text(
                f"{src}: already balanced (verdict clean): nothing to repair, nothing written", style="green"
            )
        )
        return
    plan = rep.plan
    assert plan is not None and rep.target is not None
    head = "would repair" if rep.status == "planned" else "repaired"
    console.print(Text(f"{head}  {src} → {safe_line(str(rep.target))}", style="bold"))
    console.print(
        f"  source    {scan.verdict}: {safe_line(scan.verdict_reason)}; "
        f"{f'v{scan.version}' if scan.version is not None else safe_line(scan.version_label or '?')} "
        f"{rep.scan.source.encoding}, sha256 {rep.source_sha256} (unchanged)"
    )
    kept = f"{plan.committed_events} events ({plan.committed} bytes of plaintext)"
    if plan.copy_file:
        kept += f", {plan.copy_file} file bytes copied verbatim"
    console.print(f"  kept      {kept}")
    if plan.reframed:
        console.print(
            "  framing   the source is one zstd frame: written as the harness writes a log "
            "(the header line alone in the first frame, then the body)"
        )
    if rep.dropped_ranges:
        _render_line_salvage(rep, console)
    elif plan.recovered_lines:
        console.print(f"  recovered {plan.recovered_lines} complete line(s) from the torn frame")
    if (plan.dropped_plain or plan.dropped_lines) and not rep.dropped_ranges:
        console.print(
            f"  dropped   {plan.dropped_plain} byte(s) after the committed prefix "
            f"({plan.dropped_lines} record(s), torn or uncommitted)"
        )
    if plan.salvage is not None and not rep.dropped_ranges:
        sv = plan.salvage
        console.print(
            Text(
                f"  salvage   dropped from {safe_line(sv.defect.address.describe())} "
                f"[{sv.defect.rule}]: {sv.dropped_file_bytes} source byte(s) from "
                f"offset {sv.dropped_file_offset}",
                style="yellow",
            )
        )
        if rep.salvage is not None and rep.salvage.sidecar is not None:
            console.print(
                f"            saved to {safe_line(str(rep.salvage.sidecar.path))} "
                f"(sha256 {rep.salvage.dropped_sha256})"
            )
    if rep.relink is not None:
        _render_relink(rep, console)
    if plan.closers:
        console.print(f"  appended  {len(plan.closers)} closer(s):")
        for c in plan.closers:
            console.print("    " + safe_line(rep.scan.dialect.describe_closer(c)))
    else:
        console.print("  appended  nothing: every turn was already closed")
    if rep.output is not None:
        console.print(f"  output    {already(rep.output)}{rep.output.size} bytes, sha256 {rep.output.sha256}")
    for note in visible_notes(rep.notes, verbose):
        console.print(Text(f"  note      {safe_line(note)}", style="yellow"))


def _render_relink(rep: RepairReport, console: Console) -> None:
    """--relink: every line edited (an edit, not an append) and the manifest that lists them."""
    relink = rep.relink
    assert relink is not None
    console.print(
        Text(
            f"  relinked  {len(relink.edits)} broken link(s) re-pointed, each line edited in place:",
            style="yellow",
        )
    )
    for e in relink.edits:
        new = e.new if e.new is not None else "null (a root)"
        edit = f"{e.field} {safe_line(str(e.old))} → {safe_line(str(new))}"
        console.print(f"    line {e.line} {safe_line(str(e.uuid))}: {edit}")
    written = relink.manifest
    where = safe_line(str(written.path if written is not None else relink.manifest_target))
    if written is None:
        console.print(f"  manifest  would be written to {where}")
    else:
        console.print(
            f"  manifest  {already(written)}{where} ({written.size} bytes, sha256 {written.sha256})"
        )


def _render_line_salvage(rep: RepairReport, console: Console) -> None:
    """A line salvage: the lines the loader reads are kept, each skipped one is listed."""
    plan = rep.plan
    assert plan is not None and plan.salvage is not None
    if plan.recovered_lines:
        console.print(
            f"  recovered {plan.recovered_lines} complete line(s) written after a partial one on the "
            "same line"
        )
    console.print(
        Text(
            f"  salvage   dropped {plan.salvage.dropped_file_bytes} byte(s) in {len(rep.dropped_ranges)} "
            "range(s) the loader skips:",
            style="yellow",
        )
    )
    for r in rep.dropped_ranges:
        where = (
            f"line {r.line}, byte {r.plaintext_offset}"
            if r.line is not None
            else f"file byte {r.file_offset}"
        )
        rest = " (rest of the line kept)" if r.recovered else ""
        console.print(f"            {where}: {r.length} byte(s) [{r.rule}]{rest}")
    if rep.salvage is not None and rep.salvage.sidecar is not None:
        console.print(
            f"            saved to {safe_line(str(rep.salvage.sidecar.path))} "
            f"(sha256 {rep.salvage.dropped_sha256})"
        )
