"""Fast handlers of the common dsh v0 records (issue 14), for ``core.fast_scan``.

Each is ``fast(state, obj, seq, data) -> handled``. It returns True only for a record its exact
handler in ``dialects.dsh.handlers`` would take without a finding, after making exactly the
changes that handler makes (through the same helpers where the change is more than a counter);
otherwise it returns False having changed nothing, and the record goes through the exact loop
alone. The envelope is already known to be clean (``core.fast_scan``) and no timeline or message
collection is asked for (the scanner offers no fast table then). v0 rules: §4.1, §4.3, §5,
§6.1, §6.2. ``tests/core/test_fast_scan.py`` compares both paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sesstool.core.header import MAX_SAFE
from sesstool.core.humanize import arguments_preview
from sesstool.core.profile import FastHandler
from sesstool.core.scan_state import EventState
from sesstool.core.seq_ranges import SeqRangeError, decode_seq_set
from sesstool.core.shapes import assistant_message, request_context, tool_result_message, user_message
from sesstool.dialects.dsh import handlers as h

Checker = Callable[[object, int], "tuple[str, str] | None"]


def _in_open_step(st: EventState, data: Any) -> bool:
    """``data`` names the open turn and step (§6.2): neither in_step nor _check_open_step reports."""
    rel = st.rel
    return (
        type(data) is dict
        and rel.open_step is not None
        and data.get("turn") == rel.open_turn
        and data.get("step") == rel.open_step
    )


def turn_start(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    rel = st.rel
    turn = data.get("turn") if type(data) is dict else None
    if type(turn) is not int or not 1 <= turn <= MAX_SAFE or rel.open_turn is not None:
        return False
    if turn != rel.last_turn + 1:
        return False
    st.stats.turns += 1
    rel.resumes(seq)
    rel.open_turn = rel.last_turn = turn
    rel.open_turn_seq = seq
    rel.open_turn_unnumbered = rel.open_step_unnumbered = False
    rel.open_step = None
    rel.next_step = 1
    rel.advertised = {}
    rel.started = {}
    return True


def step_start(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    rel = st.rel
    if type(data) is not dict or rel.open_step is not None or rel.open_turn is None:
        return False
    step = data.get("step")
    if data.get("turn") != rel.open_turn or type(step) is not int or step != rel.next_step:
        return False
    st.stats.steps += 1
    rel.open_step = step
    rel.open_step_unnumbered = False
    rel.advertised = {}
    rel.started = {}
    return True


def step_end(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    rel = st.rel
    if not _in_open_step(st, data) or rel.advertised or rel.started:
        return False  # a mismatch, or calls left unresolved (close_step_calls reports them)
    step = data["step"]
    if type(step) is int:
        rel.next_step = step + 1
    rel.open_step = None
    return True


def tool_call(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    if not _in_open_step(st, data):
        return False
    cid, arguments = data.get("callId"), data.get("arguments")
    rel = st.rel
    if type(cid) is not str or not cid or type(data.get("name")) is not str or type(arguments) is not str:
        return False
    if cid in rel.started:
        return False
    st.stats.started_total += 1
    rel.started[cid] = seq
    entry = rel.advertised.get(cid)
    if entry is not None:
        entry[1] = seq
        if entry[3] is None:
            entry[3] = arguments_preview(arguments)
    return True


def request_context_(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    if st.rel.open_turn is None or request_context(data, 0) is not None:
        return False
    fold = st.fold
    fold.request_context, fold.request_context_seq = data, seq
    return True


def _appended(obj: dict[str, Any], seq: int, t: str) -> bool:
    """An append whose ``sourceEventSeqs``, if any, a v0 reader accepts (``handlers._cited``)."""
    if obj.get("surfaceOp") != "append":
        return False
    if "sourceEventSeqs" in obj:
        try:
            decode_seq_set(obj["sourceEventSeqs"], seq, t == "assistant/message", allow_ranges=False)
        except SeqRangeError:
            return False
    return True


def _plain(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any, check: Checker) -> bool:
    """A well-formed message event (§4.3) of the open step, appended."""
    return check(data, 0) is None and _in_open_step(st, data) and _appended(obj, seq, t)


def user_message_(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    if user_message(data, 0) is not None or not _appended(obj, seq, "user/message"):
        return False
    st.stats.surface_events += 1
    st.fold.append(seq, "user/message")
    st.rel.resumes(seq)
    return True


def assistant_message_(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    if not _plain(st, obj, seq, "assistant/message", data, assistant_message):
        return False
    message = data["message"]
    advertised = st.rel.advertised
    ids: set[str] = set()
    for block in message["content"]:
        if type(block) is dict and block.get("type") == "tool-call":
            cid = block.get("id")
            if type(cid) is not str or not cid or cid in advertised or cid in ids:
                return False  # h._assistant would report it
            ids.add(cid)
    st.stats.surface_events += 1
    st.fold.append(seq, "assistant/message")
    h.assistant_effects(st, data, message)
    return True


def tool_result_(st: EventState, obj: dict[str, Any], seq: int, data: Any) -> bool:
    if not _plain(st, obj, seq, "tool/result", data, tool_result_message):
        return False
    cid = data["message"]["source"]["callId"]
    if cid not in st.rel.started:
        error = data.get("error")
        if type(error) is not dict or error.get("code") != h.TOOL_NOT_STARTED:
            return False  # h._tool_result would report it unmatched
    st.stats.surface_events += 1
    st.fold.append(seq, "tool/result")
    h.tool_result_effects(st, seq, data, True)
    return True


FAST: dict[str, FastHandler] = {
    "turn/start": turn_start,
    "step/start": step_start,
    "step/end": step_end,
    "tool/call": tool_call,
    "request/context": request_context_,
    "user/message": user_message_,
    "assistant/message": assistant_message_,
    "tool/result": tool_result_,
}
