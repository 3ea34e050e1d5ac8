"""Frozen results of a scan: statistics, open state, tail, verdict (what every view renders)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sesstool.core.errors import Address
from sesstool.core.header import Header
from sesstool.core.rules import Finding, Severity

Verdict = Literal["clean", "interrupted", "torn", "corrupt", "unsupported"]


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call registered by an assistant message of the open step (§7.1)."""

    call_id: str
    step: int
    call_seq: int | None  # seq of its tool/call, None when it never started
    name: str | None
    arguments: str | None = None  # the first characters of its arguments (humanize.arguments_preview)


@dataclass(frozen=True, slots=True)
class OpenState:
    """Where the log stops: what is open and what a repair would have to close."""

    turn: int | None
    turn_seq: int | None  # seq of the open turn's turn/start
    step: int | None
    pending: Sequence[PendingCall]  # a tuple (a Codex rollout's spilled calls: read back lazily)
    last_seq: int | None
    last_time: int | None
    events: int  # committed events (next seq)
    last_time_text: str | None = None  # mini-agent: the last event's ISO time, for closers


@dataclass(frozen=True, slots=True)
class ToolCallStats:
    advertised: int  # tool-call blocks in assistant messages
    started: int  # tool/call events
    answered: int  # appended tool/results that resolved a call
    failed: int  # of those, isError results
    dangling: int  # started, never answered (closed steps + open step)
    never_started: int  # advertised, never started nor answered


@dataclass(frozen=True, slots=True)
class SurfaceStats:
    current: int  # nodes in the surface at the end
    shadowed: int  # surface events removed by replacements
    log_only: int  # events that never reach the model
    replacements: int  # replaceGeneration


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of a session, the one type every dialect reports them in. A dialect names
    the counts in its own words (Codex ``cached_input_tokens``): ``names`` maps each field to
    the log's key, for reading (``of``) and for the dialect's JSON (``document``)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    total_tokens: int | None = None  # as the log states it; None when it states no total

    @classmethod
    def of(cls, record: Mapping[str, Any], names: Mapping[str, str]) -> Usage:
        """From a log's usage object: a field ``names`` leaves out, or whose count is not an
        integer, is 0 (``total_tokens``: None when left out)."""
        counts = {field: _count(record.get(key)) for field, key in names.items()}
        return cls(
            counts.get("input_tokens", 0),
            counts.get("output_tokens", 0),
            counts.get("cache_read_tokens", 0),
            counts.get("cache_write_tokens", 0),
            counts.get("reasoning_tokens", 0),
            counts.get("total_tokens"),
        )

    def document(self, names: Mapping[str, str]) -> dict[str, int | None]:
        """The counts under the log's own keys, in the order of ``names``."""
        return {key: getattr(self, field) for field, key in names.items()}


def _count(value: Any) -> int:
    return value if type(value) is int else 0


@dataclass(frozen=True, slots=True)
class TimeSpan:
    first: int | None
    last: int | None
    earliest: int | None
    latest: int | None
    backwards_steps: int  # times an event's time was below its predecessor's (legal, §3)


@dataclass(frozen=True, slots=True)
class Lineage:
    parent_session: str | None
    seeded: bool
    inherited_events: int | None
    origin: str | None
    delegation_depth: int | None
    end_seed_markers: int


@dataclass(frozen=True, slots=True)
class Stats:
    events: int
    by_type: tuple[tuple[str, int], ...]
    turns: int
    turn_ends: tuple[tuple[str, int], ...]  # turn/end reason kind -> count
    steps: int
    tool_calls: ToolCallStats
    surface: SurfaceStats
    usage: Usage
    time: TimeSpan
    lineage: Lineage
    # the lists above cut at ``first_seen.FIRST_SEEN`` values, by their --json names (issue 11 item 1)
    more: tuple[str, ...] = ()


TailKind = Literal["none", "torn-line", "torn-frame", "uncommitted"]


