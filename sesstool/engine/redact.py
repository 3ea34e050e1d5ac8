"""redact: publish a copy of a log with every credential-shaped value replaced (DESIGN §4).

One record in, one record out. A record holding no secret is copied byte for byte; in one that
does, each secret's JSON spelling is replaced in place by its token (the same value gets the
same token across the file), so the rest of the record keeps its bytes. Should an in-place
replacement not yield valid JSON free of the value (a secret spelled with other escapes), the
record is re-encoded from its redacted value instead, and counted. A torn final record (raw) is
redacted as text and kept torn. The publisher's read-back proves the copy is the same log:
same verdict, same findings (rule, severity, line, seq), same number of records.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from sesstool.core.errors import InputError, UsageError, WriteRefusedError
from sesstool.core.jsonline import LineError, loads
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Encoding, PhysicalIssue
from sesstool.core.redact import RedactionCounts, Redactor
from sesstool.engine.cold import cold_session
from sesstool.engine.scan import Progress, ScanReport, run_scan, scan_source
from sesstool.engine.write import output_target, phased
from sesstool.store.framing import FrameWriter, compress_frame
from sesstool.store.generations import log_name, log_stem
from sesstool.store.liveness import LockState
from sesstool.store.plaintext import LogReading, file_range
from sesstool.store.publish import Published, Sink, publish
from sesstool.store.run_spill import spilled_strings
from sesstool.store.source import ReadLimits


@dataclass(frozen=True, slots=True)
class RedactRequest:
    path: str
    output: str | None = None
    encoding: Encoding | None = None
    dry_run: bool = False
    limits: ReadLimits = field(default_factory=ReadLimits)


RedactStatus = Literal["redacted", "planned"]


@dataclass(frozen=True, slots=True)
class RedactReport:
    status: RedactStatus
    source: Path
    source_sha256: str
    scan: ScanReport
    target: Path
    output: Published | None
    counts: RedactionCounts
    records_changed: int
    records_reencoded: int  # records whose secret could not be replaced in place
    lock: LockState | None
    notes: tuple[str, ...]


def redacted_name(source: Path, encoding: Encoding) -> str:
    """``<stem>.redacted.jsonl[.zstd]`` beside the source."""
    return log_name(f"{log_stem(source.name)}.redacted", encoding == "zstd")


class LineRedactor:
    """Redacts one record's bytes; keeps the counts for the whole file."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor or Redactor(spill=spilled_strings)
        self.changed = 0
        self.reencoded = 0

    def record(self, line: bytes) -> bytes:
        """``line`` without its newline, redacted (unchanged when it holds no secret)."""
        try:
            value = loads(line)
        except LineError:
            return self.text(line)  # not JSON: redacted as text, left as broken as it was
        found = self._secrets(value)
        if not found:
            return line
        self.changed += 1
        out = line
        for secret, kind in found:
            spelled = orjson.dumps(secret)[1:-1]
            if spelled in out:
                self.redactor.replacements += out.count(spelled)
                out = out.replace(spelled, self.redactor.token(secret, kind).encode())
        if self._clean(out, found):
            return out
        self.reencoded += 1
        return orjson.dumps(self.redactor.value(value))

    def text(self, raw: bytes) -> bytes:
        """Bytes that are not a JSON record (a torn tail): each secret's UTF-8 bytes replaced."""
        found = self.redactor.secrets_in(raw.decode("utf-8", "replace"))
        out = raw
        for secret, kind in found:
            spelled = secret.encode("utf-8", "surrogatepass")
            if spelled in out:
                self.redactor.replacements += out.count(spelled)
                out = out.replace(spelled, self.redactor.token(secret, kind).encode())
        if out != raw:
            self.changed += 1
        return out

    def _secrets(self, value: Any) -> list[tuple[str, str]]:
        found: dict[str, str] = {}
        for s in self.redactor.strings(value):
            for secret, kind in self.redactor.secrets_in(s):
                found.setdefault(secret, kind)
        return sorted(found.items(), key=lambda kv: (-len(kv[0]), kv[0]))

    def _clean(self, line: bytes, found: list[tuple[str, str]]) -> bool:
        try:
            value = loads(line)
        except LineError:
            return False
        strings = list(self.redactor.strings(value))
        return not any(secret in s for secret, _ in found for s in strings)


