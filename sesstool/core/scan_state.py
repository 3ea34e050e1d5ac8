"""The state a scan carries between records, split by concern, each part with its own ``copy()``.

* ``Relations`` — turns, steps and tool calls (spec §6.2, the §7.1 repair registry) and the
  boundaries a fork cuts at (§8.3);
* ``Fold`` — the projection fold (§5): surface nodes, replacements, the request envelope;
* ``Statistics`` — counts and times for the reports;
* ``EventState`` — what an event handler receives: the three parts above, the timeline, the
  log's version and header, and a ``report`` callable. Never the scanner itself.

A continuation (a repair's closers, a fork's marker) copies the three parts with ``copy()``: a
new field is carried because ``copy`` copies every slot, not a list of names.
"""

from __future__ import annotations

import copy
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import Any, Protocol

from sesstool.core.first_seen import FirstSeen, Tally
from sesstool.core.fold import Fold
from sesstool.core.header import MAX_SAFE, Header
from sesstool.core.model import PendingCall, TimelineEntry
from sesstool.core.sequences import WalkedIndex

Report = Callable[..., None]  # report(rule, message, address=None, severity=None)

# Waiting calls a dialect that pairs calls across the whole log keeps in memory (issue 11 item 1,
# second round); past them both tables move to the injected ``CallSpill`` (``Relations.use_spill``).
CALLS_SPILL_AT = 1 << 14


