"""dsh event handlers (spec §4–§6): relations (§6.2), the surface fold (§5) and statistics.

Every handler is ``handler(st, obj, seq, type, data)`` on the narrow ``EventState``; the shared
scanner binds them per version through the profile (``dialects.dsh.profiles``).
"""

from __future__ import annotations

from typing import Any

import orjson

from sesstool.core import rule_ids as R
from sesstool.core.fold import replace_nodes
from sesstool.core.header import is_safe_nonneg
from sesstool.core.humanize import arguments_preview, chosen, chosen_repr
from sesstool.core.model import TimelineEntry
from sesstool.core.scan_state import EventState
from sesstool.core.seq_ranges import SeqRangeError, SeqSet, decode_seq_set
from sesstool.core.shapes import CHECKERS, stream_records, turn_end_members
from sesstool.core.upgrade.v1 import v0_reader_view

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
_USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")

# -- relations (§6.2) --------------------------------------------------------------------------


def _ts(st: EventState, data: Any) -> tuple[Any, Any]:
    if type(data) is dict:
        return data.get("turn"), data.get("step")
    _shape(st, "event data is not an object")
    return None, None


def _shape(st: EventState, message: str) -> None:
    """A payload shape §4.1 forbids: an error, except in v0, where the published reader loads
    the log anyway (read-path mutations, docs/format.md): a ``tolerated-shape`` warning that
    leaves the verdict the reader's."""
    st.report(R.TOLERATED_SHAPE if st.version == 0 else R.EVENT_DATA, message)


def close_step_calls(st: EventState) -> None:
    """A closing boundary: calls still pending stay unresolved (§7.1), counted and noted (the
    tables walked, never copied: past ``CALLS_SPILL_AT`` they are in the spill file)."""
    rel, stats = st.rel, st.stats
    advertised, started = rel.advertised, rel.started
    if advertised or started:
        left, first = 0, []
        for cid in advertised:  # requested (started or not), then started but never requested
            left += 1
            if cid in started:
                stats.dangling += 1
            else:
                stats.never_started += 1
            if left <= 5:
                first.append(cid)
        for cid in started:
            if cid not in advertised:
                left += 1
                stats.dangling += 1
                if left <= 5:
                    first.append(cid)
        st.report(
            R.UNRESOLVED_CALL,
            f"step closed with {left} tool call(s) never answered: "
            + ", ".join(first)
            + (" …" if left > 5 else ""),
        )
        rel.clear_calls()


