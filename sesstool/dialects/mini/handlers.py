"""The mini-agent dialect's reading side (spec/mini-agent-format.md): header, time, vocabulary,
message shapes and call pairing, as handlers on the shared scanner's narrow state.

What differs from dsh: the header is the event at seq 0, times are ISO-8601 strings, there are
no steps, messages are OpenAI-shaped, and a tool result pairs with its call through
``tool_call_id`` anywhere in the log (every dangling call is answered by a repair).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from itertools import islice
from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.fold import replace_nodes
from sesstool.core.header import Header, is_safe_nonneg
from sesstool.core.humanize import arguments_preview, chosen, chosen_repr
from sesstool.core.model import TimelineEntry
from sesstool.core.scan_state import EventState
from sesstool.core.seq_ranges import SeqRangeError, SeqSet, decode_seq_set

HEADER_TYPE = "session/header"
CURRENT_VERSION = 1
SURFACE = frozenset({"system/message", "user/message", "assistant/message", "tool/result"})
KNOWN = SURFACE | {"turn/start", "turn/end", "tool/call", "compaction/start", "compaction/summary"}
ROLES = {
    "system/message": "system",
    "user/message": "user",
    "assistant/message": "assistant",
    "tool/result": "tool",
}
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})")


def is_header(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("type") == HEADER_TYPE


def iso_ms(value: Any) -> int | None:
    """Epoch milliseconds of an ISO-8601 time string, or None when it is not one."""
    if type(value) is not str or not _ISO.fullmatch(value):
        return None
    text = value.replace("Z", "+00:00")
    if "." in text:  # Python 3.11 parses at most 6 fraction digits
        head, rest = text.split(".", 1)
        frac = re.match(r"\d+", rest)
        assert frac is not None
        text = head + "." + frac.group(0)[:6].ljust(6, "0") + rest[frac.end() :]
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return int(stamp.timestamp() * 1000)


def decode_header(obj: Any, line: bytes) -> tuple[Header | None, list[tuple[str, str]]]:
    """The header event (seq 0, ``line`` its bytes): a version the reader knows,
    ``delegationDepth`` required."""
    if not isinstance(obj, dict) or obj.get("type") != HEADER_TYPE:
        return None, [(R.HEADER_INVALID, "first record is not a session/header event")]
    data = obj.get("data")
    if not isinstance(data, dict):
        return None, [(R.HEADER_INVALID, "session/header data is not an object")]
    version = data.get("version")
    if type(version) is not int or version < 0:
        return None, [
            (R.HEADER_INVALID, f"header version {chosen_repr(version)} is not a non-negative integer")
        ]
    if version > CURRENT_VERSION:
        return None, [
            (
                R.HEADER_NEWER_VERSION,
                f"mini-agent log format v{version} is newer than the v{CURRENT_VERSION} sesstool "
                "reads: nothing is damaged, the reader is old",
            )
        ]
    problems: list[tuple[str, str]] = []
    if obj.get("seq") != 0:
        problems.append(
            (R.HEADER_FIELD, f"the header event must have seq 0, got {chosen_repr(obj.get('seq'))}")
        )
    created = iso_ms(obj.get("time"))
    if created is None:
        problems.append(
            (R.HEADER_FIELD, f"header time {chosen_repr(obj.get('time'))} is not an ISO-8601 string")
        )
    depth = data.get("delegationDepth")
    if not is_safe_nonneg(depth):
        problems.append((R.HEADER_FIELD, "header data.delegationDepth must be a non-negative integer"))
    sid = data.get("id") if isinstance(data.get("id"), str) else None
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
    parent = data.get("parentSession") if isinstance(data.get("parentSession"), str) else None
    header = Header(version, line, id=sid, created_at=created, cwd=cwd, parent_session=parent)
    if is_safe_nonneg(depth):
        header = replace(header, delegation_depth=depth)
    return header, problems


# -- handlers --------------------------------------------------------------------------------


def _data(st: EventState, t: str, data: Any) -> dict[str, Any] | None:
    if type(data) is not dict:
        st.report(R.EVENT_DATA, f"{t} data is not an object")
        return None
    return data


def turn_start(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    d = _data(st, t, data)
    turn = d.get("turn") if d else None
    if type(turn) is not int or turn < 1:
        st.report(R.EVENT_DATA, f"turn/start turn {chosen_repr(turn)} is not a positive integer")
    if st.rel.open_turn is not None:
        st.report(R.TURN_OPEN, f"turn/start {chosen(turn)} while turn {chosen(st.rel.open_turn)} is open")
    elif turn != st.rel.last_turn + 1:
        st.report(
            R.TURN_NUMBER,
            f"turn/start {chosen(turn)} after turn {st.rel.last_turn} (expected {st.rel.last_turn + 1})",
        )
    st.stats.turns += 1
    st.rel.resumes(seq)
    st.rel.open_turn = turn if type(turn) is int else st.rel.last_turn + 1
    st.rel.open_turn_seq = seq
    st.rel.last_turn = st.rel.open_turn
    if st.timeline is not None:
        st.timeline.append(TimelineEntry(seq, st.rel.open_turn, None, t, ""))


def turn_end(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    d = _data(st, t, data)
    turn = d.get("turn") if d else None
    reason = d.get("reason") if d else None
    if type(reason) is not str or not reason:
        st.report(R.EVENT_DATA, "turn/end reason must be a non-empty string")
        reason = "?"
    st.stats.turn_end(reason)
    if st.rel.open_turn is None or turn != st.rel.open_turn:
        st.report(
            R.TURN_END_MISMATCH, f"turn/end {chosen(turn)} but the open turn is {chosen(st.rel.open_turn)}"
        )
    st.rel.last_turn_end, st.rel.resume_seq = seq, None
    st.rel.open_turn = None
    st.rel.open_turn_seq = None
    if st.timeline is not None:
        st.timeline.append(TimelineEntry(seq, turn, None, t, reason))


def tool_call(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    d = _data(st, t, data)
    if d is None:
        return
    cid = d.get("callId")
    if not isinstance(cid, str) or not cid or not isinstance(d.get("name"), str):
        st.report(R.EVENT_DATA, "tool/call needs a non-empty callId and a name")
        return
    if not isinstance(d.get("arguments"), str):
        st.report(R.EVENT_DATA, "tool/call arguments must be a JSON string")
    st.stats.started_total += 1
    if cid in st.rel.started:
        st.report(R.TOOL_CALL_DUPLICATE, f"tool call {chosen(cid)} started twice")
    st.rel.started[cid] = seq
    entry = st.rel.advertised.get(cid)
    if entry is not None:
        entry[1] = seq
        if entry[3] is None:
            entry[3] = arguments_preview(d.get("arguments"))
        st.rel.advertised[cid] = entry  # kept in its place (a spilled table holds a copy)
    else:
        # a call the log never advertised still needs an answer (spec "Crash repair")
        st.rel.advertised[cid] = [0, seq, d.get("name"), arguments_preview(d.get("arguments"))]
    st.rel.grew()
    if st.timeline is not None:
        st.timeline.append(
            TimelineEntry(seq, st.rel.open_turn, None, t, f"{chosen(d.get('name'))} {chosen(cid)}")
        )


def _message_problem(t: str, message: Any) -> tuple[str, str] | None:
    if not isinstance(message, dict):
        return (R.MESSAGE_SHAPE, f"{t} data.message is not an object")
    role = message.get("role")
    if role != ROLES[t]:
        return (R.MESSAGE_ROLE, f"message role is {chosen_repr(role)}, expected {ROLES[t]!r}")
    content = message.get("content")
    if not (isinstance(content, (str, list)) or (content is None and t == "assistant/message")):
        return (R.MESSAGE_SHAPE, "message content must be a string or an array of parts")
    if t == "tool/result" and not (isinstance(message.get("tool_call_id"), str) and message["tool_call_id"]):
        return (R.TOOL_RESULT_SHAPE, "a tool message needs a non-empty tool_call_id")
    calls = message.get("tool_calls")
    if calls is not None and (
        t != "assistant/message"
        or not isinstance(calls, list)
        or not all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in calls)
    ):
        return (R.MESSAGE_SHAPE, "tool_calls must be a list of {id, type, function} on an assistant message")
    return None


def projected_message(obj: dict[str, Any]) -> Any:
    """The message a surface record projects, as ``surface`` keeps it: derive streamed by
    address reads it back from the record's line with this (issue 14)."""
    data = obj["data"]
    return data.get("message") if type(data) is dict else None


