"""The fork planner (spec §8, §4.4, §12 E5): boundary, open-turn rule, child header, end-seed
marker and v4 ``forked`` closers. Pure: facts from a scan in, a frozen plan out.

* ``boundary_facts`` reads what a fork needs from a scan: where the last completed turn
  ends, the last ``session/end-seed``, and whether ``--at`` cuts a packed chunk row.
* ``plan_fork`` turns the open state *at* the boundary into the child's header and appended
  records, or refuses (UnsupportedError) a boundary inside an open turn where the version
  forbids it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sesstool.core import mini
from sesstool.core.closers import plan_closers
from sesstool.core.errors import Address, InputError, UnsupportedError, UsageError
from sesstool.core.header import MAX_SAFE, Header
from sesstool.core.model import OpenState, ScanResult
from sesstool.core.vocabulary import CURRENT_VERSION

# 9999-12-31T23:59:59.999Z: the last instant a four-digit ISO-8601 year (a mini-agent time) holds
MINI_MAX_CREATED = 253402300799999


@dataclass(frozen=True, slots=True)
class BoundaryFacts:
    """What a fork needs to know about the folded events besides the open state."""

    last_seq: int | None  # last folded (committed) event
    last_turn_end: int | None  # seq of the last turn/end
    completed_until: int | None  # the "latest completed prefix" (default boundary), if any
    last_end_seed: int | None  # seq of the last session/end-seed
    split_row: tuple[int, int] | None  # (seq0, last seq) of a packed row that --at cuts


def boundary_facts(scan: ScanResult) -> BoundaryFacts:
    """The boundary facts of a scan (see ``core.model.Boundaries``)."""
    b = scan.boundaries
    last = scan.open.last_seq
    completed: int | None = None
    if b.last_turn_end is not None:
        completed = b.resume_seq - 1 if b.resume_seq is not None else last
    return BoundaryFacts(last, b.last_turn_end, completed, b.last_end_seed, b.split_row)


def default_boundary(facts: BoundaryFacts) -> int:
    """The end of the last completed turn, extended over the events after its turn/end up to
    (excluding) the next ``turn/start``, appended ``user/message`` or ``agent/inbox/spliced``
    (spec §8.3, last bullet). Raises UsageError when no turn was completed."""
    if facts.last_seq is None:
        raise UsageError("the log has no committed events: there is nothing to fork")
    if facts.completed_until is None:
        raise UsageError(
            f"the log has no completed turn (no turn/end in seq 0–{facts.last_seq}): "
            "pass --at SEQ to choose the fork boundary"
        )
    return facts.completed_until


def check_at(at: int, last_seq: int | None) -> None:
    """--at must name a committed event."""
    if last_seq is None:
        raise UsageError(f"--at {at}: the log has no committed events")
    if at > last_seq:
        raise UsageError(f"--at {at} is past the end: the last committed event is seq {last_seq}")


def check_split_row(facts: BoundaryFacts, boundary: int) -> None:
    """A fork copies whole records: a boundary inside a packed chunk row (§9.3) is refused."""
    if facts.split_row is not None:
        first, last = facts.split_row
        before = f"at most {first - 1} or " if first > 0 else ""
        raise UsageError(
            f"--at {boundary} falls inside a packed chunk row holding seqs {first}–{last}; a "
            f"fork copies whole records byte for byte: choose a boundary of {before}at least {last}"
        )


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """Everything the child gets besides the copied seed records."""

    version: int
    boundary: int  # inclusive: the seed is seq 0..boundary
    header: dict[str, Any]  # the child's header record, keys in §2.1 order
    marker: dict[str, Any] | None  # session/end-seed (None: v0/v1 seed already ends with one)
    closers: tuple[dict[str, Any], ...]  # v4: forked closers of the open turn
    open_turn: int | None  # the turn open at the boundary (closed by the closers in v4)
    open_turn_seq: int | None

    @property
    def inherited(self) -> int:
        """Inherited event count: seedLength (v0/v1) and the tagged marker's seq (v2+)."""
        return self.boundary + 1

    @property
    def appended(self) -> tuple[dict[str, Any], ...]:
        return ((self.marker,) if self.marker is not None else ()) + self.closers

    @property
    def events(self) -> int:
        """Events in the child."""
        return self.inherited + len(self.appended)


def child_header(parent: Header, child_id: str, created_at: int, inherited: int) -> dict[str, Any]:
    """§2.1 key order; ``origin`` and ``agentPreset`` are not inherited (§8.1, E5), and a fork
    is a top-level session (``delegationDepth`` 0)."""
    if parent.id is None:
        raise InputError("the source header has no valid id: a child cannot name its parent")
    header: dict[str, Any] = {
        "type": "session",
        "version": parent.version,
        "id": child_id,
        "createdAt": created_at,
    }
    if parent.cwd is not None:
        header["cwd"] = parent.cwd
    header["parentSession"] = parent.id
    if parent.version <= 1:
        header["seedLength"] = inherited
    else:
        header["isSeeded"] = True
    header["delegationDepth"] = 0
    return header


