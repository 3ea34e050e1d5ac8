"""The mini-agent dialect (spec/mini-agent-format.md): header, time, vocabulary, message shapes,
pairing and closers, plugged into the shared scanner.

The shared ``Scanner`` keeps the envelope, contiguity, the projection fold (``_replace``), the
statistics and the tail rules; this module supplies what differs: the header is the event at
seq 0, times are ISO-8601 strings, there are no steps, messages are OpenAI-shaped, a tool
result pairs with its call through ``tool_call_id``, and every dangling call is answered.
"""

from __future__ import annotations

import datetime as dt
import re
import types
from itertools import islice
from typing import TYPE_CHECKING, Any

from sesstool.core.header import Header, is_safe_nonneg
from sesstool.core.model import OpenState, TimelineEntry
from sesstool.core.seq_ranges import SeqRangeError, SeqSet, decode_seq_set

if TYPE_CHECKING:
    from sesstool.core.scanner import Scanner

DIALECT = "mini"
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


def decode_header(obj: Any) -> tuple[Header | None, list[tuple[str, str]]]:
    """The header event (seq 0): a version the reader knows, ``delegationDepth`` required."""
    if not isinstance(obj, dict) or obj.get("type") != HEADER_TYPE:
        return None, [("header-invalid", "first record is not a session/header event")]
    data = obj.get("data")
    if not isinstance(data, dict):
        return None, [("header-invalid", "session/header data is not an object")]
    version = data.get("version")
    if type(version) is not int or version < 0:
        return None, [("header-invalid", f"header version {version!r} is not a non-negative integer")]
    if version > CURRENT_VERSION:
        return None, [
            (
                "header-newer-version",
                f"mini-agent log format v{version} is newer than the v{CURRENT_VERSION} sesstool "
                "reads: nothing is damaged, the reader is old",
            )
        ]
    problems: list[tuple[str, str]] = []
    if obj.get("seq") != 0:
        problems.append(("header-field", f"the header event must have seq 0, got {obj.get('seq')!r}"))
    created = iso_ms(obj.get("time"))
    if created is None:
        problems.append(("header-field", f"header time {obj.get('time')!r} is not an ISO-8601 string"))
    depth = data.get("delegationDepth")
    if not is_safe_nonneg(depth):
        problems.append(("header-field", "header data.delegationDepth must be a non-negative integer"))
    sid = data.get("id") if isinstance(data.get("id"), str) else None
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
    parent = data.get("parentSession") if isinstance(data.get("parentSession"), str) else None
    header = Header(
        version=version,
        id=sid,
        created_at=created,
        cwd=cwd,
        parent_session=parent,
        seed_length=None,
        is_seeded=None,
        origin=None,
        delegation_depth=depth if is_safe_nonneg(depth) else None,
        agent_preset=None,
        raw=obj,
    )
    return header, problems


def install(sc: Scanner, version: int) -> None:
    """Bind the mini handlers into ``sc`` (the scanner dispatches on this table)."""
    sc.dialect = DIALECT
    sc.version = version
    sc.version_le1 = False  # the v0/v1 dsh chunk fast path does not apply
    sc.surface = SURFACE
    bind = types.MethodType
    sc.handlers = {
        "turn/start": bind(_turn_start, sc),
        "turn/end": bind(_turn_end, sc),
        "tool/call": bind(_tool_call, sc),
        **{t: bind(_surface, sc) for t in SURFACE},
    }


def event_time(sc: Scanner, obj: dict[str, Any], time: Any) -> None:
    """Times are ISO-8601 strings: parsed for the statistics, the text kept for closers."""
    ms = iso_ms(time)
    if ms is None:
        if time is None and sc.opt.fixture:
            return
        sc.report("envelope-time", f"time {time!r} is not an ISO-8601 string")
        return
    sc.last_time_text = time
    if sc.first_time is None:
        sc.first_time = sc.min_time = sc.max_time = ms
    else:
        if ms < sc.last_time:
            sc.backwards += 1
            sc.max_time = max(sc.max_time, sc.last_time)
        if ms < sc.min_time:  # type: ignore[operator]
            sc.min_time = ms
    sc.last_time = ms


# -- handlers --------------------------------------------------------------------------------


def _data(sc: Scanner, t: str, data: Any) -> dict[str, Any] | None:
    if type(data) is not dict:
        sc.report("event-data", f"{t} data is not an object")
        return None
    return data


