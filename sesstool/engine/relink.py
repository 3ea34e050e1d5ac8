"""repair --relink: the opt-in edit that re-points broken parent links (a Claude Code
transcript's ``parentUuid`` naming no entry), into a new file with a manifest beside it.

Repair proper only appends (DESIGN §1.3); an entry whose parent is missing cannot be mended by
appending, so plain ``repair`` reports it and leaves it (spec agent-formats §4). With
``--relink`` the dialect's ``LineEditor`` rewrites those lines in place — only the link's value,
every other byte kept — and the closers are planned on the relinked transcript (its active chain
may now reach further back). The manifest (``<output>.relink.json``) lists every edit: line,
uuid, field, old value, new value, reason. The source is never touched; both files go through
``store.publish`` (the output verified by rescan first, then the manifest).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sesstool.core.documents import SCHEMA_VERSION
from sesstool.core.errors import Address, InputError, WriteRefusedError
from sesstool.core.jsonline import dumps_pretty
from sesstool.core.line_edit import LineEdit
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Encoding, PhysicalIssue
from sesstool.core.repair_plan import RepairPlan, plan_repair
from sesstool.dialects.base import LineEditor
from sesstool.engine.write import SourceRead, phased, read_back_lines, refuse_unless_valid, rescan
from sesstool.store.digest import sha256_file
from sesstool.store.framing import FrameWriter
from sesstool.store.lines import LineSplitter
from sesstool.store.paths import exists
from sesstool.store.plaintext import plaintext_range
from sesstool.store.publish import Published, Sink, publish
from sesstool.store.source import ReadLimits

MANIFEST_SUFFIX = ".relink.json"


@dataclass(frozen=True, slots=True)
class RelinkReport:
    edits: tuple[LineEdit, ...]  # every line changed, in file order
    manifest_target: Path
    manifest: Published | None  # None for a dry run


@dataclass(frozen=True, slots=True)
class RelinkPlan:
    plan: RepairPlan
    edits: tuple[LineEdit, ...]
    closer_lines: tuple[bytes, ...]


def plan_relink(
    source: SourceRead, editor: Callable[[], LineEditor], encoding: Encoding, limits: ReadLimits
) -> RelinkPlan:
    """One pass over the committed lines through a fresh editor: the edits, and the relinked
    transcript's own scan, whose closers (its active chain may reach further back) follow it."""
    dialect, scan = source.dialect, source.scan
    scanner = dialect.scanner(str(source.path), ScanOptions())
    edits: list[LineEdit] = []
    batch: list[bytes] = []
    offset = lineno = 0
    for line, change in _edited_lines(
        source.path, source.report.source.encoding, scan.tail.committed_bytes, editor(), limits
    ):
        if change is not None:
            edits.append(change)
        batch.append(line)
        if len(batch) >= 1024:
            scanner.feed((batch, offset, lineno + 1, None))
            offset += sum(len(b) + 1 for b in batch)
            lineno += len(batch)
            batch = []
    if batch:
        scanner.feed((batch, offset, lineno + 1, None))
    relinked = scanner.finish(None)
    closers = tuple(dialect.closers(relinked)) if relinked.verdict == "interrupted" else ()
    plan = plan_repair(
        scan,
        source_encoding=source.report.source.encoding,
        output_encoding=encoding,
        plaintext_bytes=source.report.read.plaintext_bytes,
        frame_copy_point=None,
        closers=closers,
        header_frame=dialect.header_frame,
    )
    # nothing is carried verbatim: the edited lines sit anywhere in the prefix
    plan = replace(plan, copy_file=0, copy_plain=0)
    return RelinkPlan(plan, tuple(edits), tuple(dialect.encode_record(c) for c in closers))


def _edited_lines(
    path: Path, encoding: Encoding, committed: int, editor: LineEditor, limits: ReadLimits
) -> Iterator[tuple[bytes, LineEdit | None]]:
    """The committed lines of the source in order, each through ``editor``."""
    splitter = LineSplitter(limits.max_line)
    for piece in plaintext_range(path, encoding, 0, committed, limits.max_window):
        for item in splitter.feed(piece):
            if isinstance(item, PhysicalIssue):
                raise InputError(f"cannot relink: {item.message}", Address(str(path), item.offset, item.line))
            lines, offset, lineno, _ = item
            for line in lines:
                yield editor.edit(line, lineno, offset)
                offset += len(line) + 1
                lineno += 1
    if splitter.finish() is not None:
        raise InputError("cannot relink: the committed prefix does not end on a line")


