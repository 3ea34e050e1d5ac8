"""The frozen, dialect-neutral model of a session report (``sesstool report``).

Everything a renderer draws: the verdict, findings with addresses and a place in time, the
timeline (turns and steps as bands, tool calls from call to result, open ones open-ended), the
derived conversation, the closers a repair would append, and how much was elided to keep the
page bounded. Text fields hold raw log text: renderers escape it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sesstool.core.errors import Address

ItemKind = Literal["turn", "step", "tool"]
PartKind = Literal["text", "reasoning", "tool-call", "tool-result", "other"]


@dataclass(frozen=True, slots=True)
class TimelineItem:
    """A span in time. ``end`` is None when it never closed (drawn open-ended to the crash point).

    ``status`` is the dialect's own word for how it ended ("completed", "interrupted", an
    error flag, "dangling" for a call without a result). Times are epoch milliseconds.
    """

    key: str  # stable id within the report ("turn-3", "step-3-2", "tool-call_7")
    kind: ItemKind
    label: str  # raw log text (a tool's name, a turn number)
    start: int
    end: int | None
    status: str
    turn: int | None
    first_seq: int | None
    last_seq: int | None
    first_line: int
    last_line: int
    first_offset: int  # plaintext byte offset of the opening record
    last_offset: int  # … and of the closing one (the opening one while open)
    error: bool = False


@dataclass(frozen=True, slots=True)
class Gap:
    """A stretch with no event at all, long relative to the session (drawn and labelled)."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ReportFinding:
    index: int  # position in the report: the anchor both lists and markers use
    rule: str
    severity: str  # "error" | "warning" | "info"
    message: str  # raw text (may quote the log)
    address: Address
    time: int | None  # where it sits on the timeline (None: outside the time axis)
    item: str | None  # key of the innermost timeline item holding it, when kept


@dataclass(frozen=True, slots=True)
class Part:
    kind: PartKind
    text: str  # raw text: a message's text, a call's arguments, a result's output
    name: str | None = None  # tool name (tool-call)
    call_id: str | None = None  # tool-call / tool-result
    error: bool = False  # tool-result flagged as an error


@dataclass(frozen=True, slots=True)
class Message:
    """One derived message, normalised across dialects (roles as the log writes them)."""

    role: str
    parts: Sequence[Part]  # a tuple on the page (``bounded`` may give parts made as walked)
    truncated: int  # characters cut from its parts to keep the page bounded
    parts_hidden: int = 0  # parts between the first and last shown (a message of thousands)


@dataclass(frozen=True, slots=True)
class Elision:
    """What the page does not show, and why; zero everywhere for a small log."""

    timeline_items: int  # spans between the kept head and tail of the timeline
    messages: int  # derived messages between the kept head and tail of the conversation
    characters: int  # characters cut from long message parts
    findings: int  # findings beyond the scanner's own cap


@dataclass(frozen=True, slots=True)
class Report:
    path: str
    dialect: str
    version: int | None
    session: str | None
    encoding: str
    file_bytes: int | None
    events: int
    verdict: str
    verdict_reason: str
    verdict_address: Address | None
    findings: tuple[ReportFinding, ...]
    items: tuple[TimelineItem, ...]
    gaps: tuple[Gap, ...]
    start: int | None  # earliest time on the axis
    end: int | None  # the crash point / last event time
    crash: bool  # the log ends without closing (interrupted, torn, corrupt)
    not_started: tuple[str, ...]  # call ids advertised but never started (drawn at the end)
    messages: tuple[Message, ...]
    messages_total: int
    messages_gap_at: int | None  # index in ``messages`` where elided ones were left out
    messages_note: str | None  # why no conversation is shown (corrupt, unsupported)
    closers: tuple[str, ...]  # one raw line each: what `repair` would append (the ends of a long list)
    repair_note: str
    elision: Elision
    live: bool
    redactions: tuple[tuple[str, int], ...] = ()  # kind -> values replaced (with --redact)
    version_label: str | None = None  # a version that is not a number (a CLI's version)
    # closers left out between the first and last ``engine.report.REPORT_CLOSERS`` shown
    closers_hidden: int = 0
    # calls advertised but never started past the first ``ReportLimits.timeline_tail`` drawn
    not_started_hidden: int = 0