def surface(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    st.stats.surface_events += 1
    d = _data(st, t, data)
    message = d.get("message") if d else None
    problem = _message_problem(t, message)
    if problem:
        st.report(*problem)
    cited: SeqSet | None = None
    src = obj.get("sourceEventSeqs")
    if src is not None:
        try:
            cited = decode_seq_set(src, seq, False)
        except SeqRangeError as err:
            st.report(R.SOURCE_SEQS_SHAPE, str(err))
    op = obj.get("surfaceOp")
    replaced = False
    if op is None or op == {"op": "append"}:
        st.fold.append(seq, t)
    elif isinstance(op, dict) and op.get("op") == "replace":
        replaced = True
        replace_nodes(st, op, seq, t, data, cited)
    else:
        st.report(R.SURFACE_OP_SHAPE, f"surfaceOp {chosen_repr(op)} is not {{op:'append'}} or a replace")
        st.fold.append(seq, t)
    if isinstance(message, dict):
        if t == "tool/result" and not replaced:
            _tool_result(st, seq, d or {}, message, cited)
        elif t == "assistant/message":
            _assistant(st, d or {}, message)
    if st.collect_messages and seq in st.fold.node_type:
        st.fold.projected[seq] = st.keep(message)
    if st.timeline is not None:
        st.timeline.append(TimelineEntry(seq, st.rel.open_turn, None, t, _preview(message), replaced))


def _tool_result(
    st: EventState, seq: int, data: dict[str, Any], message: dict[str, Any], cited: SeqSet | None
) -> None:
    cid = message.get("tool_call_id")
    if not isinstance(cid, str):
        return
    if data.get("isError") is True:
        st.stats.failed += 1
    call_seq = st.rel.started.get(cid)
    if call_seq is not None:
        if cited is not None and not cited.is_single(call_seq):
            shown = list(islice(cited, 10)) + (["…"] if len(cited) > 10 else [])
            st.report(
                R.TOOL_RESULT_SHAPE, f"tool/result cites {shown} but the call {chosen(cid)} is seq {call_seq}"
            )
        del st.rel.started[cid]
        st.stats.answered += 1
    elif cid in st.rel.advertised:
        st.stats.never_started += 1  # answered without ever starting (a synthetic result)
    else:
        st.report(R.TOOL_RESULT_UNMATCHED, f"tool/result for {chosen(cid)} answers no tool call")
    st.rel.advertised.pop(cid, None)


def _assistant(st: EventState, data: dict[str, Any], message: dict[str, Any]) -> None:
    usage = data.get("usage")
    if isinstance(usage, dict):
        for i, keys in enumerate((("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"))):
            for key in keys:
                if type(usage.get(key)) is int:
                    st.stats.usage[i] += usage[key]
                    break
    for call in message.get("tool_calls") or ():
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            continue
        cid = call["id"]
        st.stats.advertised_total += 1
        if cid in st.rel.advertised:
            st.report(R.TOOL_CALL_DUPLICATE, f"tool call id {chosen(cid)} advertised twice")
        fn = call.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        arguments = arguments_preview(fn.get("arguments")) if isinstance(fn, dict) else None
        st.rel.advertised[cid] = [0, st.rel.started.get(cid), name, arguments]
        st.rel.grew()


def _preview(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    text = str(content or "")
    calls = message.get("tool_calls") or ()
    text += "".join(
        f" → {c.get('function', {}).get('name')}({c.get('id')})" for c in calls if isinstance(c, dict)
    )
    text = text.replace("\n", " ").strip()
    if len(text) > 100:
        text = text[:99] + "…"
    return f"{message.get('role', '?')}: {text}"
