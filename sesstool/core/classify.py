"""End of input: the tail (§6.3) and the verdict, as pure functions of what the scan saw.

``classify_tail`` decides what follows the committed region — nothing, a torn line, a torn zstd
frame, or an uncommitted suspect region — and which findings that implies; ``verdict_of`` ranks
the findings and the open state into one verdict. Neither touches the scanner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sesstool.core import node_reader
from sesstool.core import rule_ids as R
from sesstool.core.errors import Address
from sesstool.core.model import PendingCall, Tail, TailKind, Verdict
from sesstool.core.physical import ReadSummary
from sesstool.core.profile import Profile
from sesstool.core.rules import RULES, Finding, Severity

# (rule id, message, address, severity override or None)
Note = tuple[str, str, Address, "Severity | None"]


class SuspectRecord:
    """The first record of §6.3's suspect region, held until EOF decides tail vs corruption."""

    __slots__ = ("address", "message", "proof", "proven", "rule", "start")

    def __init__(self, rule: str, message: str, address: Address, start: int) -> None:
        self.rule = rule
        self.message = message
        self.address = address
        self.start = start  # plaintext offset where the record begins
        self.proven = False  # a later committed record proves the region was committed
        self.proof: str | None = None


@dataclass(frozen=True, slots=True)
class ReadEnd:
    """What the scan knows at EOF about the physical end."""

    path: str
    issue: SuspectRecord | None
    fatal: bool  # a reader defect stopped the read
    committed: int  # plaintext offset after the last good line
    dropped_lines: int  # lines in the suspect region
    summary: ReadSummary | None


_TORN_REASONS = {
    "torn-line": "the last record is torn (no newline)",
    "torn-frame": "the last zstd frame is torn",
    "uncommitted": "a bad record with no later turn/end ends the log",
}


def _suspect_notes(end: ReadEnd) -> tuple[TailKind, Address | None, list[Note]]:
    issue, summary = end.issue, end.summary
    if issue is None:
        return "none", None, []
    in_complete_frame = (
        summary is not None
        and summary.encoding == "zstd"
        and not (summary.torn_frame is not None and issue.address.frame == summary.torn_frame.index)
    )
    if in_complete_frame and not issue.proven:
        # §6.3: only EOF inside the last frame is a tear; a bad record inside a complete,
        # checksummed frame was committed (the harness: "complete frame contains a torn JSONL
        # record").
        message = issue.message + " (inside a complete zstd frame: committed, so corruption)"
        return "none", None, [(issue.rule, message, issue.address, Severity.ERROR)]
    if issue.proven:
        # §6.3: a later turn/end proves the region was committed -> corruption
        why = issue.proof or "a later turn/end proves this region was committed"
        return (
            "none",
            None,
            [(issue.rule, f"{issue.message} ({why}: corruption)", issue.address, Severity.ERROR)],
        )
    message = (
        f"{RULES[issue.rule].title}: {issue.message}; no later turn/end, so this record and the "
        f"{end.dropped_lines - 1} after it are an uncommitted tail"
    )
    return "uncommitted", issue.address, [(R.UNCOMMITTED_TAIL, message, issue.address, None)]


def classify_tail(end: ReadEnd) -> tuple[Tail, list[Note]]:
    """The tail after the committed region, and the findings that describe it (in order)."""
    if end.fatal:
        # A defect stopped the read (§6.3 corruption): what follows is not a tail.
        return Tail("none", end.committed, 0, 0, 0, None), []
    summary, path = end.summary, end.path
    kind, address, notes = _suspect_notes(end)
    recovered = 0
    end_plain = end.committed
    if summary is not None and not summary.stopped_early:
        end_plain = summary.plaintext_bytes
    if summary is not None and summary.torn_frame is not None:
        tf = summary.torn_frame
        recovered = tf.lines
        where = Address(path, tf.plaintext_offset, None, tf.index, tf.file_offset, None)
        if kind == "none":
            kind, address = "torn-frame", where
        partial = summary.partial_line
        rest = f"; {partial.length} byte(s) of a torn record after them" if partial else ""
        notes.append(
            (
                R.ZSTD_TORN_FRAME,
                f"last zstd frame {tf.index} is cut by EOF after {tf.file_length} bytes; "
                f"{recovered} complete line(s) recovered from it{rest}",
                where,
                None,
            )
        )
    if summary is not None and summary.partial_line is not None and summary.torn_frame is None:
        pl = summary.partial_line
        where = pl.address(path)
        if kind == "none":
            kind, address = "torn-line", where
        notes.append(
            (
                R.TORN_TAIL,
                f"final record has no newline: {pl.length} byte(s) of a "
                "torn write, ignored (a repair drops them)",
                where,
                None,
            )
        )
    committed = end.issue.start if end.issue is not None else end.committed
    dropped_bytes = max(0, end_plain - committed) if kind != "none" else 0
    if kind == "none" and end.issue is None:
        committed = end_plain
    dropped_lines = end.dropped_lines + (1 if summary and summary.partial_line else 0)
    return Tail(kind, committed, dropped_bytes, dropped_lines, recovered, address), notes