def run_redact(request: RedactRequest, progress: Progress | None = None) -> RedactReport:
    with cold_session(request.path, "redact", create_lock=not request.dry_run) as cold:
        source, identity = cold.path, cold.identity
        digest = hashlib.sha256()
        report, _ = run_scan(source, ScanOptions(), request.limits, progress, digest=digest)
        if report.live:
            cold.recheck()
        scan = report.scan
        encoding = report.source.encoding
        out_encoding: Encoding = request.encoding or encoding
        if report.read.torn_frame is not None:
            raise InputError(
                "cannot redact a zstd log whose last frame is torn: its tail cannot be re-framed "
                "as the same tear (repair it first, or redact it decompressed)",
                scan.verdict_address,
            )
        if report.read.partial_line is not None and out_encoding == "zstd":
            raise InputError(
                "a raw log with a torn final record can only be redacted to raw output "
                "(--encoding raw): a zstd copy cannot hold the same tear",
                scan.verdict_address,
            )
        if not request.output and (why := report.dialect.refuse_default_output(source)) is not None:
            raise UsageError(why)
        target = output_target(request.output, source.parent / redacted_name(source, out_encoding))
        lines = LineRedactor()

        def produce(sink: Sink) -> None:
            _produce(sink, source, encoding, out_encoding, request.limits, report, lines)

        def verify(tmp: Path) -> None:
            _verify(tmp, report, request.limits)

        if request.dry_run:
            produce(_NullSink())
            published = None
        else:
            producing, verifying = phased(progress, produce, verify)
            published = publish(target, producing, verify=verifying, source=source, source_identity=identity)
        return RedactReport(
            "planned" if request.dry_run else "redacted",
            source,
            digest.hexdigest(),
            report,
            target,
            published,
            lines.redactor.counts(),
            lines.changed,
            lines.reencoded,
            cold.lock,
            tuple(cold.notes),
        )


class _NullSink:
    def write(self, data: bytes) -> None:
        pass


def _produce(
    sink: Sink,
    source: Path,
    encoding: Encoding,
    out_encoding: Encoding,
    limits: ReadLimits,
    report: ScanReport,
    lines: LineRedactor,
) -> None:
    frame: FrameWriter | None = None
    first = True
    reading = LogReading(source, encoding, limits)
    for item in reading.batches():
        if isinstance(item, PhysicalIssue):
            continue  # a record the reader could not deliver: the read-back will refuse
        for raw in item[0]:
            out = lines.record(raw) + b"\n"
            if out_encoding == "raw":
                sink.write(out)
            elif first:
                sink.write(compress_frame(out))  # §9.2: the header line alone in frame 1
                frame = FrameWriter(sink)
            else:
                assert frame is not None
                frame.write(out)
            first = False
    assert reading.summary is not None
    partial = reading.summary.partial_line
    if partial is not None:
        # a torn final record stays torn: redacted as text, still without its newline
        tail = b"".join(file_range(source, partial.offset, partial.offset + partial.length))
        sink.write(lines.text(tail))  # raw output only (run_redact refused the rest)
    if frame is not None and frame.plaintext:
        frame.close()
    del report  # the scan decided what to refuse; production follows the bytes


def _verify(tmp: Path, source: ScanReport, limits: ReadLimits) -> None:
    """The copy is the same log: same verdict, same findings by rule, severity, line and seq."""
    options = ScanOptions(filename_version=source.source.filename_version)
    result = scan_source(tmp, options, limits).scan
    before = source.scan
    if result.verdict != before.verdict or result.stats.events != before.stats.events:
        raise WriteRefusedError(
            f"verification: the redacted copy reads as {result.verdict} with {result.stats.events} "
            f"events, the source as {before.verdict} with {before.stats.events}"
        )

    def key(findings: Any) -> list[tuple[str, str, int | None, int | None]]:
        return sorted(
            (f.rule, f.severity.name, f.address.line, f.address.seq) for f in findings
        )  # fmt: skip

    if key(result.weighed) != key(before.weighed) or result.dropped_by_severity != before.dropped_by_severity:
        raise WriteRefusedError("verification: the redacted copy's findings differ from the source's")
