"""``EnvelopeDialect``: the base of every dialect whose records are ``{type, seq, time, data}``
events read by the shared scanner (``core.scanner.Scanner``) — dsh, mini, the test-only toy.

A subclass supplies the header codec (``is_header``, ``read_header``), ``profile(version)`` and
what it writes (closers, their descriptions, fork, upgrade chain); the scanner, the inspect rows
and the inspect JSON body built from the shared statistics come from here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from sesstool.core.closer_list import Closers
from sesstool.core.first_seen import more_note
from sesstool.core.fold import WordArray
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.header import Header
from sesstool.core.humanize import fmt_duration, fmt_time, iso_time, plural, preview
from sesstool.core.message_addresses import keep_line_offsets
from sesstool.core.model import PendingCall, ScanResult, Stats
from sesstool.core.options import ScanOptions
from sesstool.core.profile import HeaderProblem, Profile
from sesstool.core.scan_state import SpilledTable
from sesstool.core.scanner import Scanner
from sesstool.dialects.base import Dialect, Row

if TYPE_CHECKING:  # the timeline is built by inspect --timeline and report only (start-up)
    from sesstool.core.timeline import SpanCollector


FOLD_CACHE_KIB = 128  # SQLite's page cache for a fold's spill file (a repair or fork may hold 3)


class _SurfaceSpill:
    """``core.fold.Spill`` for a scan's fold: the spill file (``store.spill``), imported and
    opened only when a long log's fold first needs it."""

    def __init__(self) -> None:
        self._spill: Any = None

    def array(self, typecode: str, items: Iterable[int]) -> WordArray:
        if self._spill is None:
            from sesstool.store.spill import ArraySpill  # sqlite3: only when needed

            # the fold reads and writes its arrays in order: SQLite's cache can be small
            self._spill = ArraySpill("a long log's surface nodes", cache_kib=FOLD_CACHE_KIB)
        made: WordArray = self._spill.array(typecode, items)
        return made


class _CallSpill:
    """``core.scan_state.CallSpill`` for a log's waiting calls: the spill file (``store.spill``),
    imported and opened only when a log (a mini-agent log, or a dsh step) first has
    ``CALLS_SPILL_AT`` calls waiting."""

    def __init__(self) -> None:
        self._file: Any = None

    def table(self, items: Iterable[tuple[str, Any]]) -> SpilledTable:
        from sesstool.store.spill import OrderedRows, SpillFile  # sqlite3: only when needed

        if self._file is None:
            self._file = SpillFile("a log's calls waiting for their result", cache_kib=FOLD_CACHE_KIB)
        return OrderedRows(self._file, items)


class EnvelopeDialect(Dialect):
    """A dialect read by the shared envelope scanner (it is also that scanner's header codec)."""

    header_is_event: ClassVar[bool] = False  # the header is the event at seq 0

    def scanner(self, path: str, options: ScanOptions) -> Scanner:
        scanner = Scanner(path, options, self)
        keep_line_offsets(scanner)  # derive streamed by address
        scanner.state.fold.use_spill(_SurfaceSpill())  # past core.fold.SPILL_AT seqs
        # the calls waiting for their result (a mini-agent result pairs anywhere in the log, a
        # dsh one within its step: issue 11 item 1) past core.scan_state.CALLS_SPILL_AT
        scanner.state.rel.use_spill(_CallSpill())
        return scanner

    @abstractmethod
    def is_header(self, obj: Any) -> bool:
        """Is ``obj`` (a decoded first record) this dialect's header record?"""

    @abstractmethod
    def read_header(
        self, obj: Any, raw: bytes, filename_version: int | None
    ) -> tuple[Header | None, list[HeaderProblem], bool]:
        """(header or None when unusable, problems to report, unsupported version)."""

    @abstractmethod
    def profile(self, version: int) -> Profile:
        """The scanner profile of ``version`` (a version ``read_header`` accepted)."""

    def timeline(self, head: int, tail: int) -> SpanCollector:
        from sesstool.core.timeline_envelope import EnvelopeTimeline

        return EnvelopeTimeline(head, tail)

    def fork_child_problems(self, child: ScanResult, plan: ForkPlan) -> list[str]:
        problems: list[str] = []
        if child.version != plan.version:
            problems.append(f"version {child.version}, expected {plan.version}")
        if child.stats.events != plan.events:
            problems.append(f"{child.stats.events} events, expected {plan.events}")
        return problems

    # -- presentation ---------------------------------------------------------------------------

    def list_facts(self, scan: ScanResult) -> dict[str, str | None]:
        cwd = scan.header.cwd if scan.header is not None else None
        return {"cwd": cwd, "last_time": iso_time(scan.stats.time.last)}

    def inspect_rows(self, scan: ScanResult) -> Iterator[Row]:
        """Made as they are printed: a row per pending call (issue 11 item 1)."""
        st = scan.stats
        rows = [Row("session", _session_line(scan)), Row("lineage", _lineage_line(st))]
        ends = ", ".join(f"{k} {v}" for k, v in st.turn_ends) + more_note("turn_ends", st.more)
        open_note = f" (turn {scan.open.turn} open)" if scan.open.turn is not None else ""
        rows.append(
            Row(
                "events",
                f"{st.events} · {plural(st.turns, 'turn')}{open_note} · "
                f"{plural(st.steps, 'step')}" + (f" · ended: {ends}" if ends else ""),
            )
        )
        if st.by_type:
            rows.append(
                Row("by type", " · ".join(f"{k} {v}" for k, v in st.by_type) + more_note("by_type", st.more))
            )
        op = scan.open
        if op.turn is not None:
            step = f", step {op.step}" if op.step is not None else ", no open step"
            rows.append(Row("open", f"turn {op.turn} (since seq {op.turn_seq}){step}", "yellow"))
        tc = st.tool_calls
        rows.append(
            Row(
                "tool calls",
                f"{tc.advertised} requested · {tc.started} started · "
                f"{tc.answered} answered ({tc.failed} failed) · "
                f"{tc.dangling} dangling · {tc.never_started} never started",
            )
        )
        yield from rows
        for p in op.pending:
            state = (
                f"started at seq {p.call_seq}, outcome unknown" if p.call_seq is not None else "never started"
            )
            step = f" (step {p.step})" if self.has_steps else ""
            arguments = f"; arguments {preview(p.arguments)}" if p.arguments is not None else ""
            yield Row("", f"pending {p.call_id} {p.name or '?'}{step}: {state}{arguments}", "yellow")
        yield from _counts_rows(st)

    def inspect_body(self, scan: ScanResult) -> dict[str, Any]:
        op = scan.open
        return {
            "stats": stats_document(scan.stats),
            "open": {
                "turn": op.turn,
                "turn_seq": op.turn_seq,
                "step": op.step,
                # made as they are written (render.json_stream): never all held (issue 11 item 1)
                "pending_calls": Closers.of(op.pending).mapped(_pending_doc),
                "last_seq": op.last_seq,
                "last_time": op.last_time,
            },
        }


