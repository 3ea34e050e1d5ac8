"""What a mini-agent repair and fork write (spec/mini-agent-format.md "Crash repair", "Fork";
docs/format.md "Mini-agent dialect")."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sesstool.core.errors import UsageError
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.header import Header
from sesstool.core.model import OpenState
from sesstool.dialects.mini.handlers import HEADER_TYPE

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


def plan_closers(state: OpenState, cause: str = "interrupted") -> list[dict[str, Any]]:
    """Answer every dangling call, in registration order, then end an open turn (spec "Crash
    repair", "Fork"). Started calls cite their tool/call; never-started ones cite nothing."""
    out: list[dict[str, Any]] = []
    seq = (state.last_seq if state.last_seq is not None else -1) + 1
    when = state.last_time_text
    for call in state.pending:
        started = call.call_seq is not None
        event: dict[str, Any] = {
            "seq": seq,
            "time": when,
            "type": "tool/result",
            "data": {
                "message": {
                    "role": "tool",
                    "tool_call_id": call.call_id,
                    "content": TEXT_OUTCOME_UNKNOWN if started else TEXT_NOT_STARTED,
                },
                "isError": True,
            },
        }
        if started:
            event["sourceEventSeqs"] = [call.call_seq]
        out.append(event)
        seq += 1
    if state.turn is not None:
        out.append(
            {"seq": seq, "time": when, "type": "turn/end", "data": {"turn": state.turn, "reason": cause}}
        )
    return out


def plan_fork(parent: Header, boundary: int, state: OpenState, child_id: str, created_at: int) -> ForkPlan:
    """mini-agent-format.md "Fork": the prefix up to ``boundary``, then closers that balance it
    (dangling calls answered, an open turn ended — allowed inside a turn); the new header
    event records the parent. See docs/format.md "Mini-agent dialect"."""
    if state.last_seq != boundary:
        raise ValueError(f"open state ends at seq {state.last_seq}, not at the boundary {boundary}")
    if not child_id:
        raise UsageError("the child session id must not be empty")
    if boundary < 1:
        raise UsageError("--at must be at least 1: seq 0 is the header event")
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
    closers = tuple(plan_closers(state, "forked"))
    return ForkPlan(
        parent.version, boundary, header, None, closers, state.turn, state.turn_seq, child_id=child_id
    )