def missing_header(
    path: str, summary: ReadSummary | None, header_seen: bool, header_frame: bool
) -> tuple[list[Note], bool]:
    """A file without a complete header record is corrupt, not torn (§10.3): the findings, and
    whether the header was read but lies in a torn header frame (``header_frame``: the layout
    publishes the header's frame atomically, dsh §9.2) — then it was never committed."""
    torn0 = (
        summary is not None
        and summary.torn_frame is not None
        and summary.torn_frame.index == 0
        and header_frame
    )
    if not (torn0 or not header_seen):
        return [], False
    if summary is None or (summary.plaintext_bytes == 0 and summary.file_bytes == 0):
        return [
            (R.EMPTY_FILE, "file is empty: no header record", Address(path, 0, 1, None, None, None), None)
        ], torn0
    frame = summary.first_frame  # a zstd address names its frame
    address = Address(path, 0, 1, frame, frame, None)
    if summary.plaintext_bytes == 0 and summary.torn_frame is None and not summary.stopped_early:
        return [(R.EMPTY_FILE, "file decodes to no bytes: no header record", address, None)], torn0
    where = "header frame" if torn0 else "header line"
    return [(R.MISSING_HEADER, f"no complete {where}: the file is cut inside it", address, None)], torn0


def open_work(
    path: str, profile: Profile | None, rel: Any, pending: Sequence[PendingCall], by_log: bool, to_end: bool
) -> list[Note]:
    """The turn still open and, where calls pair in the log (``by_log``), the calls never answered
    at the end of a log interpreted to its end (``to_end``: no ``--at``, no corruption): §6.4."""
    if not to_end:
        return []
    notes: list[Note] = []
    if rel.open_turn is not None:
        at_turn = Address(path, None, None, None, None, rel.open_turn_seq)
        if (why := node_reader.unclosable_open_turn(profile, rel)) is not None:
            notes.append((R.EVENT_DATA, why, at_turn, None))
        what = f"turn {rel.open_turn} is open at the end of the log: the session was interrupted"
        notes.append((R.OPEN_TURN, what, at_turn, None))
    if by_log and pending:
        what = f"{len(pending)} tool call(s) never answered: " + ", ".join(p.call_id for p in pending[:5])
        at_call = Address(path, None, None, None, None, pending[0].call_seq)
        notes.append((R.UNRESOLVED_CALL, what, at_call, None))
    return notes


def interruption(
    path: str,
    open_turn: int | None,
    open_turn_seq: int | None,
    pending: Sequence[PendingCall],
    by_log: bool,
) -> tuple[Address, str] | None:
    """What is left open at EOF, if anything: an open turn, or (a dialect that pairs calls
    across the whole log) calls without a result."""
    if open_turn is not None:
        return Address(
            path, None, None, None, None, open_turn_seq
        ), f"turn {open_turn} is open at the end of the log"
    if pending and by_log:
        return (
            Address(path, None, None, None, None, pending[0].call_seq),
            f"{len(pending)} tool call(s) have no result",
        )
    return None


def verdict_of(
    findings: list[Finding], tail: Tail, interrupted: tuple[Address, str] | None
) -> tuple[Verdict, Address | None, str]:
    """Damage outranks an unknown newer vocabulary: the harness scans and validates shapes
    before it judges the vocabulary (docs/format.md "Verdicts"); then the tail; then what is
    left open (``interrupted``: where and why, from the dialect's pairing scope)."""
    first_unsupported: Finding | None = None
    for f in findings:
        if f.severity is not Severity.ERROR:
            continue
        if RULES[f.rule].verdict == "unsupported":
            first_unsupported = first_unsupported or f
        else:
            return "corrupt", f.address, f.message
    if first_unsupported is not None:
        return "unsupported", first_unsupported.address, first_unsupported.message
    if tail.kind != "none":
        return "torn", tail.address, _TORN_REASONS[tail.kind]
    if interrupted is not None:
        return "interrupted", interrupted[0], interrupted[1]
    return "clean", None, "balanced: every turn is closed"
