"""The subagent children of a session in its dsh root, as evidence for the v3→v4 catalogue
completion (spec §13.A item 5; docs/format.md "Migration").

A child is a session in the same root (any project directory, §2.2 layout) whose highest
canonical generation has a header with ``origin: "subagent"`` and ``parentSession`` equal to the
parent's id. Only headers are read to find them; a child is then scanned in full (it must be
readable: a corrupt or unsupported child refuses the migration, naming it) and its own
``subagent/descriptor`` events — those after its inherited cut — are collected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sesstool.core.errors import InputError, UnsupportedError
from sesstool.core.jsonline import LineError, loads
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Encoding, PhysicalIssue
from sesstool.core.upgrade import Step
from sesstool.core.upgrade.v4 import ChildFact, V3ToV4
from sesstool.engine.records import committed_records
from sesstool.engine.scan import scan_source
from sesstool.store.generations import Generation, highest_generation
from sesstool.store.layout import (
    dsh_session_dir,
    encode_session_id,
    is_encoded_session_id,
    is_project_dir_name,
)
from sesstool.store.paths import same_file, session_dirs
from sesstool.store.plaintext import log_batches
from sesstool.store.source import ReadLimits

DESCRIPTOR = "subagent/descriptor"


def subagent_children(
    source: Path, header: dict[str, Any], limits: ReadLimits
) -> tuple[ChildFact, ...] | None:
    """The children of the session at ``source``; None when ``source`` is not a generation in a
    dsh root bound to its header id (then no child can be found and none is looked for)."""
    layout = dsh_session_dir(source)
    parent_id = header.get("id")
    if layout is None or not isinstance(parent_id, str) or parent_id == "":
        return None
    if encode_session_id(parent_id) != source.parent.name:
        return None
    found: list[ChildFact] = []
    for session in session_dirs(layout[0], is_project_dir_name):
        if not is_encoded_session_id(session.name) or same_file(session, source.parent):
            continue
        try:
            generation = highest_generation(session)
        except InputError:
            continue  # not a session directory: nothing to find there
        child = _header(generation, limits)
        if child is None or child.get("origin") != "subagent" or child.get("parentSession") != parent_id:
            continue
        found.append(_evidence(generation, child, limits))
    return tuple(found)


def _header(generation: Generation, limits: ReadLimits) -> dict[str, Any] | None:
    """The first record of a generation (the header), or None when it does not decode."""
    encoding: Encoding = "zstd" if generation.zstd else "raw"
    for item in log_batches(generation.path, encoding, limits):
        if isinstance(item, PhysicalIssue):
            return None
        lines = item[0]
        if lines:
            try:
                head = loads(lines[0])
            except LineError:
                return None
            return head if isinstance(head, dict) else None
    return None


def _evidence(generation: Generation, header: dict[str, Any], limits: ReadLimits) -> ChildFact:
    path = generation.path
    report = scan_source(str(path), ScanOptions(), limits)
    scan = report.scan
    child_id, created_at = header.get("id"), header.get("createdAt")
    unreadable = scan.verdict in ("corrupt", "unsupported")
    if unreadable or not isinstance(child_id, str) or type(created_at) is not int:
        raise UnsupportedError(
            f"cannot complete the subagent catalog: child session {child_id!r} ({path}) is "
            f"{scan.verdict}: {scan.verdict_reason}"
        )
    cut = header.get("seedLength", 0) if scan.version in (0, 1) else 0
    descriptors: list[Any] = []
    recs = committed_records(
        path, report.source.encoding, scan.body_offset or 0, scan.tail.committed_bytes, limits
    )
    for rec in recs:
        for event in rec.events:
            t, seq, data = event.get("type"), event.get("seq"), event.get("data")
            if t == "session/end-seed" and type(data) is dict and data.get("inherited") is True:
                cut = seq if type(seq) is int else cut
                descriptors.clear()
            elif t == DESCRIPTOR and type(seq) is int and seq >= cut:
                descriptors.append(data)
    return ChildFact(child_id, created_at, tuple(descriptors))


def with_child_evidence(
    steps: list[Step], source: Path | None, header: dict[str, Any], limits: ReadLimits
) -> tuple[list[Step], str | None]:
    """``steps`` with the v3→v4 step given the session's children (§13.A item 5), and a note
    when none could be looked for."""
    if not any(isinstance(step, V3ToV4) for step in steps):
        return steps, None
    children = subagent_children(source, header, limits) if source is not None else None
    if children is None:
        return steps, (
            "not a generation in a dsh root bound to its header id: no subagent children looked "
            "for, so no subagent/catalog completion (§13.A item 5)"
        )
    return [step.with_children(children) if isinstance(step, V3ToV4) else step for step in steps], None
