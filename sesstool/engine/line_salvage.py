"""``repair --salvage`` for a dialect whose own loader skips the lines it cannot decode and reads
on (Codex, agent-formats §3.4): keep every line that loader reads, drop only the others, and
record each dropped range (docs/format.md "Salvage of a rollout").

Streaming passes over the source's plaintext, each making the same line-by-line decision
(``Dialect.salvage_readable_from``): the first hashes the kept stream, lists the dropped ranges
and feeds the kept lines to a fresh scanner, whose state gives the closers; the second writes the
dropped bytes into the ``.dropped`` sidecar; the third writes the kept bytes and the closers into
the new file. Every pass is checked against the first by its SHA-256, and the new file is read
back and must validate balanced. The source is only read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sesstool.core.closer_list import Closers, joined
from sesstool.core.documents import SCHEMA_VERSION, defect_doc
from sesstool.core.errors import InputError, WriteRefusedError
from sesstool.core.jsonline import dumps_pretty
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Encoding, PhysicalIssue
from sesstool.core.repair_plan import RepairPlan, Salvage
from sesstool.core.rules import Finding, Severity
from sesstool.dialects.base import Dialect
from sesstool.engine.write import SourceRead, refuse_unless_valid, rescan
from sesstool.store.digest import sha256_file
from sesstool.store.framing import FrameWriter
from sesstool.store.lines import LineSplitter
from sesstool.store.plaintext import file_range, plaintext_range
from sesstool.store.publish import Published, Sink, publish
from sesstool.store.source import ReadLimits

KEEP, DROP = True, False


@dataclass(frozen=True, slots=True)
class DroppedRange:
    """One dropped run of source bytes, as the ``.dropped.json`` manifest lists it."""

    rule: str  # the finding at that line (or the tail's rule)
    line: int | None  # 1-based source line
    plaintext_offset: int | None  # None for the compressed bytes of a torn zstd frame
    file_offset: int | None  # raw: = plaintext_offset; zstd: only for a torn frame's bytes
    length: int
    sha256: str
    sidecar_offset: int  # where these bytes sit in the ``.dropped`` sidecar
    recovered: bool  # the rest of the same line was a complete line, kept


@dataclass(frozen=True, slots=True)
class LineSalvage:
    plan: RepairPlan
    ranges: tuple[DroppedRange, ...]
    dropped_sha256: str
    expected_sha256: str  # the whole new plaintext (kept lines, then closers), from the first pass
    sidecar: Published | None = None
    report: Published | None = None
    output: Published | None = None


@dataclass(slots=True)
class _Walk:
    source: Path
    encoding: Encoding
    dialect: Dialect
    limits: ReadLimits
    plaintext_end: int  # decode up to here
    torn_frame: tuple[int, int] | None  # (file offset, bytes) of a torn last zstd frame

    def pieces(self) -> Iterator[tuple[bool, bytes, int, int]]:
        """(KEEP or DROP, bytes, source plaintext offset, line) in source order."""
        splitter = LineSplitter(self.limits.max_line)
        for chunk in plaintext_range(
            self.source, self.encoding, 0, self.plaintext_end, self.limits.max_window
        ):
            for item in splitter.feed(chunk):
                if isinstance(item, PhysicalIssue):
                    yield from self._filler(item)
                    continue
                lines, offset, lineno, _ = item
                for line in lines:
                    start = self.dialect.salvage_readable_from(line)
                    if start is None:
                        yield DROP, line + b"\n", offset, lineno
                    elif start == 0:
                        yield KEEP, line + b"\n", offset, lineno
                    else:
                        yield DROP, line[:start], offset, lineno
                        yield KEEP, line[start:] + b"\n", offset + start, lineno
                    offset += len(line) + 1
                    lineno += 1
        rest = splitter.take_partial()  # before finish(), which forgets it
        partial = splitter.finish()
        if partial is not None and self.torn_frame is None:
            if len(rest) != partial.length:
                raise InputError(f"cannot salvage: the last line is over {self.limits.max_line} bytes", None)
            yield DROP, rest, partial.offset, partial.line

    def _filler(self, issue: PhysicalIssue) -> Iterator[tuple[bool, bytes, int, int]]:
        """A bulk run of filler lines: empty lines are kept (Codex skips them quietly), NUL
        lines dropped; anything else the reader reports stops the salvage."""
        if issue.length is None or issue.offset is None or issue.line is None:
            raise InputError(f"cannot salvage past this: {issue.message}", None)
        kind = KEEP if issue.blank else DROP
        for piece in plaintext_range(
            self.source, self.encoding, issue.offset, issue.offset + issue.length, self.limits.max_window
        ):
            yield kind, piece, issue.offset, issue.line


def _rules_by_line(findings: tuple[Finding, ...]) -> dict[int, str]:
    """The rule that names each line's defect (an error first, else the torn tail's warning)."""
    rules: dict[int, str] = {}
    for f in sorted(findings, key=lambda f: f.severity is not Severity.ERROR):
        if f.address.line is not None:
            rules.setdefault(f.address.line, f.rule)
    return rules


def plan_line_salvage(source: SourceRead, output_encoding: Encoding, limits: ReadLimits) -> LineSalvage:
    """The first pass: what is kept, what is dropped, and the closers the kept lines need."""
    scan, dialect, report = source.scan, source.dialect, source.report
    _refuse_unless_every_error_was_kept(scan)
    walk = _walk_of(source, limits)
    rules = _rules_by_line(scan.findings)
    scanner = dialect.scanner(str(source.path), ScanOptions())
    kept_hash, dropped_hash = hashlib.sha256(), hashlib.sha256()
    kept = kept_lines = recovered = dropped = 0
    ranges: list[DroppedRange] = []
    batch: list[bytes] = []
    batch_offset, batch_line = 0, 1
    previous: tuple[bool, int] | None = None  # the last piece's kind and line
    for kind, data, offset, lineno in walk.pieces():
        if kind is KEEP:
            kept_hash.update(data)
            if previous == (DROP, lineno):
                recovered += 1
                ranges[-1] = _recovered(ranges[-1])
            lines = data.split(b"\n")[:-1]
            if not batch:
                batch_offset, batch_line = kept, kept_lines + 1
            batch += lines
            kept += len(data)
            kept_lines += len(lines)
            if len(batch) >= 1024:
                scanner.feed_lines(batch, batch_offset, batch_line, None)
                batch = []
        else:
            dropped_hash.update(data)
            ranges.append(
                DroppedRange(
                    rules.get(lineno, "undecodable-line"),
                    lineno,
                    offset,
                    offset if walk.encoding == "raw" else None,
                    len(data),
                    hashlib.sha256(data).hexdigest(),
                    dropped,
                    False,
                )
            )
            dropped += len(data)
        previous = (kind, lineno)
    if batch:
        scanner.feed_lines(batch, batch_offset, batch_line, None)
    torn = _torn_frame(source.path, walk, scan, dropped, dropped_hash)
    if torn is not None:
        ranges.append(torn)
        dropped += torn.length
    kept_scan = scanner.finish(None)
    _refuse_unless_salvageable(kept_scan)
    closers = dialect.closers(kept_scan)  # walked, never held (issue 11 item 1)
    defect = next(f for f in scan.weighed if f.severity is Severity.ERROR)
    plan = RepairPlan(
        version=kept_scan.version,
        source_encoding=report.source.encoding,
        output_encoding=output_encoding,
        source_verdict=scan.verdict,
        committed=kept,
        body_offset=kept_scan.body_offset or 0,
        copy_file=0,
        copy_plain=0,
        dropped_plain=sum(r.length for r in ranges if r.plaintext_offset is not None),
        dropped_lines=len(ranges),
        recovered_lines=recovered,
        closers=closers,
        salvage=Salvage(
            defect,
            kept,
            _where(ranges[0] if ranges else None),
            dropped,
        ),
        committed_events=kept_lines,
        header_frame=dialect.header_frame,
        reframed=False,  # written line by line: never the one-frame source re-framed (plan_repair)
    )
    for c in closers:
        kept_hash.update(dialect.encode_record(c))
    return LineSalvage(plan, tuple(ranges), dropped_hash.hexdigest(), kept_hash.hexdigest())


def _torn_frame(
    path: Path, walk: _Walk, scan: ScanResult, sidecar_offset: int, digest: Any
) -> DroppedRange | None:
    """The compressed bytes of a torn last zstd frame, dropped whole (none of it is a line)."""
    if walk.torn_frame is None:
        return None
    start, length = walk.torn_frame
    data = b"".join(file_range(path, start, start + length))
    digest.update(data)
    sha = hashlib.sha256(data).hexdigest()
    return DroppedRange(_torn_rule(scan), None, None, start, length, sha, sidecar_offset, False)


def _where(first: DroppedRange | None) -> int:
    """The first dropped byte's source offset (plaintext offset inside a zstd stream)."""
    if first is None:
        return 0
    return first.file_offset if first.file_offset is not None else first.plaintext_offset or 0


