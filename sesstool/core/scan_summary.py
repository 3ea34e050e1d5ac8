"""From the scan state at EOF to the frozen result's parts: the open state and the statistics."""

from __future__ import annotations

from collections.abc import Sequence

from sesstool.core.header import Header
from sesstool.core.model import (
    Lineage,
    OpenState,
    PendingCall,
    Stats,
    SurfaceStats,
    TimeSpan,
    ToolCallStats,
    Usage,
)
from sesstool.core.scan_state import EventState
from sesstool.core.unsafe_integers import report_unsafe_integers as report_unsafe_integers


def open_state(state: EventState, next_seq: int, last_time: int, pending: Sequence[PendingCall]) -> OpenState:
    """Where the log stops: what is open and what a repair would have to close."""
    rel, stats = state.rel, state.stats
    return OpenState(
        rel.open_turn,
        rel.open_turn_seq,
        rel.open_step,
        pending,
        next_seq - 1 if next_seq else None,
        last_time if stats.first_time is not None else None,
        next_seq,
        stats.last_time_text,
    )


def statistics(state: EventState, next_seq: int, last_time: int, pending: Sequence[PendingCall]) -> Stats:
    """The counts of the whole scan (open calls count as dangling / never started)."""
    st, fold, header = state.stats, state.fold, state.header
    open_dangling = sum(1 for p in pending if p.call_seq is not None)
    timed = st.first_time is not None
    return Stats(
        events=next_seq,
        by_type=tuple(sorted(st.counts.items())),
        turns=st.turns,
        turn_ends=tuple(sorted(st.turn_ends.items())),
        steps=st.steps,
        tool_calls=ToolCallStats(
            st.advertised_total,
            st.started_total,
            st.answered,
            st.failed,
            st.dangling + open_dangling,
            st.never_started + len(pending) - open_dangling,
        ),
        surface=SurfaceStats(len(fold.nodes), fold.shadowed, next_seq - st.surface_events, fold.replacements),
        usage=Usage(*st.usage),
        time=TimeSpan(
            st.first_time,
            last_time if timed else None,
            st.min_time,
            max(st.max_time, last_time) if timed else None,
            st.backwards,
        ),
        lineage=lineage(header, state.version, st.markers, st.marker_count),
        more=tuple(name for name, seen in (("by_type", st.counts), ("turn_ends", st.turn_ends)) if seen.more),
    )


def lineage(
    header: Header | None, version: int | None, markers: list[tuple[int, bool]], marker_count: int
) -> Lineage:
    """Parent, seeding and inherited events (§2.1, §4.4): v0/v1 say it with ``seedLength``,
    v2+ with the last tagged ``session/end-seed`` marker."""
    inherited: int | None = None
    if header is not None:
        if (version or 0) <= 1:
            inherited = header.seed_length
        else:
            tagged_seqs = [s for s, t in markers if t]
            inherited = tagged_seqs[-1] if tagged_seqs else (0 if header.is_seeded else None)
    return Lineage(
        header.parent_session if header else None,
        header.seeded if header else False,
        inherited,
        header.origin if header else None,
        header.delegation_depth if header else None,
        marker_count,
    )