@dataclass(frozen=True, slots=True)
class Tail:
    """What follows the committed region (§6.3). ``committed_bytes`` = end of the last good line
    (plaintext offset; for raw input also the file offset)."""

    kind: TailKind
    committed_bytes: int
    dropped_bytes: int
    dropped_lines: int
    recovered_lines: int  # zstd: complete lines decoded from the torn last frame
    address: Address | None


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    seq: int
    turn: int | None
    step: int | None
    kind: str  # event type
    summary: str  # one line, raw log text (escape before printing)
    shadowed: bool = False
    # a line-addressed dialect's row (Claude Code, Codex; ``seq`` is then the 0-based line number,
    # as ``--at`` counts): its 1-based line and the ``timestamp`` as written (None: none)
    line: int | None = None
    time: str | None = None
    sidechain: bool = False  # Claude Code: an ``isSidechain`` entry (a subagent's, inline)
    # a row of a side file merged into its log's timeline (Claude Code: a subagent's file), named
    # by the file's name without its ``.jsonl[.zstd]`` suffix (``agent-<id>``); None: the log's own
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class RequestEnvelope:
    """Latest request/header and request/context payloads (§5 item 8)."""

    header: Any | None
    header_seq: int | None
    context: Any | None
    context_seq: int | None


@dataclass(frozen=True, slots=True)
class Boundaries:
    """Where the folded events can be cut (a fork's default boundary, §8.3)."""

    last_turn_end: int | None  # seq of the last turn/end
    resume_seq: int | None  # first turn/start, appended user/message or agent/inbox/spliced after it
    last_end_seed: int | None  # seq of the last session/end-seed
    split_row: tuple[int, int] | None  # (first, last) seq of a packed row --at cut in two


NO_STATS = Stats(
    0,
    (),
    0,
    (),
    0,
    ToolCallStats(0, 0, 0, 0, 0, 0),
    SurfaceStats(0, 0, 0, 0),
    Usage(0, 0, 0, 0, 0),
    TimeSpan(None, None, None, None, 0),
    Lineage(None, False, None, None, None, 0),
)
NO_OPEN_STATE = OpenState(None, None, None, (), None, None, 0)
NO_REQUEST = RequestEnvelope(None, None, None, None)


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What every dialect's scan returns (``dialects.base.DialectScanner.finish``).

    The generic part every view needs: path, verdict (+ address, reason), findings, tail,
    version, dialect name. The envelope dialects (dsh, mini) also fill the header, statistics,
    open state, request envelope, timeline and boundaries; another dialect may leave those at
    their empty defaults and put its own facts in ``facts`` (rendered by its ``Dialect``).
    """

    path: str
    findings: tuple[Finding, ...]
    findings_dropped: int
    tail: Tail
    verdict: Verdict
    verdict_address: Address | None
    verdict_reason: str
    dialect: str  # the name of the dialect that read the log (``dialects.registry``)
    version: int | None = None  # the log's format version, when the dialect numbers them
    header: Header | None = None
    stats: Stats = NO_STATS
    open: OpenState = NO_OPEN_STATE
    # derived messages, when requested (derive by address: their line offsets, an array)
    messages: Sequence[Any] | None = None
    request: RequestEnvelope = NO_REQUEST
    timeline: tuple[TimelineEntry, ...] | None = None
    stopped_at: int | None = None  # --at: last seq folded
    stop_offset: int | None = None  # --at: plaintext offset of the first unread record
    body_offset: int | None = None  # plaintext offset just after the header line
    boundaries: Boundaries = Boundaries(None, None, None, None)
    session_id: str | None = None
    version_label: str | None = None  # a version that is not a number (a CLI version)
    facts: Any = None  # the dialect's own facts (its Dialect renders them)
    # Past ``max_findings`` (``findings_dropped`` of them, docs/format.md "Findings past
    # --max-findings"): the first dropped finding of each rule and severity, in the order they
    # were reported, and how many of each severity were dropped (indexed by ``Severity``). A
    # dropped finding is not shown, but the verdict, --fail-on and the totals still weigh it.
    dropped_firsts: tuple[Finding, ...] = ()
    dropped_by_severity: tuple[int, int, int] = (0, 0, 0)

    @property
    def weighed(self) -> tuple[Finding, ...]:
        """Every finding a decision weighs: the kept ones, then the first dropped of each kind
        (whether there is an error, which rule fails, the verdict's first damage)."""
        return (*self.findings, *self.dropped_firsts) if self.dropped_firsts else self.findings

    def count(self, severity: Severity) -> int:
        """Findings of ``severity``, kept and dropped."""
        return sum(1 for f in self.findings if f.severity is severity) + self.dropped_by_severity[severity]
