"""What a mini-agent repair and fork write (spec/mini-agent-format.md "Crash repair", "Fork";
docs/format.md "Mini-agent dialect")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.closing import answer_calls
from sesstool.core.errors import UsageError
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.model import OpenState, PendingCall
from sesstool.dialects.base import ForkInput
from sesstool.dialects.mini.handlers import HEADER_TYPE

# 9999-12-31T23:59:59.999Z: the last instant a four-digit ISO-8601 year (a mini-agent time) holds
MINI_MAX_CREATED = 253402300799999

# The spec gives the text for a call whose outcome is unknown; a call that never started is
# told apart (docs/format.md "Mini-agent dialect").
TEXT_OUTCOME_UNKNOWN = (
    "Error: the previous run was interrupted before this call produced a result; its outcome "
    "is unknown. Read-only or idempotent operations may be retried; for operations with side "
    "effects, verify the state first."
)
TEXT_NOT_STARTED = (
    "Error: the previous run was interrupted before this call was started; it never ran and "
    "may be retried if it is still needed."
)


def plan_closers(state: OpenState, cause: str = "interrupted") -> Closers[dict[str, Any]]:
    """Answer every dangling call, in registration order, then end an open turn (spec "Crash
    repair", "Fork"). Started calls cite their tool/call; never-started ones cite nothing. Made
    as they are walked (``core.closer_list``: the waiting calls may be in a spill file)."""
    length = len(state.pending) + (state.turn is not None)
    return Closers(lambda: _closer_records(state, cause), length)


def _closer_records(state: OpenState, cause: str) -> Iterator[dict[str, Any]]:
    when = state.last_time_text

    def answer(call: PendingCall, seq: int) -> dict[str, Any]:
        text = TEXT_OUTCOME_UNKNOWN if call.call_seq is not None else TEXT_NOT_STARTED
        message = {"role": "tool", "tool_call_id": call.call_id, "content": text}
        return {
            "seq": seq,
            "time": when,
            "type": "tool/result",
            "data": {"message": message, "isError": True},
        }

    first = (state.last_seq if state.last_seq is not None else -1) + 1
    yield from answer_calls(state.pending, first, answer)
    if state.turn is not None:
        seq = first + len(state.pending)
        yield {"seq": seq, "time": when, "type": "turn/end", "data": {"turn": state.turn, "reason": cause}}


def plan_fork(request: ForkInput) -> ForkPlan:
    """mini-agent-format.md "Fork": the prefix up to ``boundary``, then closers that balance it
    (dangling calls answered, an open turn ended — allowed inside a turn); the new header
    event records the parent. See docs/format.md "Mini-agent dialect"."""
    parent, boundary, state = request.source.header, request.boundary, request.at.open
    child_id, created_at = request.child_id, request.created_at
    assert parent is not None
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
        "type": HEADER_TYPE,
        "data": data,
    }
    closers = plan_closers(state, "forked")
    return ForkPlan(
        parent.version, boundary, header, None, closers, state.turn, state.turn_seq, child_id=child_id
    )