def _recovered(r: DroppedRange) -> DroppedRange:
    return DroppedRange(
        r.rule, r.line, r.plaintext_offset, r.file_offset, r.length, r.sha256, r.sidecar_offset, True
    )


def _torn_rule(scan: ScanResult) -> str:
    tail = scan.tail.address
    return next((f.rule for f in scan.findings if tail is not None and f.address == tail), "torn-frame")


def _walk_of(source: SourceRead, limits: ReadLimits) -> _Walk:
    read = source.report.read
    torn = read.torn_frame
    if torn is not None:
        size = source.report.source.size or 0
        return _Walk(
            source.path,
            read.encoding,
            source.dialect,
            limits,
            source.scan.tail.committed_bytes,
            (torn.file_offset, size - torn.file_offset),
        )
    return _Walk(source.path, read.encoding, source.dialect, limits, read.plaintext_bytes, None)


def _refuse_unless_every_error_was_kept(scan: ScanResult) -> None:
    """The lines a salvage drops are the ones its errors name: each must have been kept."""
    if scan.dropped_by_severity[Severity.ERROR]:
        total = len(scan.findings) + scan.findings_dropped
        raise InputError(
            f"cannot salvage: {scan.findings_dropped} findings past --max-findings were not kept, "
            f"errors among them; run again with --max-findings {total} or more",
            None,
        )


