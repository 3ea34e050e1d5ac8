"""Synthesised closers for an open turn (spec §7.1 ``interruptedTurnClosers``; v4 §8.3 ``forked``).

Pure: from the scan's open state to the ordered events a repair (or a v4 fork) appends, made
lazily (``core.closer_list.Closers``: a log's waiting calls may be in a spill file).
Seqs continue after the last event; every closer reuses the last event's time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from sesstool.core.closer_list import Closers
from sesstool.core.closing import answer_calls
from sesstool.core.model import OpenState, PendingCall

Cause = Literal["interrupted", "forked"]

TEXT_OUTCOME_UNKNOWN = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external "
    "state or ask the user. Do not retry blindly."
)
TEXT_NOT_STARTED = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)
# §8.3 gives these only abridged; the full wording is pinned in docs/format.md.
TEXT_FORKED_UNKNOWN = (
    "The history inherited by this branch records this tool call starting but does not include "
    "its result. The parent session may have completed it after the fork point. Its outcome is "
    "unknown to this branch: retry only if the operation is read-only or idempotent; if it may "
    "have side effects, first verify external state or ask the user."
)
TEXT_FORKED_NOT_STARTED = (
    "The history inherited by this branch has no record of this tool call starting. The parent "
    "session may have executed it after the fork point. Verify external state before retrying "
    "it if it is still needed."
)

OUTCOME_UNKNOWN = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
NOT_STARTED = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}


def _result_message(call_id: str, msg_id: str, text: str, version: int) -> dict[str, Any]:
    if version >= 4:
        return {
            "id": msg_id,
            "role": "tool",
            "toolCallId": call_id,
            "isError": True,
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": text}],
        }
    return {
        "id": msg_id,
        "role": "user",
        "source": {"kind": "tool", "callId": call_id},
        "content": [
            {
                "type": "tool-result",
                "toolCallId": call_id,
                "isError": True,
                "content": [{"type": "text", "text": text}],
            }
        ],
    }


def plan_closers(
    state: OpenState,
    version: int,
    cause: Cause = "interrupted",
    *,
    after_seq: int | None = None,
    time: int | None = None,
) -> Closers[dict[str, Any]]:
    """The events that balance ``state`` (§7.1), in order; empty when no turn is open. Made
    as they are walked (``core.closer_list``): one per pending call, then step/end, turn/end.

    ``after_seq``/``time`` override where the closers start (a v4 fork inserts its end-seed
    marker first).
    """
    if state.turn is None:
        return Closers.of(())
    length = len(state.pending) + (state.step is not None) + 1
    return Closers(lambda: _closer_records(state, version, cause, after_seq, time), length)


def _closer_records(
    state: OpenState, version: int, cause: Cause, after_seq: int | None, time: int | None
) -> Iterator[dict[str, Any]]:
    seq = after_seq if after_seq is not None else state.last_seq
    seq = 0 if seq is None else seq + 1
    when = time if time is not None else state.last_time
    prefix = "interrupted" if cause == "interrupted" else "forked"
    started_text = TEXT_OUTCOME_UNKNOWN if cause == "interrupted" else TEXT_FORKED_UNKNOWN
    not_started_text = TEXT_NOT_STARTED if cause == "interrupted" else TEXT_FORKED_NOT_STARTED

    def answer(call: PendingCall, seq: int) -> dict[str, Any]:
        started = call.call_seq is not None
        msg = _result_message(
            call.call_id,
            f"{prefix}-tool-result-{call.call_id}-{seq}",
            started_text if started else not_started_text,
            version,
        )
        error = dict(OUTCOME_UNKNOWN if started else NOT_STARTED)
        return {
            "type": "tool/result",
            "seq": seq,
            "time": when,
            "data": {"turn": state.turn, "step": call.step, "message": msg, "error": error},
            "surfaceOp": "append",
        }

    yield from answer_calls(state.pending, seq, answer)
    seq += len(state.pending)
    if state.step is not None:
        yield {"type": "step/end", "seq": seq, "time": when, "data": {"turn": state.turn, "step": state.step}}
        seq += 1
    yield {
        "type": "turn/end",
        "seq": seq,
        "time": when,
        "data": {"turn": state.turn, "reason": {"kind": cause}},
    }
