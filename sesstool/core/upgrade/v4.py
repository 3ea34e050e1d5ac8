"""The step v3 → v4 (spec §1.3 "v3 → v4"): tool-role results, direct message sources, namespaced
extensions.

* Header: ``version`` 4, nothing else.
* ``tool/result``: the message is lifted — role ``user`` → ``tool``; the single ``tool-result``
  block's ``toolCallId``, ``content`` and optional ``isError`` become message-level; the wrapper
  is removed; its other fields become ``plugin:result:<field>`` and other message fields
  ``plugin:message:<field>``. Key order (§13.A item 3): ``role, source, toolCallId, content,
  isError?, id``, then the ``plugin:message:*`` fields, then the ``plugin:result:*`` ones.
* Message sources (user/system/assistant/tool messages, ``agent/inbox/spliced.data.inserted[]``,
  ``session/title-llm-request.data.messages[]``): ``{kind:'plugin', plugin:P}`` becomes a direct
  kind (``PLUGIN_KINDS``, the system-prompt rule, ``FIRST_PARTY_PRODUCERS``, else
  ``plugin:<P>``); direct kinds are kept.
* Unknown content tags (and stream ``blockType`` / ``block.type``) → ``plugin:<type>``; unknown
  ignorable event types → ``plugin:<type>`` with the payload untouched; unknown required types
  refuse.
* An evidenced interrupted turn (open turn, no open step, a non-empty ``next-turn``
  ``agent/inbox/spliced`` immediately before the next numbered ``turn/start``) is closed with an
  inserted ``turn/end {kind:'interrupted'}``; later seqs and their references shift by one per
  insertion. Without such a turn the edge is seq-preserving and untouched records keep their
  bytes.
* Refusals: unknown required types, a request tool definition with its own ``deferLoading``,
  nested / retired ``tool-result`` blocks, a malformed canonical tool-result wrapper, a malformed
  message source, a delivery marker claiming generation 4.

* Missing parent ``subagent/catalog`` facts (§13.A item 5): the step is given the evidence of
  the session's subagent children (``ChildFact``: id, header ``createdAt``, the child's own
  ``subagent/descriptor`` events) — the pure core reads no other file; the engine finds the
  children (docs/format.md "Migration"). After the last event, one ``subagent/catalog`` is
  appended per child the log does not already catalogue after its inherited cut, ordered by
  (``childCreatedAt``, ``childId``), at the time of the last event (the header's ``createdAt``
  when there is none): data ``{version:1, childId, childCreatedAt, mode:"unknown"}`` for a
  child without exactly one own descriptor of a known version (1–3), else ``{version:0,
  childId, childCreatedAt, mode, label?}`` (a v1 descriptor's mode is ``continuable``). A
  catalogue entry that contradicts its child (another ``childCreatedAt``, mode or label), a
  duplicated entry, or an invalid descriptor refuses. Without evidence (``children=()``)
  nothing is appended.

Decisions where the spec is imprecise: fixtures/migrate/v3-to-v4/README.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sesstool.core.header import is_safe_nonneg
from sesstool.core.humanize import chosen_repr
from sesstool.core.upgrade import Rec, StepShell, UpgradeRefused, UpgradeSpill, check_header_keys
from sesstool.core.upgrade.catalog import Catalogued
from sesstool.core.upgrade.catalog import ChildFact as ChildFact  # the engine's evidence of a child
from sesstool.core.upgrade.remap import Inserted
from sesstool.core.vocabulary import KNOWN

NAME = "session-format-v3-to-v4"

HEADER_REQUIRED = frozenset({"type", "version", "id", "createdAt", "isSeeded", "delegationDepth"})
HEADER_OPTIONAL = frozenset({"cwd", "parentSession", "origin", "agentPreset"})

SOURCE_TYPES: frozenset[str] = KNOWN[3]
V3_BLOCK_TYPES = frozenset({"text", "reasoning", "image", "file", "tool-call"})
RETIRED_BLOCK = "tool-result"

SYSTEM_PROMPT_PLUGIN = "@deepseek-ai/dsh-system-prompt"
PLUGIN_KINDS = {
    "compact": "compact-checkpoint",
    "tools-code-mode": "ptc-mode",
    "tools-ptc": "ptc-mode",
    "dsh-compaction-basic": "compact-basic",
}
# First-party producers whose plugin string becomes the kind unchanged. §1.3 mentions "a fixed
# list" without naming it; these are the names the v3-to-v4 package README [ZS@a18d8a9]
# ("Message-source conversion") lists (see fixtures/migrate/v3-to-v4/README.md).
FIRST_PARTY_PRODUCERS = frozenset(
    {
        "agent-instructions",
        "session-reference",
        "team-message",
        "goal",
        "skill-invocation",
        "skill-catalog",
        "coordinator",
        "subagent-report",
        "subagent-settled",
        "webhook",
        "agent-message",
        "model-selection",
        "plan-mode",
        "time-context",
        "tmux-context",
        "user-approval",
        "repeat-tool-reminder",
        "tool-cordis",
        "cordis-host-runner",
        "tool-goal",
        "tool-jobs",
        "hooks-codex",
        "hooks-claude-code",
        "schedule",
        "dsh-session-title-llm",
    }
)

DELIVERY = "session-log-deepseek/delivery-accepted"
_WRAPPER_KEYS = ("type", "toolCallId", "content", "isError")
_MESSAGE_KEYS = ("id", "role", "source", "content")
_MESSAGE_EVENTS = frozenset({"system/message", "assistant/message", "tool/result"})
_STREAM_EVENTS = frozenset({"assistant/message", "assistant/attempt"})


def check_header(header: dict[str, Any]) -> None:
    """§2.2 v2+ exact key set of a v3 header."""
    check_header_keys(NAME, 3, header, HEADER_REQUIRED, HEADER_OPTIONAL, "a v3 header does not allow")


def direct_kind(plugin: str, role: object) -> str:
    """The v4 source kind of a v3 ``{kind:'plugin', plugin}`` source (§1.3)."""
    if plugin == SYSTEM_PROMPT_PLUGIN:
        return "system-prompt" if role == "system" else "runtime-context"
    mapped = PLUGIN_KINDS.get(plugin)
    if mapped is not None:
        return mapped
    if plugin in FIRST_PARTY_PRODUCERS:
        return plugin
    return f"plugin:{plugin}"


class _Refuse:
    """Builds refusals naming the event being converted."""

    __slots__ = ("seq", "type")

    def __init__(self) -> None:
        self.seq: int | None = None
        self.type: str | None = None

    def __call__(self, detail: str) -> UpgradeRefused:
        return UpgradeRefused(NAME, 3, detail, self.seq, self.type)


def _content(blocks: Any, where: str, refuse: _Refuse) -> Any:
    """Content blocks with unknown tags namespaced; a retired tool-result block refuses."""
    if type(blocks) is not list:
        raise refuse(f"{where} is not an array of content blocks")
    out: list[Any] | None = None
    for i, block in enumerate(blocks):
        tag = block.get("type") if type(block) is dict else None
        if not isinstance(tag, str):
            raise refuse(f"{where}[{i}] is not a content block with a string type")
        if tag in V3_BLOCK_TYPES:
            continue
        if tag == RETIRED_BLOCK:
            raise refuse(
                f"{where}[{i}] is a tool-result block outside the canonical wrapper "
                "(nested results have no v4 form)"
            )
        if out is None:
            out = list(blocks)
        out[i] = {**block, "type": f"plugin:{tag}"}
    return blocks if out is None else out


def _source(source: Any, role: object, where: str, refuse: _Refuse) -> Any:
    if type(source) is not dict:
        raise refuse(f"{where}.source is not an object")
    kind = source.get("kind")
    if not isinstance(kind, str) or not kind:
        raise refuse(f"{where}.source.kind is not a non-empty string")
    if kind != "plugin":
        return source
    plugin = source.get("plugin")
    if not isinstance(plugin, str):
        raise refuse(f"{where}.source is a plugin source without a string plugin")
    new_kind = direct_kind(plugin, role)
    return {k: (new_kind if k == "kind" else v) for k, v in source.items() if k != "plugin"}


def _message(message: Any, where: str, refuse: _Refuse) -> Any:
    """Source and content of one message (the same object when nothing changes)."""
    if type(message) is not dict:
        raise refuse(f"{where} is not a message object")
    source = _source(message.get("source"), message.get("role"), where, refuse)
    content = _content(message.get("content"), f"{where}.content", refuse)
    if source is message["source"] and content is message["content"]:
        return message
    return {**message, "source": source, "content": content}


def _lift(message: Any, refuse: _Refuse) -> dict[str, Any]:
    """The v4 tool message of a canonical v3 tool result (§1.3, §4.3)."""
    where = "tool/result data.message"
    if type(message) is not dict:
        raise refuse(f"{where} is not an object")
    mid = message.get("id")
    source = message.get("source")
    call_id = source.get("callId") if type(source) is dict else None
    content = message.get("content")
    if not isinstance(mid, str) or not mid:
        raise refuse(f"malformed tool result: {where}.id is not a non-empty string")
    if message.get("role") != "user":
        raise refuse(f"malformed tool result: {where}.role is {chosen_repr(message.get('role'))}, not 'user'")
    if (
        type(source) is not dict
        or source.get("kind") != "tool"
        or not isinstance(call_id, str)
        or not call_id
    ):
        raise refuse(f"malformed tool result: {where}.source is not {{kind:'tool', callId}}")
    if type(content) is not list or len(content) != 1 or type(content[0]) is not dict:
        raise refuse(f"malformed tool result: {where}.content is not exactly one tool-result block")
    block = content[0]
    if block.get("type") != RETIRED_BLOCK:
        raise refuse(f"malformed tool result: {where}.content[0] is not a tool-result block")
    if block.get("toolCallId") != call_id:
        raise refuse(
            f"malformed tool result: the tool-result block's toolCallId is not {chosen_repr(call_id)}"
        )
    if type(block.get("content")) is not list:
        raise refuse("malformed tool result: the tool-result block's content is not an array")
    if "isError" in block and type(block["isError"]) is not bool:
        raise refuse("malformed tool result: the tool-result block's isError is not a boolean")
    # §13.A item 3: the real edge builds the message as role, source, toolCallId, content,
    # isError?, id, then the message's extra fields, then the wrapper's.
    lifted: dict[str, Any] = {
        "role": "tool",
        "source": source,
        "toolCallId": call_id,
        "content": _content(block["content"], f"{where}.content", refuse),
    }
    if "isError" in block:
        lifted["isError"] = block["isError"]
    lifted["id"] = mid
    for k, v in message.items():
        if k not in _MESSAGE_KEYS:
            lifted[f"plugin:message:{k}"] = v
    for k, v in block.items():
        if k not in _WRAPPER_KEYS:
            lifted[f"plugin:result:{k}"] = v
    return lifted


def _stream(stream: Any, where: str, refuse: _Refuse) -> Any:
    """Embedded stream records: block-start ``blockType`` and block-end ``block.type`` tags."""
    if type(stream) is not list:
        return stream
    out: list[Any] | None = None
    for i, rec in enumerate(stream):
        chunk = rec.get("chunk") if type(rec) is dict and rec.get("type") == "chunk" else None
        if type(chunk) is not dict:
            continue
        kind = chunk.get("type")
        new_chunk = chunk
        if kind == "block-start":
            tag = chunk.get("blockType")
            if not isinstance(tag, str):
                raise refuse(f"{where}[{i}] block-start blockType is not a string")
            if tag == RETIRED_BLOCK:
                raise refuse(f"{where}[{i}] starts a tool-result block, which v4 cannot represent")
            if tag not in V3_BLOCK_TYPES:
                new_chunk = {**chunk, "blockType": f"plugin:{tag}"}
        elif kind == "block-end":
            block = _content([chunk.get("block")], f"{where}[{i}].chunk.block", refuse)[0]
            if block is not chunk.get("block"):
                new_chunk = {**chunk, "block": block}
        if new_chunk is not chunk:
            if out is None:
                out = list(stream)
            out[i] = {**rec, "chunk": new_chunk}
    return stream if out is None else out


def convert_data(t: str, data: Any, refuse: _Refuse) -> Any:
    """The v4 payload of a known v3 event (the same object when nothing changes)."""
    if type(data) is not dict:
        return data
    if t == "user/message":
        return _message(data, "user/message data", refuse)
    new = data
    if t in _MESSAGE_EVENTS:
        message = data.get("message")
        if t == "tool/result":
            message = _lift(message, refuse)
        message = _message(message, f"{t} data.message", refuse)
        if message is not data.get("message"):
            new = {**new, "message": message}
    if t in _STREAM_EVENTS and "stream" in data:
        stream = _stream(data["stream"], f"{t} data.stream", refuse)
        if stream is not data["stream"]:
            new = {**new, "stream": stream}
    elif t == "agent/inbox/spliced" or t == "session/title-llm-request":
        key = "inserted" if t == "agent/inbox/spliced" else "messages"
        members = data.get(key)
        if type(members) is list:
            converted = [_message(m, f"{t} data.{key}[{i}]", refuse) for i, m in enumerate(members)]
            if any(a is not b for a, b in zip(converted, members, strict=True)):
                new = {**new, key: converted}
    elif t == "team/message/queued":
        message = data.get("message")
        if type(message) is dict and "content" in message:
            content = _content(message["content"], f"{t} data.message.content", refuse)
            if content is not message["content"]:
                new = {**new, "message": {**message, "content": content}}
    elif t == "compaction/summary" or t == "tool/ptc-dispatch":
        for key in ("summary", "rawOutput") if t == "compaction/summary" else ("content",):
            if key in data:
                content = _content(data[key], f"{t} data.{key}", refuse)
                if content is not data[key]:
                    new = {**new, key: content}
    elif t == "request/header":
        header = data.get("header")
        tools = header.get("tools") if type(header) is dict else None
        if type(tools) is list:
            for i, tool in enumerate(tools):
                if type(tool) is dict and "deferLoading" in tool:
                    raise refuse(
                        f"request/header header.tools[{i}] has its own deferLoading, which only v4 defines"
                    )
    elif t == DELIVERY:
        version = data.get("sessionFormatVersion", 0)
        if not is_safe_nonneg(version):
            raise refuse("delivery marker sessionFormatVersion is not a non-negative integer")
        if version == 4:
            raise refuse(
                "the delivery marker claims generation 4, which advancing the header must not activate"
            )
    return new


class _Renumber:
    """Old → new seqs after inserted closers: one change point per insertion (``remap.Inserted``:
    past ``remap.HELD_AT`` of them in the run's spill)."""

    __slots__ = ("points",)

    def __init__(self, spill: UpgradeSpill | None) -> None:
        self.points = Inserted(spill)  # old seqs before which one event was inserted

    def __call__(self, old: Any) -> Any:
        if type(old) is not int:
            return old
        return old + self.points.before(old)

    def seqs(self, values: Any) -> Any:
        return [self(v) for v in values] if type(values) is list else values

    def event(self, ev: dict[str, Any], t: str) -> dict[str, Any]:
        """The event with its seq and declared references remapped (known types only: an
        unknown ignorable event keeps its opaque payload and surface metadata)."""
        out = {**ev, "seq": self(ev["seq"])}
        if t.startswith("plugin:"):
            return out
        if "sourceEventSeqs" in out:
            out["sourceEventSeqs"] = self.seqs(out["sourceEventSeqs"])
        op = out.get("surfaceOp")
        if type(op) is dict:
            out["surfaceOp"] = {k: (self(v) if k in ("startSeq", "endSeq") else v) for k, v in op.items()}
        data = out.get("data")
        if type(data) is not dict:
            return out
        if t == "command/done" and "sourceEventSeq" in data:
            out["data"] = {**data, "sourceEventSeq": self(data["sourceEventSeq"])}
        elif t in ("compaction/summary", "compaction/prune"):
            new = dict(data)
            rng = data.get("shadowedRange")
            if type(rng) is dict:
                new["shadowedRange"] = {k: (self(v) if k in ("start", "end") else v) for k, v in rng.items()}
            if "shadowedSeqs" in data:
                new["shadowedSeqs"] = self.seqs(data["shadowedSeqs"])
            out["data"] = new
        elif t in ("session/title", "session/title-llm-request") and "messageSeqs" in data:
            out["data"] = {**data, "messageSeqs": self.seqs(data["messageSeqs"])}
        return out


class _Run:
    """The state of one v3 → v4 pass (§1.3 "v3 → v4", §13.A item 5): the open turn/step and
    the splice before (the evidenced interrupted turn), the renumbering, the catalogue entries
    after the inherited cut."""

    __slots__ = (
        "after_splice",
        "catalogued",
        "last_time",
        "next_seq",
        "open_step",
        "open_turn",
        "refuse",
        "renumber",
        "step",
    )

    def __init__(self, step: V3ToV4, header: dict[str, Any]) -> None:
        self.step = step
        self.refuse = _Refuse()
        self.renumber = _Renumber(step.spill)
        self.open_turn: Any = None
        self.open_step: Any = None
        self.after_splice = False  # the previous event was a non-empty next-turn inbox splice
        self.last_time: Any = header.get("createdAt")
        self.next_seq = 0
        # what the completion needs of the catalogue entries after the inherited cut
        self.catalogued = Catalogued(step.children, step.spill) if step.children else None

    def event(self, ev: dict[str, Any], out: list[dict[str, Any]]) -> bool:
        """Append the v4 form of ``ev`` to ``out`` (a closer first when one is inserted before
        it); whether anything changed."""
        refuse = self.refuse
        changed = False
        t = ev.get("type")
        seq = ev.get("seq")
        refuse.seq = seq if type(seq) is int else None
        refuse.type = t if isinstance(t, str) else None
        if not isinstance(t, str):
            raise refuse("the event type is not a string")
        if type(seq) is not int:
            raise refuse("the event has no integer seq")
        data = ev.get("data")
        new = ev
        if t not in SOURCE_TYPES:
            if ev.get("ignorable") is not True:
                raise refuse(f'event type "{t}" is unknown to format v3 and not marked ignorable')
            t = f"plugin:{t}"
            new = {**ev, "type": t}
        else:
            converted = convert_data(t, data, refuse)
            if converted is not data:
                new = {**ev, "data": converted}
        renumber = self.renumber
        if t == "turn/start":
            turn = data.get("turn") if type(data) is dict else None
            open_turn = self.open_turn
            if (
                self.after_splice
                and type(open_turn) is int
                and self.open_step is None
                and type(turn) is int
                and turn == open_turn + 1
            ):
                out.append(
                    {
                        "type": "turn/end",
                        "seq": renumber(seq),
                        "time": ev.get("time"),
                        "data": {"turn": open_turn, "reason": {"kind": "interrupted"}},
                    }
                )
                renumber.points.add(seq)
                changed = True
            self.open_turn, self.open_step = turn, None
        elif t == "turn/end":
            self.open_turn = self.open_step = None
        elif t == "step/start":
            self.open_step = True
        elif t == "step/end":
            self.open_step = None
        self.after_splice = (
            t == "agent/inbox/spliced"
            and type(data) is dict
            and data.get("target") == "next-turn"
            and type(data.get("inserted")) is list
            and len(data["inserted"]) > 0
        )
        catalogued = self.catalogued
        if (
            catalogued is not None
            and t == "session/end-seed"
            and type(data) is dict
            and data.get("inherited") is True
        ):
            catalogued.cut()  # entries before the cut belong to the parent session
        elif catalogued is not None and t == "subagent/catalog":
            catalogued.add(data)
        self.last_time = ev.get("time")
        if renumber.points:
            new = renumber.event(new, t)
        self.next_seq = new["seq"] + 1
        if new is not ev:
            changed = True
        out.append(new)
        return changed

    def finish(self) -> Iterator[Rec]:
        """After the last event: the missing catalogue entries (§13.A item 5)."""
        if self.catalogued is not None:
            refuse = _Refuse()
            refuse.type = "subagent/catalog"
            yield from self.catalogued.complete(self.next_seq, self.last_time, refuse)


class V3ToV4(StepShell, name=NAME, source=3):
    """The Step (see ``sesstool.core.upgrade.Step``)."""

    check = staticmethod(check_header)

    def __init__(self, children: tuple[ChildFact, ...] = ()) -> None:
        self.children = tuple(sorted(children, key=lambda c: (c.created_at, c.child_id)))

    def with_children(self, children: tuple[ChildFact, ...]) -> V3ToV4:
        """This step with the evidence of the session's subagent children (its spill kept)."""
        return V3ToV4(children).with_spill(self.spill)

    def events(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        run = self.start(header)
        event = run.event
        for rec in recs:
            out: list[dict[str, Any]] = []
            changed = False
            for ev in rec.events:
                if event(ev, out):
                    changed = True
            yield Rec(out, None) if changed else rec
        yield from run.finish()

    def start(self, header: dict[str, Any]) -> _Run:
        """The pass's state, fed one event at a time (``events``; the fused pass of
        ``core.upgrade.fused`` drives it directly)."""
        return _Run(self, header)


STEP = V3ToV4()
