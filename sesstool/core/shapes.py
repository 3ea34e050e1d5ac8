"""Payload shape checks per event type and version (spec §4.1, §4.3, §6.1).

Each checker returns ``None`` when the payload is well formed, else ``(rule id, message)``.
They run once per event, so the common well-formed path is kept short.
"""

from __future__ import annotations

from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.header import is_safe_nonneg
from sesstool.core.humanize import chosen_repr

Problem = tuple[str, str] | None


def _ne_str(value: object) -> bool:
    return isinstance(value, str) and value != ""


def message_base(msg: object, role: str, version: int = 0) -> Problem:
    """§4.3: identified message with role, array content and a source kind (v4: a direct
    kind, never the plugin wrapper). Written flat: it runs for every surface event."""
    if type(msg) is not dict:
        return (R.MESSAGE_SHAPE, "message is not an object")
    mid = msg.get("id")
    if type(mid) is not str or not mid:
        return (R.MESSAGE_SHAPE, "message id is missing or empty")
    got = msg.get("role")
    if got != role:
        return (R.MESSAGE_ROLE, f"message role is {chosen_repr(got)}, expected {role!r}")
    if type(msg.get("content")) is not list:
        return (R.MESSAGE_SHAPE, "message content is not an array")
    source = msg.get("source")
    kind = source.get("kind") if type(source) is dict else None
    if type(kind) is not str or not kind:
        return (R.MESSAGE_SHAPE, "message source lacks a non-empty kind")
    if version >= 4 and kind == "plugin":
        return (R.MESSAGE_SHAPE, "v4 message sources use direct kinds, not {kind:'plugin'}")
    return None


def turn_step(data: dict[str, Any]) -> Problem:
    turn, step = data.get("turn"), data.get("step")
    if type(turn) is not int or type(step) is not int or turn < 0 or step < 0:
        return (R.EVENT_DATA, "data.turn and data.step must be non-negative integers")
    return None


def _message_turn_step(data: dict[str, Any], version: int) -> Problem:
    """A message event's own turn/step: the v0 reader loads a message whose numbers are of
    another type (read-path mutations), so there it is a ``tolerated-shape`` warning."""
    p = turn_step(data)
    if p and version == 0:
        return (R.TOLERATED_SHAPE, p[1])
    return p


def user_message(data: object, version: int) -> Problem:
    if not isinstance(data, dict):
        return (R.EVENT_DATA, "user/message data is not a message object")
    return message_base(data, "user", version)


def assistant_message(data: object, version: int) -> Problem:
    if not isinstance(data, dict):
        return (R.EVENT_DATA, "assistant/message data is not an object")
    msg = data.get("message")
    p = message_base(msg, "assistant", version)
    if p:
        return p
    assert isinstance(msg, dict)
    source = msg["source"]
    if (
        source.get("kind") != "model"
        or not _ne_str(source.get("provider"))
        or not _ne_str(source.get("model"))
    ):
        return (
            R.ASSISTANT_SOURCE,
            "assistant message source must be {kind:'model', provider, model} with non-empty strings",
        )
    if version >= 2 and not isinstance(data.get("stream"), list):
        return (R.EVENT_DATA, f"a v{version} assistant/message requires data.stream")
    if version <= 1 and "stream" in data:
        return (R.EVENT_DATA, f"data.stream does not exist in v{version} (chunks are events)")
    return _message_turn_step(data, version)


def tool_result_message(data: object, version: int) -> Problem:
    if not isinstance(data, dict):
        return (R.EVENT_DATA, "tool/result data is not an object")
    msg = data.get("message")
    p = message_base(msg, "tool" if version >= 4 else "user", version)
    if p:
        return p
    assert isinstance(msg, dict)
    source = msg["source"]
    call_id = source.get("callId")
    if source.get("kind") != "tool" or not _ne_str(call_id):
        return (R.TOOL_RESULT_SHAPE, "tool result source must be {kind:'tool', callId}")
    error = data.get("error")
    if version >= 4:
        if msg.get("toolCallId") != call_id:
            return (R.TOOL_RESULT_SHAPE, "message.toolCallId must equal source.callId")
        is_error = msg.get("isError")
    else:
        content = msg["content"]
        if len(content) != 1 or not isinstance(content[0], dict) or content[0].get("type") != "tool-result":
            return (R.TOOL_RESULT_SHAPE, "a tool result holds exactly one tool-result block")
        block = content[0]
        if block.get("toolCallId") != call_id:
            return (R.TOOL_RESULT_SHAPE, "tool-result block toolCallId must equal source.callId")
        if not isinstance(block.get("content"), list):
            return (R.TOOL_RESULT_SHAPE, "tool-result block content is not an array")
        is_error = block.get("isError")
    if error is not None:
        if not isinstance(error, dict) or not _ne_str(error.get("code")):
            # the v0 reader loads it (read-path mutations): tolerated there, an error later
            rule = R.TOLERATED_SHAPE if version == 0 else R.TOOL_RESULT_SHAPE
            return (rule, "tool/result error must be an object with a code")
        if version >= 3 and is_error is not True:
            return (R.TOOL_RESULT_ERROR_FLAG, "tool/result carries error but isError is not true")
    return _message_turn_step(data, version)


