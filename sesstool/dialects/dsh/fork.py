"""The dsh fork planner (spec §8, §4.4, §12 E5): open-turn rule, child header, end-seed marker
and v4 ``forked`` closers. Pure: facts from a scan in, a frozen plan out."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sesstool.core.errors import Address, InputError, InsideOpenTurn, UnsupportedError, UsageError
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.header import MAX_SAFE, Header
from sesstool.core.model import OpenState
from sesstool.core.vocabulary import CURRENT_VERSION
from sesstool.dialects.dsh.closers import plan_closers


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
) -> ForkPlan:
    """Plan the child of ``parent`` forked at ``boundary`` (inclusive).

    ``state`` is the open state after folding events 0..boundary (a scan with ``at_seq``):
    its ``last_time`` is the time of events[boundary]. ``seed_ends_with_end_seed`` says whether
    events[boundary] is a ``session/end-seed`` (the v0 constructor then adds none, §4.4).
    Raises UnsupportedError for a boundary inside an open turn before v4 (§8.1; v2/v3 are
    refused alike, see docs/format.md "Fork").
    """
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
        raise InsideOpenTurn(
            f"fork boundary {boundary} is inside open turn {state.turn} (its turn/start is seq "
            f"{state.turn_seq}): a v{version} log cannot be forked inside an open turn (spec §8.1; "
            f"only v4 closes it with forked closers)",
            Address(path, seq=state.turn_seq),
            state.turn,
            state.turn_seq,
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
        closers: Collection[dict[str, Any]] = ()
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
        closers = plan_closers(state, version, "forked", after_seq=inherited, time=when)
    return ForkPlan(version, boundary, header, marker, closers, state.turn, state.turn_seq, child_id=child_id)
