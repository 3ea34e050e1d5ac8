"""The subagent children of a session in its dsh root, as evidence for the v3→v4 catalogue
completion (spec §13.A item 5; docs/format.md "Migration").

A child is a session in the same root (any project directory, §2.2 layout) whose highest
canonical generation has a header with ``origin: "subagent"`` and ``parentSession`` equal to the
parent's id. Only headers are read to find them; a child is then scanned in full (it must be
readable: a corrupt or unsupported child refuses the migration, naming it) and its own
``subagent/descriptor`` events — those after its inherited cut — are collected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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


def bound_root(source: Path, header: dict[str, Any]) -> Path | None:
    """The dsh root of ``source`` when it is a generation laid out in a dsh root (§2.2) whose
    session directory is bound to its header id — the only case where children are looked for
    (§13.A item 5); None otherwise. Reads nothing: a path and a header check."""
    layout = dsh_session_dir(source)
    parent_id = header.get("id")
    if layout is None or not isinstance(parent_id, str) or parent_id == "":
        return None
    if encode_session_id(parent_id) != source.parent.name:
        return None
    return layout[0]


@dataclass(frozen=True, slots=True)
class ChildIndex:
    """A fleet run's candidate children (§13.A item 5), built once per run from one listing of
    each root and one header read per session: root → parentSession → the session directories
    whose highest generation's header said ``origin: "subagent"`` with that parent when the run
    started. Picklable: it travels to the workers with the run's settings."""

    roots: dict[str, dict[str, tuple[str, ...]]]

    def candidates(self, root: Path, parent_id: str) -> tuple[Path, ...] | None:
        """The listed candidates of ``parent_id`` in ``root``; None when the root is not indexed."""
        parents = self.roots.get(str(root))
        if parents is None:
            return None
        return tuple(Path(p) for p in parents.get(parent_id, ()))


def index_children(roots: Iterable[Path], limits: ReadLimits) -> ChildIndex:
    """Index each of ``roots`` once: every session directory of its project directories and
    the header of its highest canonical generation (§13.A item 5; docs/format.md "Migration")."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for root in roots:
        if str(root) in out:
            continue
        parents: dict[str, list[str]] = {}
        for session, header in _session_headers(root, limits):
            parent = header.get("parentSession")
            if header.get("origin") == "subagent" and isinstance(parent, str):
                parents.setdefault(parent, []).append(str(session))
        out[str(root)] = {parent: tuple(found) for parent, found in parents.items()}
    return ChildIndex(out)


def _session_headers(root: Path, limits: ReadLimits) -> Iterator[tuple[Path, dict[str, Any]]]:
    for session in session_dirs(root, is_project_dir_name):
        if not is_encoded_session_id(session.name):
            continue
        header = _highest_header(session, limits)
        if header is not None:
            yield session, header[1]


def _highest_header(session: Path, limits: ReadLimits) -> tuple[Generation, dict[str, Any]] | None:
    """The highest canonical generation of a session directory and its header; None when the
    directory holds no generation or the header does not decode."""
    try:
        generation = highest_generation(session)
    except InputError:
        return None  # not a session directory: nothing to find there
    header = _header(generation, limits)
    return None if header is None else (generation, header)


def subagent_children(
    source: Path, header: dict[str, Any], limits: ReadLimits, index: ChildIndex | None = None
) -> tuple[ChildFact, ...] | None:
    """The children of the session at ``source`` (§13.A item 5); None when ``source`` is not a
    generation in a dsh root bound to its header id (then no child can be found and none is
    looked for). With a fleet run's ``index`` covering the root, only its listed candidates are
    visited; each is still verified (its highest generation's header re-read: a subagent naming
    this parent) before it is scanned in full."""
    root = bound_root(source, header)
    if root is None:
        return None
    parent_id = header["id"]
    listed = index.candidates(root, parent_id) if index is not None else None
    sessions = listed if listed is not None else session_dirs(root, is_project_dir_name)
    found: list[ChildFact] = []
    for session in sessions:
        if not is_encoded_session_id(session.name) or same_file(session, source.parent):
            continue
        read = _highest_header(session, limits)
        if read is None:
            continue
        generation, child = read
        if child.get("origin") != "subagent" or child.get("parentSession") != parent_id:
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


NO_CHILDREN_NOTE = (
    "not a generation in a dsh root bound to its header id: no subagent children looked "
    "for, so no subagent/catalog completion (§13.A item 5)"
)


def child_search_note(steps: list[Step], source: Path | None, header: dict[str, Any]) -> str | None:
    """The note ``with_child_evidence`` gives, from the layout/binding check alone (§13.A item 5):
    what a plan needs, without walking the root or reading any child."""
    if not any(isinstance(step, V3ToV4) for step in steps):
        return None
    if source is None or bound_root(source, header) is None:
        return NO_CHILDREN_NOTE
    return None


def with_child_evidence(
    steps: list[Step],
    source: Path | None,
    header: dict[str, Any],
    limits: ReadLimits,
    index: ChildIndex | None = None,
) -> tuple[list[Step], str | None]:
    """``steps`` with the v3→v4 step given the session's children (§13.A item 5), and a note
    when none could be looked for (the same as ``child_search_note``)."""
    if not any(isinstance(step, V3ToV4) for step in steps):
        return steps, None
    children = subagent_children(source, header, limits, index) if source is not None else None
    if children is None:
        return steps, NO_CHILDREN_NOTE
    return [step.with_children(children) if isinstance(step, V3ToV4) else step for step in steps], None