def system_message(data: object, version: int) -> Problem:
    if not isinstance(data, dict):
        return (R.EVENT_DATA, "system/message data is not an object")
    return turn_step(data) or message_base(data.get("message"), "system", version)


def developer_message(data: object, version: int) -> Problem:
    if not isinstance(data, dict):
        return (R.EVENT_DATA, "developer/message data is not an object")
    p = turn_step(data) or message_base(data.get("message"), "developer", version)
    if p:
        return p
    content = data["message"]["content"]
    additions = any(isinstance(b, dict) and b.get("type") == "tool-addition" for b in content)
    if additions and not is_safe_nonneg(data.get("headerSeq")):
        return (R.EVENT_DATA, "developer/message with tool-addition blocks requires headerSeq")
    if not additions and "headerSeq" in data:
        return (R.EVENT_DATA, "developer/message carries headerSeq without tool additions")
    return None


def request_header(data: object, version: int) -> Problem:
    """§6.1: config provider/model, adapterDefaults markers, v3+ canonical form."""
    if not isinstance(data, dict) or not isinstance(data.get("header"), dict):
        return (R.REQUEST_HEADER, "request/header data.header is not an object")
    header = data["header"]
    config = header.get("config")
    if (
        not isinstance(config, dict)
        or not _ne_str(config.get("provider"))
        or not _ne_str(config.get("model"))
    ):
        return (R.REQUEST_HEADER, "header.config needs non-empty provider and model")
    if "reasoningEffort" in config and not _ne_str(config["reasoningEffort"]):
        return (R.REQUEST_HEADER, "config.reasoningEffort must be a non-empty string")
    defaults = header.get("adapterDefaults")
    if defaults is not None:
        if not isinstance(defaults, dict):
            return (R.REQUEST_HEADER, "adapterDefaults is not an object")
        for key, value in defaults.items():
            if key not in ("reasoningEffort", "maxTokens") or value is not True:
                return (
                    R.REQUEST_HEADER,
                    f"adapterDefaults.{key} must be one of reasoningEffort/maxTokens set to true",
                )
            if key not in config:
                return (R.REQUEST_HEADER, f"adapterDefaults.{key} without config.{key}")
        if version >= 3 and not defaults:
            return (R.REQUEST_HEADER, "empty adapterDefaults is forbidden in v3+")
    if version >= 3:
        if "system" in header:
            return (R.REQUEST_HEADER, "header.system is forbidden in v3+ (system/message)")
        if header.get("tools") == []:
            return (R.REQUEST_HEADER, "empty header.tools is forbidden in v3+")
    # The v0 reader loads these (read-path mutations): a tolerated shape there, an error later.
    rule = R.TOLERATED_SHAPE if version == 0 else R.REQUEST_HEADER
    if "system" in header and not isinstance(header["system"], str):
        return (rule, "header.system is not a string")
    if "tools" in header and not isinstance(header["tools"], list):
        return (rule, "header.tools is not an array")
    reason = data.get("reason")
    if version == 0 and reason == "fallback":
        return (R.RETIRED_EVENT_TYPE, "request/header reason 'fallback' is retired")
    if not isinstance(reason, str):
        # the v0 reader loads it (read-path mutations): tolerated there, an error later
        return (
            R.TOLERATED_SHAPE if version == 0 else R.REQUEST_HEADER,
            "request/header reason is not a string",
        )
    return None


