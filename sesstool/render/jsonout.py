"""Machine-readable documents: every ``--json`` output is one object with ``schema_version``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from sesstool.core.closer_list import Closers
from sesstool.core.documents import SCHEMA_VERSION, address_doc, finding_doc, scan_verdict_doc, verdict_doc
from sesstool.core.jsonline import dumps_pretty
from sesstool.core.model import TimelineEntry
from sesstool.core.rules import Severity
from sesstool.render.json_stream import array, pretty_pieces

if TYPE_CHECKING:  # annotations only: importing derive (redaction, hashing, the writer) costs start-up
    from sesstool.engine.companions import Companion
    from sesstool.engine.derive import DeriveReport
    from sesstool.engine.inspect import InspectReport
    from sesstool.engine.scan import ScanReport
    from sesstool.engine.validate import Checked, Validated
    from sesstool.store.sidecar import Sidecar


class Writable(Protocol):
    """Where a document is written (a binary file, or ``inspect_many``'s indenting entry)."""

    def write(self, data: bytes, /) -> int: ...


def file_facts(r: ScanReport) -> dict[str, Any]:
    src, rd = r.source, r.read
    torn = rd.torn_frame
    return {
        "path": src.display,
        "encoding": src.encoding,
        "size": src.size,
        "plaintext_bytes": rd.plaintext_bytes,
        "lines": rd.lines,
        "frames": rd.frames if src.encoding == "zstd" else None,
        "torn_frame": None
        if torn is None
        else {
            "index": torn.index,
            "file_offset": torn.file_offset,
            "file_length": torn.file_length,
            "plaintext_offset": torn.plaintext_offset,
            "plaintext_length": torn.plaintext_length,
            "recovered_lines": torn.lines,
        },
        "live": r.live,
    }


def scan_summary(r: ScanReport) -> dict[str, Any]:
    """The generic members of a scan, with the dialect's own between verdict and tail."""
    s = r.scan
    tail = s.tail
    doc: dict[str, Any] = {
        "header": s.header.raw if s.header is not None else None,
        "version": s.version if s.version is not None else s.version_label,
        "verdict": scan_verdict_doc(s),
    }
    doc.update(r.dialect.inspect_body(s))
    doc["tail"] = {
        "kind": tail.kind,
        "committed_bytes": tail.committed_bytes,
        "dropped_bytes": tail.dropped_bytes,
        "dropped_lines": tail.dropped_lines,
        "recovered_lines": tail.recovered_lines,
        "address": address_doc(tail.address),
    }
    doc["findings"] = [finding_doc(f) for f in s.findings]
    doc["findings_dropped"] = s.findings_dropped
    return doc


def inspect_doc(rep: InspectReport) -> dict[str, Any]:
    s = rep.scan.scan
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": "inspect",
        "file": file_facts(rep.scan),
    }
    doc.update(scan_summary(rep.scan))
    doc["repair"] = {"repairable": rep.repairable, "closers": array(rep.closers)}
    if rep.sidecar is not None:
        doc["sidecar"] = sidecar_doc(rep.sidecar)
    if rep.companions:
        sides = rep.companions  # spooled: made as they are written (issue 11 item 1)
        doc["companions"] = Closers(lambda: map(companion_doc, sides), len(sides))
    if s.timeline is not None and rep.replay_timeline is None:
        doc["timeline"] = [timeline_entry(e) for e in s.timeline]
    return doc


def companion_doc(side: Companion) -> dict[str, Any]:
    """A side file read with the log (a Claude session's subagent transcript): its path, verdict,
    the dialect's summary of it and its findings, each addressed by its own path."""
    if not side.scanned:
        doc_error: dict[str, Any] = {"path": side.path, "error": side.error}
        if side.sidecar is not None:
            doc_error["sidecar"] = sidecar_doc(side.sidecar)
        return doc_error
    doc: dict[str, Any] = {
        "path": side.display,
        "encoding": side.encoding,
        "size": side.size,
        "verdict": verdict_doc(side.verdict or "", side.verdict_reason, side.verdict_address),
    }
    doc.update(side.body)
    doc["findings"] = [finding_doc(f) for f in side.findings]
    doc["findings_dropped"] = side.findings_dropped
    if side.sidecar is not None:
        doc["sidecar"] = sidecar_doc(side.sidecar)
    return doc


def sidecar_doc(sidecar: Sidecar) -> dict[str, Any]:
    """A log's sidecar in ``inspect --json``: its path and the object as written, or why it
    could not be read."""
    if sidecar.content is None:
        return {"path": sidecar.path, "error": sidecar.error}
    return {"path": sidecar.path, "content": sidecar.content}