_FLUSH = 1 << 20


def _produce(
    sink: Sink, source: SourceRead, rp: RelinkPlan, editor: Callable[[], LineEditor], limits: ReadLimits
) -> None:
    out: Sink = FrameWriter(sink) if rp.plan.output_encoding == "zstd" else sink
    pending = bytearray()
    for line, _ in _edited_lines(source.path, rp.plan.source_encoding, rp.plan.committed, editor(), limits):
        pending += line
        pending += b"\n"
        if len(pending) >= _FLUSH:
            out.write(bytes(pending))
            pending.clear()
    for closer in rp.closer_lines:
        pending += closer
    if pending:
        out.write(bytes(pending))
    if isinstance(out, FrameWriter):
        out.close()


def _verify(
    tmp: Path, source: SourceRead, rp: RelinkPlan, editor: Callable[[], LineEditor], limits: ReadLimits
) -> None:
    """The temp file read back: exactly the planned lines (each unedited one the source's, byte
    for byte), then the closers; rescanned, it is balanced and none of the defects the edits
    answer is left; and the source still hashes to what was scanned."""
    plan = rp.plan
    expected = itertools.chain(
        (
            line
            for line, _ in _edited_lines(source.path, plan.source_encoding, plan.committed, editor(), limits)
        ),
        (closer[:-1] for closer in rp.closer_lines),
    )
    read_back_lines(tmp, plan.output_encoding, expected, limits, plan.header_frame, "the relinked file")
    again = rescan(tmp, source.dialect, limits, source.progress)
    refuse_unless_valid(again, "the relinked file")
    if again.scan.verdict != "clean":
        raise WriteRefusedError(
            f"verification: the relinked file is not balanced: {again.scan.verdict_reason}"
        )
    answered = {e.rule for e in rp.edits}
    left = next((f for f in again.scan.weighed if f.rule in answered), None)
    if left is not None:
        raise WriteRefusedError(
            f"verification: the relinked file still has [{left.rule}] {left.message} "
            f"({left.address.describe()})"
        )
    now = sha256_file(source.path)
    if now != source.sha256:
        raise WriteRefusedError(
            f"source changed while it was relinked: {source.path} had SHA-256 {source.sha256} when it "
            f"was scanned, now {now}; nothing was published"
        )


def manifest_doc(source: SourceRead, output: Published, rp: RelinkPlan) -> dict[str, Any]:
    """The manifest: every entry changed (line, uuid, field, old value, new value, reason)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "repair",
        "edit": "relink",
        "source": {"path": str(source.path), "sha256": source.sha256, "unchanged": True},
        "output": {"path": str(output.path), "size": output.size, "sha256": output.sha256},
        "changes": [edit_doc(e) for e in rp.edits],
        "appended_closers": len(rp.closer_lines),
    }


def edit_doc(e: LineEdit) -> dict[str, Any]:
    return {
        "line": e.line,
        "offset": e.offset,
        "uuid": e.uuid,
        "field": e.field,
        "old": e.old,
        "new": e.new,
        "reason": e.reason,
    }


def manifest_path(target: Path) -> Path:
    """The manifest beside the relinked file: ``<output name>.relink.json``."""
    return target.with_name(target.name + MANIFEST_SUFFIX)


def write_relinked(
    source: SourceRead, rp: RelinkPlan, editor: Callable[[], LineEditor], target: Path, limits: ReadLimits
) -> tuple[Published, RelinkReport]:
    """Publish the relinked file (verified), then its manifest beside it."""
    manifest_target = manifest_path(target)
    if exists(manifest_target) and not exists(target):
        raise WriteRefusedError(
            f"{manifest_target} already exists: refusing to write a relinked file without its manifest"
        )
    produce, verify = phased(
        source.progress,
        lambda sink: _produce(sink, source, rp, editor, limits),
        lambda tmp: _verify(tmp, source, rp, editor, limits),
    )
    output = publish(target, produce, verify=verify, source=source.path, source_identity=source.identity)
    blob = dumps_pretty(manifest_doc(source, output, rp)) + b"\n"
    digest = hashlib.sha256(blob).hexdigest()

    def verify_manifest(tmp: Path) -> None:
        if sha256_file(tmp) != digest:
            raise WriteRefusedError("verification: the manifest does not hold what was written")

    manifest = publish(
        manifest_target,
        lambda sink: sink.write(blob),
        verify=verify_manifest,
        source=source.path,
        source_identity=source.identity,
    )
    return output, RelinkReport(rp.edits, manifest_target, manifest)