class SpilledTable(MutableMapping[str, Any]):
    """An ordered ``dict`` kept in a spill file (``store.spill.OrderedRows`` implements it)."""

    @abstractmethod
    def copy(self) -> SpilledTable:
        """An independent copy."""

    def items(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        """(key, value) in insertion order, read back as they are walked."""
        return ((key, self[key]) for key in self)


class CallSpill(Protocol):
    """Where the waiting calls go past ``CALLS_SPILL_AT`` (injected: ``Relations.use_spill``)."""

    def table(self, items: Iterable[tuple[str, Any]]) -> SpilledTable:
        """A new table holding ``items`` (in order), on disk."""
        ...


class LazyPending(WalkedIndex[PendingCall]):
    """The pending calls of a spilled table, made one at a time whenever they are walked (the
    table is a frozen copy: a continuation goes on with its own)."""

    _what = "pending call index"

    def __init__(self, table: SpilledTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self) -> Iterator[PendingCall]:
        return (_pending_call(cid, e) for cid, e in self._table.items())

    def __repr__(self) -> str:
        return f"LazyPending({len(self)} calls)"


def _pending_call(cid: str, e: list[Any]) -> PendingCall:
    return PendingCall(cid, e[0], e[1], e[2] if isinstance(e[2], str) else None, e[3])


class _Copyable:
    """``copy()``: every slot copied; containers (dict, list, set) copied one level deep."""

    __slots__ = ()

    def copy(self) -> Any:
        twin = copy.copy(self)
        names: tuple[str, ...] = type(self).__slots__
        for name in names:
            value = getattr(self, name)
            if isinstance(value, (dict, list, set)):
                setattr(twin, name, copy.copy(value))
            elif isinstance(value, FirstSeen):
                setattr(twin, name, value.copy())
        return twin


class Relations(_Copyable):
    """Open turn and step, pending calls (§6.2, §7.1) and fork boundaries (§8.3)."""

    __slots__ = (
        "advertised",
        "last_end_seed",
        "last_turn",
        "last_turn_end",
        "next_step",
        "open_step",
        "open_step_unnumbered",
        "open_turn",
        "open_turn_seq",
        "open_turn_unnumbered",
        "resume_seq",
        "spill",
        "spill_at",
        "started",
    )

    def __init__(self) -> None:
        self.open_turn: int | None = None
        self.open_turn_seq: int | None = None
        self.open_turn_unnumbered = False  # v0: its turn/start has no positive data.turn
        self.open_step_unnumbered = False  # v0: the open step's step/start has no data.step
        self.open_step: int | None = None
        self.last_turn = 0
        self.next_step = 1
        # callId -> [step, call_seq, name, arguments preview]; past ``spill_at`` a SpilledTable
        # (a handler that changes an entry sets it again)
        self.advertised: dict[str, list[Any]] | SpilledTable = {}
        self.started: dict[str, int] | SpilledTable = {}  # callId -> tool/call seq
        self.spill: CallSpill | None = None
        self.spill_at = 1 << 62  # no spill file: never
        self.last_turn_end: int | None = None
        self.resume_seq: int | None = None
        self.last_end_seed: int | None = None

    def copy(self) -> Relations:
        twin: Relations = super().copy()
        advertised, started = self.advertised, self.started
        if isinstance(advertised, dict):
            twin.advertised = {k: list(v) for k, v in advertised.items()}
        else:
            twin.advertised = advertised.copy()
        if not isinstance(started, dict):
            twin.started = started.copy()
        return twin

    def use_spill(self, spill: CallSpill) -> None:
        """Past ``CALLS_SPILL_AT`` waiting calls (``grew``), move both tables to ``spill``."""
        self.spill, self.spill_at = spill, CALLS_SPILL_AT

    def grew(self) -> None:
        """A handler added a call: past ``spill_at`` calls the tables move to the spill file."""
        if len(self.advertised) + len(self.started) > self.spill_at and self.spill is not None:
            self.advertised = self.spill.table(self.advertised.items())
            self.started = self.spill.table(self.started.items())
            self.spill_at = 1 << 62

    def clear_calls(self) -> None:
        """A boundary of a dialect that pairs calls within a step (dsh, §6.2): both tables are
        empty dicts again, and a spill file moves them anew past ``CALLS_SPILL_AT``."""
        self.advertised = {}
        self.started = {}
        if self.spill is not None:
            self.spill_at = CALLS_SPILL_AT

    def pending(self, by_log: bool) -> Sequence[PendingCall]:
        """Calls a repair must answer: those of the open step (§7.1), or — a dialect that pairs
        calls across the whole log (``by_log``) — every unanswered call (spilled: read back
        whenever they are walked)."""
        if self.open_turn is None and not by_log:
            return ()
        if not isinstance(self.advertised, dict):
            return LazyPending(self.advertised.copy())
        return tuple(_pending_call(cid, e) for cid, e in self.advertised.items())

    def resumes(self, seq: int) -> None:
        """The first event that starts new work after the last completed turn (§8.3)."""
        if self.last_turn_end is not None and self.resume_seq is None:
            self.resume_seq = seq


class Statistics(_Copyable):
    """Counts and times (every report's numbers)."""

    __slots__ = (
        "advertised_total",
        "answered",
        "backwards",
        "counts",
        "dangling",
        "failed",
        "first_time",
        "last_time_text",
        "marker_count",
        "markers",
        "max_time",
        "min_time",
        "never_started",
        "started_total",
        "steps",
        "surface_events",
        "turn_ends",
        "turns",
        "usage",
    )

    def __init__(self) -> None:
        # by event type and by turn/end reason: the first FIRST_SEEN of the values the log
        # chose (first_seen.py, issue 11 item 1); the hot loop counts handled types in ``kept``
        self.counts = Tally()
        self.turns = 0
        self.turn_ends = Tally()
        self.steps = 0
        self.advertised_total = 0
        self.started_total = 0
        self.answered = 0
        self.failed = 0
        self.dangling = 0
        self.never_started = 0
        self.usage = [0, 0, 0, 0, 0]
        self.first_time: int | None = None
        self.min_time: int | None = None
        self.max_time = -MAX_SAFE
        self.backwards = 0
        self.surface_events = 0
        self.markers: list[tuple[int, bool]] = []  # (seq, tagged) of session/end-seed
        self.marker_count = 0
        self.last_time_text: str | None = None  # a dialect with text times: the last one, verbatim

    def irregular_time(self, ms: int, last: int) -> None:
        """A time the hot loop did not take as a plain step forward: the first one, or one
        below its predecessor ``last`` (legal, §3: a peak ends there)."""
        if self.first_time is None:
            self.first_time = self.min_time = self.max_time = ms
            return
        if ms < last:
            self.backwards += 1
            self.max_time = max(self.max_time, last)
        if ms < self.min_time:  # type: ignore[operator]
            self.min_time = ms

    def count(self, t: str) -> None:
        self.counts.count(t)

    def turn_end(self, reason: str) -> None:
        self.turn_ends.count(reason)


def _itself(value: Any) -> Any:
    return value


class EventState:
    """What an event handler may read and change: the narrow state, not the scanner."""

    __slots__ = (
        "collect_messages",
        "fold",
        "header",
        "keep",
        "profile",
        "rel",
        "report",
        "report_once",
        "stats",
        "timeline",
        "version",
    )

    def __init__(
        self,
        report: Report,
        report_once: Callable[[str, str, str], None],
        collect_messages: bool,
        timeline: list[TimelineEntry] | None,
    ) -> None:
        self.rel = Relations()
        self.fold = Fold()
        self.stats = Statistics()
        self.timeline = timeline
        self.report = report
        self.report_once = report_once
        self.collect_messages = collect_messages
        self.version: int | None = None
        self.header: Header | None = None
        self.profile: Any = None  # the installed core.profile.Profile
        # what a handler stores for a projected message (``Fold.projected``): the message itself,
        # or — derive streamed by address — the plaintext offset of the record's line
        self.keep: Callable[[Any], Any] = _itself

    def copy(self, report: Report, report_once: Callable[[str, str, str], None]) -> EventState:
        """The state for a continuation: every part copied, no timeline, new report callables."""
        twin = EventState(report, report_once, self.collect_messages, None)
        twin.rel, twin.fold, twin.stats = self.rel.copy(), self.fold.copy(), self.stats.copy()
        twin.version, twin.header, twin.profile = self.version, self.header, self.profile
        twin.keep = self.keep
        return twin

    def session_id(self) -> str | None:
        return self.header.id if self.header is not None else None