def timeline_entry(e: TimelineEntry) -> dict[str, Any]:
    """One timeline row; a line-addressed dialect's (Claude Code, Codex) also has its ``line``,
    ``time`` and ``sidechain`` mark, and its ``seq`` is the 0-based line number; a row merged from
    a side file (a subagent's) names it in ``agent``."""
    doc = {
        "seq": e.seq,
        "turn": e.turn,
        "step": e.step,
        "type": e.kind,
        "summary": e.summary,
        "replacement": e.shadowed,
    }
    if e.line is not None:
        doc.update(line=e.line, time=e.time, sidechain=e.sidechain)
    if e.agent is not None:  # a subagent file's row merged into its session's timeline
        doc["agent"] = e.agent
    return doc


def write_inspect_json(rep: InspectReport, out: Writable) -> None:
    """``inspect --json``: the document of ``inspect_doc``, byte for byte, with a replayed
    timeline written entry by entry as the second pass produces it (never held whole)."""
    doc = inspect_doc(rep)
    replay = None if "timeline" in doc else rep.replay_timeline
    pieces = pretty_pieces(doc)  # the closers written member by member (issue 11 item 1)
    del doc  # held by the pieces until they are written, not through the timeline's pass
    if replay is None:
        for piece in pieces:
            out.write(piece)
        out.write(b"\n")
        return
    last = next(pieces)
    for piece in pieces:
        out.write(last)
        last = piece
    assert last.endswith(b"\n}")
    out.write(last[:-2] + b',\n  "timeline": [')
    batch: list[dict[str, Any]] = []
    written = 0

    def flush() -> None:
        # a batch is dumped as one array (few, large allocations) and re-indented into place
        nonlocal written
        if batch:
            text = dumps_pretty(batch)[1:-2].replace(b"\n", b"\n  ")
            out.write((b"," if written else b"") + text)
            written += len(batch)
            batch.clear()

    def add(entry: TimelineEntry) -> None:
        batch.append(timeline_entry(entry))
        if len(batch) >= 1024:
            flush()

    replay(add)
    flush()
    out.write(b"\n  ]\n}\n" if written else b"]\n}\n")


def validate_doc(rep: Validated) -> dict[str, Any]:
    """``validate --json``: the summary (added up while the files were checked), then the files
    as a ``Closers`` made from the spool as it is walked (``write_validate_json``)."""
    counts = {sev.label: rep.totals[sev] for sev in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
    files = Closers(lambda: (_validated_file(fr, rep.fail_on) for fr in rep.files), len(rep.files))
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "validate",
        "fail_on": rep.fail_on.label,
        "failed": rep.failed,
        "summary": {"files": len(rep.files), "failed_files": rep.failed_files, **counts},
        "files": files,
    }


def _validated_file(fr: Checked, fail_on: Severity) -> dict[str, Any]:
    if not fr.scanned:
        return {
            "path": fr.path,
            "error": fr.error,
            "verdict": verdict_doc(fr.verdict, fr.error, None),
            "version": None,
            "findings": [],
            "findings_dropped": 0,
            "failed": True,
        }
    return {
        "path": fr.path,
        "error": None,
        "verdict": verdict_doc(fr.verdict, fr.verdict_reason, fr.verdict_address),
        "version": fr.version if fr.version is not None else fr.version_label,
        "encoding": fr.encoding,
        "events": fr.events,
        "live": fr.live,
        "findings": [finding_doc(f) for f in fr.findings],
        "findings_dropped": fr.findings_dropped,
        "failed": fr.failing(fail_on),
    }


def write_validate_json(rep: Validated, out: Writable) -> None:
    """``validate --json``: ``dumps_pretty(validate_doc(rep))`` and a newline, in pieces."""
    for piece in pretty_pieces(validate_doc(rep)):
        out.write(piece)
    out.write(b"\n")


def derive_doc(rep: DeriveReport, messages: Any, request: Any) -> dict[str, Any]:
    """The derive document with ``messages`` and ``request`` as given: derive_view streams the
    messages into their place and writes the request after them (issue 14)."""
    s = rep.scan.scan
    notes = rep.notes
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": "derive",
        "path": rep.scan.source.display,
        "session": s.session_id,
        "version": rep.as_version if rep.as_version is not None else s.version,
        "source_version": s.version,
        "verdict": scan_verdict_doc(s),
        "at": rep.at,
        "last_seq": s.open.last_seq if rep.at is None else s.stopped_at,
        "messages": messages,
        "request": request,
    }
    if notes:
        doc["best_effort"] = list(notes)
    excluded = rep.scan.dialect.derive_excludes()
    if excluded:
        doc["not_included"] = list(excluded)
    return doc
