"""The step v0 → v1 (spec §1.3 "v0 → v1"): an identity edge plus the finite legacy normalisations.

The header only changes ``version``; events keep their seqs, times and payloads except for the
legacy forms a v0 reader already normalised in memory:

* ``steering/message`` → ``user/message`` (wrapped ``{turn, message}`` unwrapped; bare
  ``{turn, content, source}`` gets id ``legacy-message:<session-id>:<seq>`` and role ``user``);
* ``compact/*`` → ``compaction/*``;
* ``turn/start.data.trigger`` removed;
* retired ``turn/end`` reasons (``aborted`` without cause, ``disposed``, the old ``error`` shapes);
* pre-identity ``user/message`` / ``assistant/message`` / ``tool/result`` get their wrappers and
  deterministic ids;
* deterministic ids for legacy ``llm/retry`` chains and legacy compaction groups;
* the duplicate ``request/header.header.messagePrefix`` removed.

The edge uses the closed first-party v0 inventory: every other type refuses, even an ignorable
one, as do ``request/header-delta``, ``mode/set``, ``request/header`` reason ``fallback``,
payload members the spec does not list for the core and compaction events, and a ``plugin``
message source whose ``form`` is not one of the six the released codec admits (§13.A item 4).
Decisions where the spec is imprecise: fixtures/migrate/v0-to-v1/README.md.

Streaming: the state is the open compaction group and the retry chains of the current turn; a
record nobody edits keeps its original bytes (packed chunk rows included).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sesstool.core.header import is_safe_nonneg
from sesstool.core.held_map import HeldMap
from sesstool.core.humanize import chosen
from sesstool.core.jsonline import dumps
from sesstool.core.upgrade import Rec, StepShell, UpgradeRefused, UpgradeSpill, check_header_keys
from sesstool.core.upgrade.records import released_envelope
from sesstool.core.vocabulary import KNOWN, LEGACY_V0, RETIRED_V0

NAME = "session-format-v0-to-v1"

HEADER_REQUIRED = frozenset({"type", "version", "id", "createdAt", "delegationDepth"})
HEADER_OPTIONAL = frozenset({"cwd", "parentSession", "seedLength", "origin", "agentPreset"})

# The closed first-party inventory of a v0 source (§4.1, §4.6) — the legacy names included —
# and the canonical names a v1 log may hold.
TARGET_TYPES: frozenset[str] = KNOWN[1] - LEGACY_V0
SOURCE_TYPES: frozenset[str] = KNOWN[0]
_COMPACT = "compact/"
_COMPACTION = "compaction/"

# Payload members per type where the spec enumerates them (§4.1 core events, §4.6 compaction
# payloads): anything else is an "unexpected payload member" and refuses (§1.3).
MEMBERS: dict[str, frozenset[str]] = {
    "turn/start": frozenset({"turn"}),
    "turn/end": frozenset({"turn", "reason"}),
    "step/start": frozenset({"turn", "step"}),
    "step/end": frozenset({"turn", "step"}),
    "assistant/chunk": frozenset({"turn", "step", "chunk"}),
    "assistant/message": frozenset({"turn", "step", "message", "usage", "interrupted"}),
    "tool/call": frozenset({"turn", "step", "callId", "name", "arguments"}),
    "tool/result": frozenset({"turn", "step", "message", "error", "meta"}),
    "request/header": frozenset({"header", "reason", "startsSeries"}),
    "request/context": frozenset({"provider", "model", "contextWindow"}),
    "session/end-seed": frozenset(),
    "todo/write": frozenset({"todos"}),
    "compaction/start": frozenset({"compactionId", "sourceCommandId", "turn"}),
    "compaction/summary": frozenset(
        {
            "compactionId",
            "sourceCommandId",
            "summary",
            "shadowedRange",
            "shadowedSeqs",
            "shadowedTokenCount",
            "provider",
            "model",
            "maxTokens",
            "usage",
            "rawOutput",
            "llmStreamCall",
        }
    ),
    "compaction/prune": frozenset({"shadowedRange", "shadowedSeqs", "shadowedTokenCount"}),
    "compaction/end": frozenset({"compactionId", "sourceCommandId", "turn", "error"}),
}

_STEERING_WRAPPED = frozenset({"turn", "message"})
_STEERING_BARE = frozenset({"turn", "content", "source"})
_TRIGGER_FORM = frozenset({"turn", "trigger"})
_ERROR_FAILURE = frozenset({"kind", "step", "failure"})
_ERROR_MESSAGE = frozenset({"kind", "step", "message"})
_FAILURE_REQUIRED = frozenset({"message"})
_FAILURE_OPTIONAL = frozenset({"code", "status", "providerRetryAfterMs", "requestId"})
_ASSISTANT_LEGACY = ("content", "provenance")
_TOOL_LEGACY = ("callId", "content", "isError")
UNKNOWN_CODE = "UNKNOWN"


# §13.A item 4: the plugin-source forms the released v0 codec admits, in its message's order.
PLUGIN_FORMS = ("instructions", "catalog", "snapshot", "notice", "relay", "recall")


def _message_sources(t: str, data: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, source) of every message source an event of type ``t`` carries."""
    if t == "user/message":
        yield "", data.get("source")
    elif t in ("assistant/message", "tool/result"):
        message = data.get("message")
        if type(message) is dict:
            yield "message ", message.get("source")
    elif t in ("agent/inbox/spliced", "session/title-llm-request"):
        key = "inserted" if t == "agent/inbox/spliced" else "messages"
        members = data.get(key)
        if type(members) is list:
            for i, member in enumerate(members):
                if type(member) is dict:
                    yield f"{key}[{i}] ", member.get("source")