def plan_fork(
    parent: Header,
    boundary: int,
    state: OpenState,
    *,
    child_id: str,
    created_at: int,
    seed_ends_with_end_seed: bool,
    path: str | None = None,
    dialect: str = "dsh",
) -> ForkPlan:
    """Plan the child of ``parent`` forked at ``boundary`` (inclusive).

    ``state`` is the open state after folding events 0..boundary (a scan with ``at_seq``):
    its ``last_time`` is the time of events[boundary]. ``seed_ends_with_end_seed`` says whether
    events[boundary] is a ``session/end-seed`` (the v0 constructor then adds none, §4.4).
    Raises UnsupportedError for a boundary inside an open turn before v4 (§8.1; v2/v3 are
    refused alike, see docs/format.md "Fork").
    """
    if dialect == mini.DIALECT:
        return _plan_mini_fork(parent, boundary, state, child_id, created_at)
    version = parent.version
    if not 0 <= version <= CURRENT_VERSION:
        raise UnsupportedError(f"cannot fork a v{version} log: sesstool writes v0–v{CURRENT_VERSION}")
    if state.last_seq != boundary:
        raise ValueError(f"open state ends at seq {state.last_seq}, not at the boundary {boundary}")
    if not child_id:
        raise UsageError("the child session id must not be empty")
    if type(created_at) is not int or not 0 <= created_at <= MAX_SAFE:
        raise UsageError(f"createdAt {created_at!r} is not a non-negative safe integer (epoch ms)")
    if state.turn is not None and version < 4:
        before = f" or at most {state.turn_seq - 1}" if state.turn_seq else ""
        raise UnsupportedError(
            f"fork boundary {boundary} is inside open turn {state.turn} (its turn/start is seq "
            f"{state.turn_seq}): a v{version} log cannot be forked inside an open turn (spec §8.1; "
            f"only v4 closes it with forked closers). Choose a boundary at or after that turn's "
            f"turn/end{before}",
            Address(path, seq=state.turn_seq),
        )
    inherited = boundary + 1
    header = child_header(parent, child_id, created_at, inherited)
    marker: dict[str, Any] | None
    if version <= 1:
        marker = (
            None
            if seed_ends_with_end_seed
            else {"type": "session/end-seed", "seq": inherited, "time": created_at, "data": {}}
        )
        closers: tuple[dict[str, Any], ...] = ()
    elif version <= 3:
        marker = {
            "type": "session/end-seed",
            "seq": inherited,
            "time": created_at,
            "data": {"inherited": True},
        }
        closers = ()
    else:
        when = state.last_time
        if when is None:
            raise InputError(f"event {boundary} has no valid time: the v4 marker takes its time (§8.3)")
        marker = {"type": "session/end-seed", "seq": inherited, "time": when, "data": {"inherited": True}}
        closers = tuple(plan_closers(state, version, "forked", after_seq=inherited, time=when))
    return ForkPlan(version, boundary, header, marker, closers, state.turn, state.turn_seq)


def _plan_mini_fork(
    parent: Header, boundary: int, state: OpenState, child_id: str, created_at: int
) -> ForkPlan:
    """mini-agent-format.md "Fork": the prefix up to ``boundary``, then closers that balance it
    (dangling calls answered, an open turn ended — allowed inside a turn); the new header
    event records the parent. See docs/format.md "Mini-agent dialect"."""
    if state.last_seq != boundary:
        raise ValueError(f"open state ends at seq {state.last_seq}, not at the boundary {boundary}")
    if not child_id:
        raise UsageError("the child session id must not be empty")
    if boundary < 1:
        raise UsageError("--at must be at least 1: seq 0 is the header event")
    if type(created_at) is not int or not 0 <= created_at <= MINI_MAX_CREATED:
        raise UsageError(
            f"createdAt {created_at!r} cannot be a mini-agent header time: an ISO-8601 string "
            f"holds epoch ms 0 to {MINI_MAX_CREATED} (year 9999)"
        )
    data: dict[str, Any] = {"version": parent.version, "delegationDepth": 0, "id": child_id}
    if parent.cwd is not None:
        data["cwd"] = parent.cwd
    if parent.id is not None:
        data["parentSession"] = parent.id
    data["forkedAt"] = boundary
    stamp = dt.datetime.fromtimestamp(created_at / 1000, tz=dt.UTC)
    header = {
        "seq": 0,
        "time": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created_at % 1000:03d}Z",
        "type": mini.HEADER_TYPE,
        "data": data,
    }
    closers = tuple(mini.plan_closers(state, "forked"))
    return ForkPlan(parent.version, boundary, header, None, closers, state.turn, state.turn_seq)