def _pending_doc(p: PendingCall) -> dict[str, Any]:
    return {
        "call_id": p.call_id,
        "step": p.step,
        "call_seq": p.call_seq,
        "name": p.name,
        "status": "started" if p.call_seq is not None else "never-started",
    }


def _session_line(s: ScanResult) -> str:
    h = s.header
    if h is None:
        return "no usable header" + (f" (format v{s.version})" if s.version is not None else "")
    cwd = f" · cwd {h.cwd}" if h.cwd else ""
    preset = f" · preset {h.agent_preset}" if h.agent_preset else ""
    return f"{h.id or '?'} · format v{h.version} · created {fmt_time(h.created_at)}{cwd}{preset}"


def _lineage_line(st: Stats) -> str:
    ln = st.lineage
    who = "subagent" if ln.origin == "subagent" else "top-level"
    depth = f" (delegation depth {ln.delegation_depth})" if ln.delegation_depth is not None else ""
    parts = [who + depth]
    if ln.parent_session is not None:
        parts.append(f"parent {ln.parent_session}")
    if ln.seeded:
        inherited = ln.inherited_events if ln.inherited_events is not None else "?"
        parts.append(f"forked/seeded: {inherited} inherited events")
    else:
        parts.append("not seeded")
    if ln.end_seed_markers:
        parts.append(plural(ln.end_seed_markers, "end-seed marker"))
    return " · ".join(parts)


def _counts_rows(st: Stats) -> list[Row]:
    sf, us, tm = st.surface, st.usage, st.time
    rows = [
        Row(
            "surface",
            f"{sf.current} current nodes · {sf.shadowed} shadowed · "
            f"{sf.log_only} log-only events · {sf.replacements} replacements",
        ),
        Row(
            "usage",
            f"input {us.input_tokens} · output {us.output_tokens} · cache read "
            f"{us.cache_read_tokens} · cache write {us.cache_write_tokens} · "
            f"reasoning {us.reasoning_tokens} tokens",
        ),
    ]
    if tm.first is not None:
        span = ""
        if tm.earliest is not None and tm.latest is not None:
            span = f" ({fmt_duration(tm.latest - tm.earliest)})"
        back = f" · time went backwards {tm.backwards_steps}×" if tm.backwards_steps else ""
        rows.append(Row("time", f"{fmt_time(tm.first)} → {fmt_time(tm.last)}{span}{back}"))
    return rows


def stats_document(s: Stats) -> dict[str, Any]:
    tc, sf, us, tm, ln = s.tool_calls, s.surface, s.usage, s.time, s.lineage
    return {
        "events": s.events,
        "by_type": dict(s.by_type),
        "turns": s.turns,
        "turn_ends": dict(s.turn_ends),
        "steps": s.steps,
        "tool_calls": {
            "advertised": tc.advertised,
            "started": tc.started,
            "answered": tc.answered,
            "failed": tc.failed,
            "dangling": tc.dangling,
            "never_started": tc.never_started,
        },
        "surface": {
            "current": sf.current,
            "shadowed": sf.shadowed,
            "log_only": sf.log_only,
            "replacements": sf.replacements,
        },
        "usage": {
            "input_tokens": us.input_tokens,
            "output_tokens": us.output_tokens,
            "cache_read_tokens": us.cache_read_tokens,
            "cache_write_tokens": us.cache_write_tokens,
            "reasoning_tokens": us.reasoning_tokens,
        },
        "time": {
            "first": tm.first,
            "last": tm.last,
            "earliest": tm.earliest,
            "latest": tm.latest,
            "backwards_steps": tm.backwards_steps,
        },
        "lineage": {
            "parent_session": ln.parent_session,
            "seeded": ln.seeded,
            "inherited_events": ln.inherited_events,
            "origin": ln.origin,
            "delegation_depth": ln.delegation_depth,
            "end_seed_markers": ln.end_seed_markers,
        },
        # only when a list stopped at FIRST_SEEN values: which ones (docs/format.md, "Memory")
        **({"more": list(s.more)} if s.more else {}),
    }