def legacy_message_id(session_id: str, seq: int) -> str:
    return f"legacy-message:{session_id}:{seq}"


def legacy_retry_id(session_id: str, seq: int) -> str:
    return f"legacy-retry:{session_id}:{seq}"


def legacy_compaction_id(session_id: str, seq: int) -> str:
    return f"legacy-compaction:{session_id}:{seq}"


def check_header(header: dict[str, Any]) -> None:
    """§2.2 released v0/v1 codec: the exact key set, ``type`` and ``version`` of a v0 header."""
    check_header_keys(NAME, 0, header, HEADER_REQUIRED, HEADER_OPTIONAL, "the released v0 codec refuses")


def _with(obj: dict[str, Any], drop: tuple[str, ...], at: str, key: str, value: Any) -> dict[str, Any]:
    """A copy of ``obj`` without ``drop``, with ``key: value`` where ``at`` (one of the dropped
    keys) stood — so a legacy ``{turn, step, content, provenance, usage}`` becomes
    ``{turn, step, message, usage}``."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if k == at:
            out[key] = value
        elif k not in drop:
            out[k] = v
    return out


class _Normaliser:
    """Per-session state: the open legacy compaction group and the current turn's retry chains."""

    __slots__ = ("compaction_id", "retry_ids", "sid")

    def __init__(self, session_id: str, spill: UpgradeSpill | None = None) -> None:
        self.sid = session_id
        self.compaction_id: str | None = None
        # a chain (turn, step, provider, policy key: compact JSON) → its id. A v0 turn may name
        # a fresh chain on every line (issue 11 item 1): ``HeldMap`` keeps 4,096, then spills
        # to the run's spill (when the engine gave one)
        self.retry_ids = HeldMap("the retry chains of a turn", spill.strings if spill is not None else None)

    def refuse(self, detail: str, event: dict[str, Any]) -> UpgradeRefused:
        seq = event.get("seq")
        t = event.get("type")
        return UpgradeRefused(
            NAME, 0, detail, seq if type(seq) is int else None, t if isinstance(t, str) else None
        )

    def members(self, event: dict[str, Any], t: str, data: dict[str, Any]) -> None:
        allowed = MEMBERS.get(t)
        if allowed is not None and not data.keys() <= allowed:
            extra = sorted(data.keys() - allowed)
            raise self.refuse(f"unexpected payload members {chosen(extra)} in {chosen(t)} data", event)

    # -- one event ----------------------------------------------------------------------------

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        """The v1 form of one v0 event (the same object when nothing changes)."""
        t = event.get("type")
        if not isinstance(t, str):
            raise self.refuse("the event type is not a string", event)
        if t == "assistant/chunk":  # the bulk of a v0 log: one member check, nothing to rewrite
            data = event.get("data")
            if type(data) is not dict or not data.keys() <= MEMBERS[t]:
                self.members(event, t, data if type(data) is dict else {})
            return event
        if t in RETIRED_V0:
            raise self.refuse(f'retired event type "{t}" has no v1 form', event)
        if t not in SOURCE_TYPES and not t.startswith(_COMPACT):
            flag = (
                " (ignorable: true does not admit it on this edge)" if event.get("ignorable") is True else ""
            )
            raise self.refuse(f'event type "{t}" is not in the closed first-party v0 inventory{flag}', event)
        data = event.get("data")
        if type(data) is not dict:
            raise self.refuse(f"{chosen(t)} data is not an object", event)
        out = event
        if t.startswith(_COMPACT):
            renamed = _COMPACTION + t[len(_COMPACT) :]
            if renamed not in TARGET_TYPES:
                raise self.refuse(
                    f'legacy event type "{t}" renames to "{renamed}", which the v0 inventory does not know',
                    event,
                )
            out = {**event, "type": renamed}
            t = renamed
        handler = _HANDLERS.get(t)
        if handler is not None:
            out = handler(self, out, data)
            t = out["type"]
            data = out["data"]
        self.members(out, t, data)
        self.plugin_forms(out, t, data)
        return out

    def plugin_forms(self, event: dict[str, Any], t: str, data: dict[str, Any]) -> None:
        """§13.A item 4: a ``plugin`` message source may carry a ``form`` only from the six the
        released v0 codec admits, although the v0 writer writes any string without complaint."""
        for where, source in _message_sources(t, data):
            if type(source) is not dict or source.get("kind") != "plugin" or "form" not in source:
                continue
            form = source["form"]
            if not isinstance(form, str) or form not in PLUGIN_FORMS:
                raise self.refuse(
                    f"{t} {event.get('seq')} {where}source form must be one of {', '.join(PLUGIN_FORMS)} "
                    f"(got {dumps(form).decode('utf-8', 'replace')})",
                    event,
                )

    # -- handlers (each returns the event, replaced when it changed) ---------------------------

    def turn_start(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        self.retry_ids.clear()  # a retry chain is per turn/step: earlier turns' chains are closed
        if "trigger" not in data:
            return event
        trigger = data.get("trigger")
        turn: Any = data.get("turn")
        if (
            data.keys() != _TRIGGER_FORM
            or not is_safe_nonneg(turn)
            or turn < 1
            or type(trigger) is not dict
            or not isinstance(trigger.get("kind"), str)
            or not trigger["kind"]
        ):
            raise self.refuse(
                "malformed legacy turn/start: expected exactly {turn ≥ 1, trigger: {kind: non-empty}}",
                event,
            )
        return {**event, "data": {"turn": turn}}

    def turn_end(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        reason = data.get("reason")
        if type(reason) is not dict or not isinstance(reason.get("kind"), str):
            raise self.refuse("turn/end reason is not an object with a string kind", event)
        kind = reason["kind"]
        new: dict[str, Any]
        if kind == "aborted" and "reason" not in reason:
            if reason.keys() != {"kind"}:
                raise self.refuse(
                    f"unexpected members {sorted(reason.keys() - {'kind'})} in a legacy aborted reason", event
                )
            new = {"kind": "aborted", "reason": {"kind": "legacy"}}
        elif kind == "disposed":
            if reason.keys() != {"kind"}:
                raise self.refuse(
                    f"unexpected members {sorted(reason.keys() - {'kind'})} in a legacy disposed reason",
                    event,
                )
            new = {"kind": "aborted", "reason": {"kind": "disposed"}}
        elif kind == "error" and "error" not in reason:
            new = {"kind": "error", "error": self.legacy_error(event, reason)}
        else:
            return event
        return {**event, "data": {**data, "reason": new}}

    def legacy_error(self, event: dict[str, Any], reason: dict[str, Any]) -> dict[str, Any]:
        """``{kind, step, failure}`` or ``{kind, step, message, code?}`` → ``{message, code, …}``."""
        if not is_safe_nonneg(reason.get("step")):
            raise self.refuse("legacy error reason: step is not a non-negative integer", event)
        keys = reason.keys()
        if "failure" in reason:
            failure = reason["failure"]
            if keys != _ERROR_FAILURE or type(failure) is not dict:
                raise self.refuse(
                    "malformed legacy error reason: expected exactly {kind, step, failure}", event
                )
            fkeys = failure.keys()
            if not fkeys >= _FAILURE_REQUIRED or not fkeys <= _FAILURE_REQUIRED | _FAILURE_OPTIONAL:
                raise self.refuse(
                    "malformed legacy error failure: expected {message, code?, status?, "
                    f"providerRetryAfterMs?, requestId?}}, got {sorted(fkeys)}",
                    event,
                )
            message, code = failure["message"], failure.get("code", UNKNOWN_CODE)
            if not isinstance(message, str) or not isinstance(code, str):
                raise self.refuse("legacy error failure: message and code must be strings", event)
            error = {"message": message, "code": code}
            error.update((k, v) for k, v in failure.items() if k not in ("message", "code"))
            return error
        if not keys >= _ERROR_MESSAGE or not keys <= _ERROR_MESSAGE | {"code"}:
            raise self.refuse(
                f"malformed legacy error reason: expected {{kind, step, message, code?}}, got {sorted(keys)}",
                event,
            )
        message, code = reason["message"], reason.get("code", UNKNOWN_CODE)
        if not isinstance(message, str) or not isinstance(code, str):
            raise self.refuse("legacy error reason: message and code must be strings", event)
        return {"message": message, "code": code}

    def steering(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        if "message" in data:
            message = data["message"]
            if (
                data.keys() != _STEERING_WRAPPED
                or not is_safe_nonneg(data["turn"])
                or type(message) is not dict
            ):
                raise self.refuse(
                    "malformed steering/message: the wrapped form is exactly {turn, message: {…}}", event
                )
        else:
            if data.keys() != _STEERING_BARE or not is_safe_nonneg(data["turn"]):
                raise self.refuse(
                    "malformed steering/message: expected {turn, message} or {turn, content, source}, "
                    f"got {sorted(data.keys())}",
                    event,
                )
            message = {
                "id": legacy_message_id(self.sid, event["seq"]),
                "role": "user",
                "content": data["content"],
                "source": data["source"],
            }
        out = {**event, "type": "user/message", "data": message}
        if "surfaceOp" not in out:
            out["surfaceOp"] = "append"  # a steering message was appended to the history
        return self.user_message(out, message)

    def user_message(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        if (
            "id" not in data
            and "role" not in data
            and "message" not in data
            and "content" in data
            and "source" in data
        ):
            data = {"id": legacy_message_id(self.sid, event["seq"]), "role": "user", **data}
            event = {**event, "data": data}
        source = data.get("source")
        if (
            self.compaction_id is not None
            and type(source) is dict
            and source.get("kind") == "plugin"
            and source.get("plugin") == "compact"
            and "compactionId" not in source
        ):
            data = {**data, "source": {**source, "compactionId": self.compaction_id}}
            event = {**event, "data": data}
        return event

    def assistant_message(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        if "message" in data or "content" not in data or "provenance" not in data:
            return event
        provenance = data["provenance"]
        if type(provenance) is not dict:
            raise self.refuse("legacy assistant/message provenance is not an object", event)
        source = {"kind": "model", **{k: v for k, v in provenance.items() if k != "kind"}}
        message = {
            "id": legacy_message_id(self.sid, event["seq"]),
            "role": "assistant",
            "content": data["content"],
            "source": source,
        }
        first = next(k for k in data if k in _ASSISTANT_LEGACY)
        return {**event, "data": _with(data, _ASSISTANT_LEGACY, first, "message", message)}

    def tool_result(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        if "message" in data or not all(k in data for k in _TOOL_LEGACY):
            return event
        call_id, is_error = data["callId"], data["isError"]
        if not isinstance(call_id, str) or not call_id or type(is_error) is not bool:
            raise self.refuse(
                "legacy tool/result: callId must be a non-empty string and isError a boolean", event
            )
        op = event.get("surfaceOp")
        # A replacement inherits the id of the node at its start (a pre-identity result: its id
        # is the deterministic one of that seq; verification re-checks the content-only rule).
        anchor: Any = op.get("start") if type(op) is dict and op.get("op") == "replace" else event["seq"]
        if not is_safe_nonneg(anchor):
            raise self.refuse("legacy tool/result replacement has no usable start", event)
        message = {
            "id": legacy_message_id(self.sid, anchor),
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": data["content"],
                    "isError": is_error,
                }
            ],
            "source": {"kind": "tool", "callId": call_id},
        }
        first = next(k for k in data if k in _TOOL_LEGACY)
        return {**event, "data": _with(data, _TOOL_LEGACY, first, "message", message)}

    def request_header(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        if data.get("reason") == "fallback":
            raise self.refuse('request/header reason "fallback" is retired and has no v1 form', event)
        header = data.get("header")
        if type(header) is not dict or "messagePrefix" not in header:
            return event
        if not isinstance(header["messagePrefix"], list):
            raise self.refuse("malformed request/header: header.messagePrefix is not an array", event)
        trimmed = {k: v for k, v in header.items() if k != "messagePrefix"}
        return {**event, "data": {**data, "header": trimmed}}

    def retry(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        key = [data.get("turn"), data.get("step"), data.get("provider"), data.get("policyKey")]
        # decoded to a str of its own length: orjson's bytes keep their whole growth buffer (4 KiB)
        chain = dumps(key).decode("utf-8", "surrogatepass")
        retry_id = data.get("retryId")
        if isinstance(retry_id, str) and retry_id:
            self.retry_ids.put(chain, retry_id)
            return event
        if "retryId" in data:
            return event  # present but not an id: not a legacy record, left to validation
        assigned = self.retry_ids.get(chain) or legacy_retry_id(self.sid, event["seq"])
        self.retry_ids.put(chain, assigned)
        return {**event, "data": {**data, "retryId": assigned}}

    def compaction_start(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        existing = data.get("compactionId")
        if isinstance(existing, str) and existing:
            self.compaction_id = existing
            return event
        if "compactionId" in data:
            return event
        self.compaction_id = legacy_compaction_id(self.sid, event["seq"])
        return {**event, "data": {**data, "compactionId": self.compaction_id}}

    def compaction_member(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        group = self.compaction_id
        if event["type"] == "compaction/end":
            self.compaction_id = None
        if group is None or "compactionId" in data:
            return event
        return {**event, "data": {**data, "compactionId": group}}

    def end_seed(self, event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        self.compaction_id = None  # an inherited unfinished compaction expires at the seed marker
        return event


_HANDLERS = {
    "turn/start": _Normaliser.turn_start,
    "turn/end": _Normaliser.turn_end,
    "steering/message": _Normaliser.steering,
    "user/message": _Normaliser.user_message,
    "assistant/message": _Normaliser.assistant_message,
    "tool/result": _Normaliser.tool_result,
    "request/header": _Normaliser.request_header,
    "llm/retry": _Normaliser.retry,
    "compaction/start": _Normaliser.compaction_start,
    "compaction/summary": _Normaliser.compaction_member,
    "compaction/end": _Normaliser.compaction_member,
    "session/end-seed": _Normaliser.end_seed,
}


class V0ToV1(StepShell, name=NAME, source=0):
    """The Step (see ``sesstool.core.upgrade.Step``)."""

    check = staticmethod(check_header)

    def events(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        norm = _Normaliser(header["id"], self.spill)
        event = norm.event
        for rec in recs:
            events = rec.events
            if len(events) == 1:
                ev = events[0]
                new = released_envelope(event(ev))
                yield rec if new is ev else Rec([new], None)
                continue
            # A packed chunk row: its members are assistant/chunk events, which never change.
            # Checked one at a time: a row's events are never all held (chunk_rows.ChunkRow).
            if all(event(ev) is ev for ev in events):
                yield rec
            else:  # pragma: no cover - chunks are never rewritten
                yield Rec([event(ev) for ev in events], None)


STEP = V0ToV1()


def v0_reader_view(event: dict[str, Any], session_id: str | None) -> dict[str, Any] | None:
    """How a v0 reader sees one legacy surface event in memory (§1.3: the v0→v1 normalisations
    are "the same ones v0 readers already applied"): ``steering/message`` as a ``user/message``,
    pre-identity messages wrapped with their deterministic ids. None when the event is not in
    such a form, or is malformed (the scanner then reports its shape)."""
    data = event.get("data")
    if type(data) is not dict:
        return None
    normaliser = _Normaliser(session_id or "")
    views = {
        "steering/message": normaliser.steering,
        "user/message": normaliser.user_message,
        "assistant/message": normaliser.assistant_message,
        "tool/result": normaliser.tool_result,
    }
    view = views.get(event.get("type"))  # type: ignore[arg-type]
    if view is None:
        return None
    try:
        out = view(event, data)
    except (UpgradeRefused, KeyError, TypeError):
        return None
    return out if out is not event else None