def _refuse_unless_salvageable(kept: ScanResult) -> None:
    bad = next((f for f in kept.weighed if f.severity is Severity.ERROR), None)
    if bad is not None or kept.verdict in ("corrupt", "unsupported"):
        why = bad.message if bad is not None else kept.verdict_reason
        raise InputError(f"cannot salvage: what can be read is not a valid log either ({why})", None)


def publish_line_salvage(
    source: SourceRead, salvage: LineSalvage, target: Path, limits: ReadLimits
) -> LineSalvage:
    """The sidecars (the dropped bytes verbatim, the manifest), then the new file."""
    expected = salvage.expected_sha256
    walk = _walk_of(source, limits)
    plan, dialect = salvage.plan, source.dialect
    closer_lines = Closers.of(plan.closers).mapped(dialect.encode_record)  # made on each walk

    def produce_dropped(sink: Sink) -> None:
        for kind, data, _, _ in walk.pieces():
            if kind is DROP:
                sink.write(data)
        if walk.torn_frame is not None:
            start, length = walk.torn_frame
            for piece in file_range(source.path, start, start + length):
                sink.write(piece)

    def verify_dropped(tmp: Path) -> None:
        if sha256_file(tmp) != salvage.dropped_sha256:
            raise WriteRefusedError("salvage sidecar does not match the dropped bytes")

    ident = source.identity
    sidecar = publish(
        target.with_name(target.name + ".dropped"),
        produce_dropped,
        verify=verify_dropped,
        source=source.path,
        source_identity=ident,
    )
    blob = dumps_pretty(_manifest(source, salvage, sidecar.path)) + b"\n"
    report = publish(
        target.with_name(target.name + ".dropped.json"),
        lambda sink: sink.write(blob),
        verify=lambda tmp: None,
        source=source.path,
        source_identity=ident,
    )

    def produce(sink: Sink) -> None:
        if plan.output_encoding == "raw":
            write = sink.write
        else:
            frame = FrameWriter(sink)
            write = frame.write
        for kind, data, _, _ in walk.pieces():
            if kind is KEEP:
                write(data)
        for chunk in joined(closer_lines, 1 << 16):
            write(chunk)
        if plan.output_encoding != "raw":
            frame.close()

    def verify(tmp: Path) -> None:
        digest = hashlib.sha256()
        total = plan.committed + sum(len(line) for line in closer_lines)
        for piece in plaintext_range(tmp, plan.output_encoding, 0, total, limits.max_window):
            digest.update(piece)
        if digest.hexdigest() != expected:
            raise WriteRefusedError("verification: the salvaged file is not the kept lines and the closers")
        back = rescan(tmp, dialect, limits)
        refuse_unless_valid(back, "the salvaged file")
        if back.scan.verdict != "clean" or back.read.plaintext_bytes != total:
            raise WriteRefusedError(
                f"verification: the salvaged file is {back.scan.verdict}: {back.scan.verdict_reason}"
            )
        if sha256_file(source.path) != source.sha256:
            raise WriteRefusedError(
                f"source changed while it was salvaged: {source.path}; nothing was published"
            )

    output = publish(target, produce, verify=verify, source=source.path, source_identity=ident)
    return LineSalvage(plan, salvage.ranges, salvage.dropped_sha256, expected, sidecar, report, output)


def _manifest(source: SourceRead, salvage: LineSalvage, sidecar: Path) -> dict[str, Any]:
    plan = salvage.plan
    assert plan.salvage is not None
    return {
        "schema_version": SCHEMA_VERSION,
        "source": source.scan.path,
        "source_sha256": source.sha256,
        "encoding": plan.source_encoding,
        "rule": "every line the loader reads is kept; the lines it skips are dropped",
        "defect": defect_doc(plan.salvage.defect),
        "kept_plaintext_bytes": plan.committed,
        "kept_lines": plan.committed_events,
        "recovered_lines": plan.recovered_lines,
        "dropped_bytes": plan.salvage.dropped_file_bytes,
        "dropped_sha256": salvage.dropped_sha256,
        "dropped": [
            {
                "rule": r.rule,
                "line": r.line,
                "plaintext_offset": r.plaintext_offset,
                "file_offset": r.file_offset,
                "bytes": r.length,
                "sha256": r.sha256,
                "sidecar_offset": r.sidecar_offset,
                "rest_of_line_kept": r.recovered,
            }
            for r in salvage.ranges
        ],
        "sidecar": str(sidecar),
    }