def turn_start(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    if data is None and st.version == 0:
        # the v0 reader reads data.turn of every turn/start and fails on null (TypeError)
        st.report(R.EVENT_DATA, "turn/start data is null")
    turn, _ = _ts(st, data)
    if not is_safe_nonneg(turn) or turn < 1:
        _shape(st, f"turn/start turn {chosen_repr(turn)} is not a positive integer")
    if rel.open_turn is not None:
        st.report(R.TURN_OPEN, f"turn/start {chosen(turn)} while turn {chosen(rel.open_turn)} is open")
        close_step_calls(st)
    elif turn != rel.last_turn + 1:
        st.report(
            R.TURN_NUMBER,
            f"turn/start {chosen(turn)} after turn {rel.last_turn} (expected {rel.last_turn + 1})",
        )
    st.stats.turns += 1
    rel.resumes(seq)
    rel.open_turn = turn if type(turn) is int else rel.last_turn + 1
    rel.open_turn_seq = seq
    # v0: the reader's closers for this turn would name data.turn (read-path mutations)
    rel.open_turn_unnumbered = not is_safe_nonneg(turn) or turn < 1
    rel.open_step_unnumbered = False
    rel.last_turn = rel.open_turn
    rel.open_step = None
    rel.next_step = 1
    rel.clear_calls()
    if st.timeline is not None:
        st.timeline.append(TimelineEntry(seq, rel.open_turn, None, t, ""))


def turn_end(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    version = st.version or 0
    if type(data) is not dict and version == 0:
        # The v0 reader takes a non-object turn/end payload as a legacy close of the open
        # turn (the published rc.8 packages accept it; docs/format.md).
        turn: Any = rel.open_turn
        kind: Any = "legacy"
    else:
        turn, _ = _ts(st, data)
        if version == 0 and type(data) is dict and (not is_safe_nonneg(turn) or turn < 1):
            # the v0 reader refuses it: "malformed pre-react-loop turn/end" (rc.8)
            st.report(R.EVENT_DATA, f"malformed turn/end: turn {chosen_repr(turn)} is not a positive integer")
        reason = data.get("reason") if type(data) is dict else None
        kind = reason.get("kind") if type(reason) is dict else None
        if not isinstance(kind, str) or not kind:
            st.report(R.EVENT_DATA, "turn/end reason lacks a kind")
            kind = "?"
        else:
            problem = turn_end_members(data, kind, version)
            if problem:
                st.report(*problem)
    st.stats.turn_end(kind)
    if kind == "forked" and version < 4:
        st.report(R.EVENT_DATA, "turn/end reason 'forked' exists only in v4")
    if rel.open_turn is None or turn != rel.open_turn:
        st.report(
            R.TURN_END_MISMATCH, f"turn/end {chosen(turn)} but the open turn is {chosen(rel.open_turn)}"
        )
    if rel.open_step is not None:
        st.report(R.TURN_END_STEP_OPEN, f"turn/end {chosen(turn)} while step {chosen(rel.open_step)} is open")
    close_step_calls(st)
    rel.last_turn_end, rel.resume_seq = seq, None
    rel.open_turn = None
    rel.open_turn_seq = None
    rel.open_step = None
    if st.timeline is not None:
        st.timeline.append(TimelineEntry(seq, turn, None, t, kind))


def step_start(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    if data is None and st.version == 0:
        # the v0 reader reads data.step of every step/start and fails on null (TypeError)
        st.report(R.EVENT_DATA, "step/start data is null")
    turn, step = _ts(st, data)
    if rel.open_turn is None or turn != rel.open_turn:
        st.report(R.STEP_OUTSIDE_TURN, f"step/start names turn {turn} but the open turn is {rel.open_turn}")
    if rel.open_step is not None:
        st.report(R.STEP_OPEN, f"step/start {step} while step {rel.open_step} is open")
        close_step_calls(st)
    elif step != rel.next_step:
        st.report(R.STEP_NUMBER, f"step/start {step} (expected {rel.next_step})")
    st.stats.steps += 1
    rel.open_step = step if type(step) is int else rel.next_step
    rel.open_step_unnumbered = type(data) is not dict or "step" not in data
    rel.clear_calls()


def step_end(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    turn, step = _ts(st, data)
    if rel.open_step is None or turn != rel.open_turn or step != rel.open_step:
        st.report(
            R.STEP_END_MISMATCH,
            f"step/end {turn}/{step} but the open step is {rel.open_turn}/{rel.open_step}",
        )
    close_step_calls(st)
    if type(step) is int:
        rel.next_step = step + 1
    rel.open_step = None


def in_step(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    if (
        type(data) is not dict
        or data.get("turn") != rel.open_turn
        or data.get("step") != rel.open_step
        or rel.open_step is None
    ):
        turn, step = _ts(st, data)
        st.report(
            R.EVENT_OUTSIDE_STEP,
            f"{t} names {turn}/{step} but the open step is {rel.open_turn}/{rel.open_step}",
        )
    elif t == "assistant/attempt":
        p = stream_records(data.get("stream"))
        if p:
            st.report(*p)


def in_turn(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    if st.rel.open_turn is None:
        st.report(R.EVENT_OUTSIDE_TURN, f"{t} outside an open turn")


def tool_call(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    in_step(st, obj, seq, t, data)
    cid = data.get("callId") if type(data) is dict else None
    if not isinstance(cid, str) or not cid or not isinstance(data.get("name"), str):
        _shape(st, "tool/call needs a non-empty callId and a name")
        return
    if not isinstance(data.get("arguments"), str):
        _shape(st, "tool/call arguments must be the raw JSON string")
    rel = st.rel
    st.stats.started_total += 1
    if cid in rel.started:
        st.report(R.TOOL_CALL_DUPLICATE, f"tool call {chosen(cid)} started twice in one step")
    rel.started[cid] = seq
    entry = rel.advertised.get(cid)
    if entry is not None:
        entry[1] = seq
        if entry[3] is None:
            entry[3] = arguments_preview(data.get("arguments"))
        rel.advertised[cid] = entry  # kept in its place (a spilled table holds a copy)
    rel.grew()
    if st.timeline is not None:
        st.timeline.append(
            TimelineEntry(seq, rel.open_turn, rel.open_step, t, f"{chosen(data.get('name'))} {chosen(cid)}")
        )


def request_record(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    """request/header and request/context: checked, and the latest of each kept (§5 item 8)."""
    in_turn(st, obj, seq, t, data)
    p = CHECKERS[t](data, st.version or 0)
    if p:
        st.report(*p)
    fold = st.fold
    if t == "request/header":
        fold.request_header, fold.request_header_seq = data, seq
    else:
        fold.request_context, fold.request_context_seq = data, seq


def end_seed(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    stats = st.stats
    stats.marker_count += 1
    st.rel.last_end_seed = seq
    version = st.version or 0
    if type(data) is not dict:
        st.report(R.EVENT_DATA, "session/end-seed data is not an object")
        return
    tagged = data.get("inherited") is True
    if version <= 1 and data:
        st.report(R.EVENT_DATA, f"a v{version} session/end-seed carries data {{}}")
    elif version >= 2 and not (data.keys() <= {"inherited"} and data.get("inherited", True) is True):
        st.report(R.EVENT_DATA, "session/end-seed data must be {} or {inherited: true}")
    if len(stats.markers) < 64 or tagged:
        stats.markers.append((seq, tagged))


def steering(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    """v0 legacy: a v0 reader turns steering/message into a user/message (§1.3)."""
    legacy = v0_reader_view(obj, st.session_id())
    if legacy is None:
        st.report(
            R.EVENT_DATA,
            "malformed steering/message: expected {turn, message} or {turn, content, source}",
        )
        return
    if "surfaceOp" not in obj:
        # like the v0 reader: the converted user/message must carry a surfaceOp of its own
        legacy = {k: v for k, v in legacy.items() if k != "surfaceOp"}
    surface_event(st, legacy, seq, "user/message", legacy["data"])


def image_offload(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    st.report(
        R.MESSAGE_PROJECTION_EVENT,
        "image/offload edits projected messages through a plugin interpreter that "
        "sesstool does not have; the derived messages cannot be trusted",
    )


# -- surface events and the fold (§5) ----------------------------------------------------------


def _cited(st: EventState, obj: dict[str, Any], seq: int, t: str, version: int) -> SeqSet | None:
    src = obj.get("sourceEventSeqs")
    if src is None:
        if "sourceEventSeqs" in obj:  # null is not "absent": the reader refuses it
            st.report(R.SOURCE_SEQS_SHAPE, "sourceEventSeqs must be an array when present")
        return None
    if t == "assistant/message" and version >= 2:
        if version >= 3:
            st.report(R.SOURCE_SEQS_FORBIDDEN, "assistant/message must not carry sourceEventSeqs in v3+")
        else:
            st.report(R.SOURCE_SEQS_ASSISTANT_V2, "v2 assistant/message no longer carries sourceEventSeqs")
    try:
        return decode_seq_set(src, seq, t == "assistant/message" and version <= 1, allow_ranges=version != 0)
    except SeqRangeError as err:
        st.report(R.SOURCE_SEQS_SHAPE, str(err))
        return None


def _reader_view(
    obj: dict[str, Any], t: str, data: Any, version: int, session: str | None
) -> tuple[dict[str, Any], Any, Any]:
    """(record, data, shape problem) as a reader of ``version`` sees a surface record: a v0
    reader normalises pre-identity shapes in memory (§1.3); so does the scan."""
    p = CHECKERS[t](data, version)
    if p and version == 0:
        legacy = v0_reader_view(obj, session)
        if legacy is not None:
            obj, data = legacy, legacy["data"]
            p = CHECKERS[t](data, version)
    return obj, data, p


def projected_message(obj: dict[str, Any], version: int, session: str | None) -> Any:
    """The message a surface record projects (§5), as ``surface_event`` keeps it: derive
    streamed by address reads it back from the record's line with this (issue 14)."""
    t = obj["type"]
    if t not in CHECKERS:  # v0 steering/message: kept as the user/message a v0 reader makes of it
        legacy = v0_reader_view(obj, session)
        assert legacy is not None, "the scan kept a steering/message it could not convert"
        obj, t = legacy, "user/message"
    _, data, _ = _reader_view(obj, t, obj["data"], version, session)
    return data if t == "user/message" else data.get("message")


def surface_event(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    st.stats.surface_events += 1
    version = st.version
    assert version is not None
    obj, data, p = _reader_view(obj, t, data, version, st.session_id())
    if p:
        st.report(*p)
    cited = _cited(st, obj, seq, t, version)
    op = obj.get("surfaceOp")
    in_step_ = True
    if op == "append":
        st.fold.append(seq, t)
    elif type(op) is dict:
        in_step_ = False
        replace_nodes(st, op, seq, t, data, cited)
    else:
        in_step_ = op is None
        if op is None:
            st.report(R.SURFACE_OP_MISSING, f"{t} is surface-eligible and requires a surfaceOp marker")
        else:
            st.report(R.SURFACE_OP_SHAPE, f"surfaceOp {chosen_repr(op)} is not 'append' or a replace")
        st.fold.append(seq, t)
    if type(data) is not dict:
        return
    _surface_payload(st, obj, seq, t, data, op, in_step_)


def _surface_payload(
    st: EventState, obj: dict[str, Any], seq: int, t: str, data: dict[str, Any], op: Any, in_step_: bool
) -> None:
    rel = st.rel
    if t == "user/message":
        message: Any = data
        if op == "append":
            rel.resumes(seq)
    else:
        message = data.get("message")
        if in_step_:
            _check_open_step(st, t, data)
        elif t == "tool/result" and rel.open_turn is None:
            st.report(R.EVENT_OUTSIDE_TURN, f"{t} replacement outside an open turn")
    if t == "tool/result":
        _tool_result(st, seq, data, op == "append")
    elif t == "assistant/message":
        _assistant(st, data, message)
    if st.collect_messages and seq in st.fold.node_type:
        content = message.get("content") if type(message) is dict else None
        if t in ("assistant/message", "system/message", "developer/message") and not content:
            st.fold.projected[seq] = None  # empty nodes keep position, project nothing
        else:
            st.fold.projected[seq] = st.keep(message)
    if st.timeline is not None:
        st.timeline.append(
            TimelineEntry(seq, rel.open_turn, rel.open_step, t, _preview(message), type(op) is dict)
        )


def _check_open_step(st: EventState, t: str, data: dict[str, Any]) -> None:
    if t == "user/message":
        return  # unconstrained (§6.2)
    rel = st.rel
    if rel.open_step is None or data.get("turn") != rel.open_turn or data.get("step") != rel.open_step:
        st.report(
            R.EVENT_OUTSIDE_STEP,
            f"{t} names {data.get('turn')}/{data.get('step')} but the open step is "
            f"{rel.open_turn}/{rel.open_step}",
        )


def _assistant(st: EventState, data: dict[str, Any], message: Any) -> None:
    version = st.version or 0
    if version >= 2:
        p = stream_records(data.get("stream"))
        if p:
            st.report(*p)
    usage = data.get("usage")
    if type(usage) is dict:
        totals = st.stats.usage
        for i, key in enumerate(_USAGE_KEYS):
            value = usage.get(key)
            if type(value) is int:
                totals[i] += value
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list:
        return
    step = data.get("step")
    rel = st.rel
    for block in content:
        if type(block) is dict and block.get("type") == "tool-call":
            cid = block.get("id")
            if not isinstance(cid, str) or not cid:
                st.report(
                    R.TOLERATED_SHAPE if st.version == 0 else R.MESSAGE_SHAPE, "tool-call block without an id"
                )
                continue
            st.stats.advertised_total += 1
            if cid in rel.advertised:
                st.report(R.TOOL_CALL_DUPLICATE, f"tool call id {chosen(cid)} advertised twice")
            arguments = arguments_preview(block.get("arguments"))
            rel.advertised[cid] = [step, rel.started.get(cid), block.get("name"), arguments]
            rel.grew()


def _tool_result(st: EventState, seq: int, data: dict[str, Any], appended: bool) -> None:
    if not appended:
        return
    version = st.version or 0
    message = data.get("message")
    source = message.get("source") if type(message) is dict else None
    cid = source.get("callId") if type(source) is dict else None
    st.fold.tool_fp[seq] = tool_fingerprint(data, version)
    if not isinstance(cid, str):
        return
    error = data.get("error")
    code = error.get("code") if type(error) is dict else None
    rel, stats = st.rel, st.stats
    if _is_error(message, version):
        stats.failed += 1
    if cid in rel.started:
        del rel.started[cid]
        stats.answered += 1
    elif code == TOOL_NOT_STARTED:
        stats.never_started += 1
    else:
        st.report(
            R.TOOL_RESULT_UNMATCHED,
            f"tool/result for {chosen(cid)} resolves no pending tool/call of this step",
        )
    rel.advertised.pop(cid, None)


def _is_error(message: Any, version: int) -> bool:
    if type(message) is not dict:
        return False
    if version >= 4:
        return message.get("isError") is True
    content = message.get("content")
    if type(content) is list and content and type(content[0]) is dict:
        return content[0].get("isError") is True
    return False


def tool_fingerprint(data: dict[str, Any], version: int) -> int | None:
    """Everything of a tool/result except its content (§5 item 5), hashed.

    The content is masked in place for the one dumps call (the decoded event is ours) rather
    than copying the payload.
    """
    try:
        holder = data["message"] if version >= 4 else data["message"]["content"][0]
        content = holder["content"]
    except (KeyError, IndexError, TypeError):
        return None
    holder["content"] = None
    try:
        return hash(orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
    except (TypeError, orjson.JSONEncodeError):
        return None
    finally:
        holder["content"] = content


def _preview(message: Any) -> str:
    """A one-line summary of a surface event for the timeline (raw; escape before printing)."""
    if type(message) is not dict:
        return ""
    role = message.get("role", "?")
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            bt = block.get("type")
            if bt in ("text", "reasoning"):
                parts.append(str(block.get("text", "")))
            elif bt == "tool-call":
                parts.append(f"→ {block.get('name')}({block.get('id')})")
            elif bt == "tool-result":
                inner = block.get("content")
                if isinstance(inner, list):
                    parts.extend(str(b.get("text", "")) for b in inner if isinstance(b, dict))
    text = " ".join(p for p in parts if p).replace("\n", " ")
    if len(text) > 100:
        text = text[:99] + "…"
    return f"{role}: {text}"