_REASON_MEMBERS: dict[str, tuple[frozenset[str], ...]] = {
    "completed": (frozenset({"kind"}),),
    "interrupted": (frozenset({"kind"}),),
    "blocked": (frozenset({"kind"}),),
    "max-tokens": (frozenset({"kind"}),),
    "forked": (frozenset({"kind"}),),
    "aborted": (frozenset({"kind", "reason"}),),
    "error": (frozenset({"kind", "error"}),),
}
# Legacy reason shapes a v0 reader still normalises (§1.3 v0→v1).
_REASON_MEMBERS_V0 = {
    **_REASON_MEMBERS,
    "disposed": (frozenset({"kind"}),),
    "error": (
        frozenset({"kind", "error"}),
        frozenset({"kind", "step", "failure"}),
        frozenset({"kind", "step", "message", "code"}),
    ),
}


def turn_end_members(data: dict[str, Any], kind: str, version: int) -> Problem:
    """§4.2: a turn/end payload is exactly {turn, reason} and a known reason kind carries only
    its own members (the rc.8 reader refuses a "malformed pre-react-loop turn/end"); unknown
    kinds are owner-opaque."""
    extra = data.keys() - {"turn", "reason"}
    if extra:
        return (R.EVENT_DATA, f"malformed turn/end: unexpected data members {sorted(extra)}")
    shapes = (_REASON_MEMBERS_V0 if version == 0 else _REASON_MEMBERS).get(kind)
    reason = data["reason"]
    if shapes is not None and not any(reason.keys() <= shape for shape in shapes):
        allowed = sorted(set().union(*shapes))
        return (R.EVENT_DATA, f"malformed turn/end: reason {chosen_repr(kind)} allows only {allowed}")
    return None


def request_context(data: object, version: int) -> Problem:
    if not isinstance(data, dict):
        rule = R.TOLERATED_SHAPE if version == 0 else R.REQUEST_CONTEXT
        return (rule, "request/context data is not an object")
    provider, model = data.get("provider"), data.get("model")
    if version == 0 and not (isinstance(provider, str) and isinstance(model, str)):
        # the v0 reader loads it (read-path mutations): tolerated there, an error later
        return (R.TOLERATED_SHAPE, "request/context provider and model are not strings")
    if not _ne_str(provider) or not _ne_str(model):
        return (R.REQUEST_CONTEXT, "request/context needs non-empty provider and model")
    return None


_STREAM_RUN = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}


def stream_records(stream: object) -> Problem:
    """§4.5: shape of v2+ embedded stream records (runs of any length ≥ 1)."""
    if not isinstance(stream, list):
        return (R.STREAM_RECORD, "stream is not an array")
    for i, rec in enumerate(stream):
        if not isinstance(rec, dict):
            return (R.STREAM_RECORD, f"stream[{i}] is not an object")
        kind = rec.get("type")
        if kind == "chunk":
            if type(rec.get("time")) is not int or not isinstance(rec.get("chunk"), dict):
                return (R.STREAM_RECORD, f"stream[{i}] chunk record needs time and chunk")
            continue
        member_key = _STREAM_RUN.get(kind) if isinstance(kind, str) else None
        if member_key is None:
            return (R.STREAM_RECORD, f"stream[{i}] has unknown record type {chosen_repr(kind)}")
        members = rec.get(member_key)
        dt = rec.get("dt")
        if type(rec.get("time0")) is not int or not is_safe_nonneg(rec.get("index")):
            return (R.STREAM_RECORD, f"stream[{i}] {kind} needs time0 and index")
        if not isinstance(members, list) or not members or not all(isinstance(m, str) and m for m in members):
            return (R.STREAM_RECORD, f"stream[{i}] {kind} members must be non-empty strings")
        if not isinstance(dt, list) or len(dt) != len(members) - 1 or not all(type(d) is int for d in dt):
            return (R.STREAM_RECORD, f"stream[{i}] {kind} dt must hold members-1 integers")
        if kind == "tool-call-chunks" and not _ne_str(rec.get("id")):
            return (R.STREAM_RECORD, f"stream[{i}] tool-call-chunks needs a non-empty id")
    return None


CHECKERS = {
    "user/message": user_message,
    "assistant/message": assistant_message,
    "tool/result": tool_result_message,
    "system/message": system_message,
    "developer/message": developer_message,
    "request/header": request_header,
    "request/context": request_context,
}