def _turn_start(sc: Scanner, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    d = _data(sc, t, data)
    turn = d.get("turn") if d else None
    if type(turn) is not int or turn < 1:
        sc.report("event-data", f"turn/start turn {turn!r} is not a positive integer")
    if sc.open_turn is not None:
        sc.report("turn-open", f"turn/start {turn} while turn {sc.open_turn} is open")
    elif turn != sc.last_turn + 1:
        sc.report("turn-number", f"turn/start {turn} after turn {sc.last_turn} (expected {sc.last_turn + 1})")
    sc.turns += 1
    sc._resumes(seq)
    sc.open_turn = turn if type(turn) is int else sc.last_turn + 1
    sc.open_turn_seq = seq
    sc.last_turn = sc.open_turn
    if sc.timeline is not None:
        sc.timeline.append(TimelineEntry(seq, sc.open_turn, None, t, ""))


def _turn_end(sc: Scanner, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    d = _data(sc, t, data)
    turn = d.get("turn") if d else None
    reason = d.get("reason") if d else None
    if type(reason) is not str or not reason:
        sc.report("event-data", "turn/end reason must be a non-empty string")
        reason = "?"
    sc.turn_ends[reason] = sc.turn_ends.get(reason, 0) + 1
    if sc.open_turn is None or turn != sc.open_turn:
        sc.report("turn-end-mismatch", f"turn/end {turn} but the open turn is {sc.open_turn}")
    sc.last_turn_end, sc.resume_seq = seq, None
    sc.open_turn = None
    sc.open_turn_seq = None
    if sc.timeline is not None:
        sc.timeline.append(TimelineEntry(seq, turn, None, t, reason))


def _tool_call(sc: Scanner, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    d = _data(sc, t, data)
    if d is None:
        return
    cid = d.get("callId")
    if not isinstance(cid, str) or not cid or not isinstance(d.get("name"), str):
        sc.report("event-data", "tool/call needs a non-empty callId and a name")
        return
    if not isinstance(d.get("arguments"), str):
        sc.report("event-data", "tool/call arguments must be a JSON string")
    sc.started_total += 1
    if cid in sc.started:
        sc.report("tool-call-duplicate", f"tool call {cid} started twice")
    sc.started[cid] = seq
    entry = sc.advertised.get(cid)
    if entry is not None:
        entry[1] = seq
    else:
        # a call the log never advertised still needs an answer (spec "Crash repair")
        sc.advertised[cid] = [0, seq, d.get("name")]
    if sc.timeline is not None:
        sc.timeline.append(TimelineEntry(seq, sc.open_turn, None, t, f"{d.get('name')} {cid}"))


def _message_problem(t: str, message: Any) -> tuple[str, str] | None:
    if not isinstance(message, dict):
        return ("message-shape", f"{t} data.message is not an object")
    role = message.get("role")
    if role != ROLES[t]:
        return ("message-role", f"message role is {role!r}, expected {ROLES[t]!r}")
    content = message.get("content")
    if not (isinstance(content, (str, list)) or (content is None and t == "assistant/message")):
        return ("message-shape", "message content must be a string or an array of parts")
    if t == "tool/result" and not (isinstance(message.get("tool_call_id"), str) and message["tool_call_id"]):
        return ("tool-result-shape", "a tool message needs a non-empty tool_call_id")
    calls = message.get("tool_calls")
    if calls is not None and (
        t != "assistant/message"
        or not isinstance(calls, list)
        or not all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in calls)
    ):
        return ("message-shape", "tool_calls must be a list of {id, type, function} on an assistant message")
    return None


def _surface(sc: Scanner, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    sc.surface_events += 1
    d = _data(sc, t, data)
    message = d.get("message") if d else None
    problem = _message_problem(t, message)
    if problem:
        sc.report(*problem)
    cited: SeqSet | None = None
    src = obj.get("sourceEventSeqs")
    if src is not None:
        try:
            cited = decode_seq_set(src, seq, False)
        except SeqRangeError as err:
            sc.report("source-seqs-shape", str(err))
    op = obj.get("surfaceOp")
    replaced = False
    if op is None or op == {"op": "append"}:
        sc.nodes.append(seq)
        sc.node_type[seq] = t
    elif isinstance(op, dict) and op.get("op") == "replace":
        replaced = True
        sc._replace(op, seq, t, data, cited)
    else:
        sc.report("surface-op-shape", f"surfaceOp {op!r} is not {{op:'append'}} or a replace")
        sc.nodes.append(seq)
        sc.node_type[seq] = t
    if isinstance(message, dict):
        if t == "tool/result" and not replaced:
            _tool_result(sc, seq, d or {}, message, cited)
        elif t == "assistant/message":
            _assistant(sc, d or {}, message)
    if sc.opt.collect_messages and seq in sc.node_type:
        sc.projected[seq] = message
    if sc.timeline is not None:
        sc.timeline.append(TimelineEntry(seq, sc.open_turn, None, t, _preview(message), replaced))


def _tool_result(
    sc: Scanner, seq: int, data: dict[str, Any], message: dict[str, Any], cited: SeqSet | None
) -> None:
    cid = message.get("tool_call_id")
    if not isinstance(cid, str):
        return
    if data.get("isError") is True:
        sc.failed += 1
    call_seq = sc.started.get(cid)
    if call_seq is not None:
        if cited is not None and not cited.is_single(call_seq):
            shown = list(islice(cited, 10)) + (["…"] if len(cited) > 10 else [])
            sc.report("tool-result-shape", f"tool/result cites {shown} but the call {cid} is seq {call_seq}")
        del sc.started[cid]
        sc.answered += 1
    elif cid in sc.advertised:
        sc.never_started += 1  # answered without ever starting (a synthetic result)
    else:
        sc.report("tool-result-unmatched", f"tool/result for {cid} answers no tool call")
    sc.advertised.pop(cid, None)


def _assistant(sc: Scanner, data: dict[str, Any], message: dict[str, Any]) -> None:
    usage = data.get("usage")
    if isinstance(usage, dict):
        for i, keys in enumerate((("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"))):
            for key in keys:
                if type(usage.get(key)) is int:
                    sc.usage[i] += usage[key]
                    break
    for call in message.get("tool_calls") or ():
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            continue
        cid = call["id"]
        sc.advertised_total += 1
        if cid in sc.advertised:
            sc.report("tool-call-duplicate", f"tool call id {cid} advertised twice")
        fn = call.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        sc.advertised[cid] = [0, sc.started.get(cid), name]


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


# -- closers ---------------------------------------------------------------------------------


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
