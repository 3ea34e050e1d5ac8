"""The step v2 → v3 (spec §1.3 "v2 → v3", §3, §5; the decisions where the spec is silent
are listed here and in fixtures/migrate/v2-to-v3/README.md).

* Header: ``version`` 3; the exact preset id ``code`` becomes ``ptc`` (header ``agentPreset``
  and every ``agent-preset/selected.data.agentPreset``).
* System head: right after the first ``step/start`` an empty ``system/message`` is appended
  (``content: []``). At every ``request/header`` the prompt ``data.header.system`` (absent =
  ``""``) is compared with the current one; when it differs a ``system/message`` replacing
  exactly the current head (``surfaceOp {op:'replace', startSeq:h, endSeq:h}``,
  ``sourceEventSeqs: [h]``) is inserted right before the request header. Every request header
  loses ``header.system``. A synthetic message carries the open step's turn/step, the anchor's
  time, ``role: 'system'``, source ``{kind:'plugin', plugin:'@deepseek-ai/dsh-system-prompt'}``,
  content ``[]`` for an empty prompt else one text block, and the id ``v2-to-v3-system-`` +
  sha256 hex of the compact JSON ``["session-format-v2-to-v3", header.id, anchorSeq,
  anchorType]`` (anchor = the source ``step/start`` or the changed ``request/header``, with its
  source seq). Member order (§13.A item 2, the published v2-to-v3 package): data ``turn,
  step, message``; message ``id, role, source, content``; envelope ``type, seq, time, data,
  surfaceOp`` then, for a replacing message, ``sourceEventSeqs`` — *after* ``surfaceOp``,
  unlike the writer's order for ordinary events.
* Renumbering (inserts only) with every declared reference remapped (shared with v1 → v2); the
  inherited cut is the remapped last tagged ``session/end-seed``.
* PTC: ``tool/code-dispatch[-start]`` → ``tool/ptc-dispatch[-start]``; the plugin attribution
  ``tools-code-mode`` → ``tools-ptc`` where ``source.kind`` is ``plugin`` in
  ``user/message.data.source``, ``agent/inbox/spliced.data.inserted[].source`` and
  ``session/title-llm-request.data.messages[].source``.
* Canonical envelopes: ``{op:'replace', start, end}`` → ``{op:'replace', startSeq, endSeq}``;
  ``request/header.data.header.tools: []`` and ``adapterDefaults: {}`` are omitted.
* Refusals: an event type outside the closed v2 inventory (even ignorable); a v2 source already
  using a v3 PTC tag; a surface event before the first step; a prompt change outside an open
  step; a generated id equal to a source message id (either order; the five message slots); a
  ``session-log-deepseek/delivery-accepted`` claiming ``sessionFormatVersion`` 3; a content
  block kind other than text/reasoning/image/file/tool-call/tool-result in the audited
  positions; a ``tool/result`` with ``data.error`` whose block ``isError`` is not true; an
  ``assistant/message`` with ``sourceEventSeqs`` (forbidden in v3); ``isSeeded`` disagreeing
  with the tagged markers.

Streaming: every event is decided when it arrives; the state is the current head, prompt and
open step, the anchors of the generated ids (a seq each), the source ids that carry the
generated prefix, and the SeqRemap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from sesstool.core.held_map import HeldMap
from sesstool.core.humanize import chosen, chosen_repr
from sesstool.core.jsonline import dumps
from sesstool.core.upgrade import Rec, StepShell, UpgradeRefused, UpgradeSpill, each_event
from sesstool.core.upgrade.remap import Refuse, SeqRemap, remap_references
from sesstool.core.vocabulary import KNOWN, PTC_DISPATCH, SURFACE

NAME = "session-format-v2-to-v3"
INVENTORY_V2: frozenset[str] = KNOWN[2]
SYSTEM_PLUGIN = "@deepseek-ai/dsh-system-prompt"
ID_PREFIX = "v2-to-v3-system-"
BLOCK_KINDS = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})
_PTC_TYPES = {
    "tool/code-dispatch": "tool/ptc-dispatch",
    "tool/code-dispatch-start": "tool/ptc-dispatch-start",
}
_SURFACE_V2 = SURFACE[2]
_REPLACE_KEYS = frozenset({"op", "start", "end"})


def system_message_id(session_id: Any, anchor_seq: int, anchor_type: str) -> str:
    """``v2-to-v3-system-`` + sha256 hex of the compact JSON array (§1.3, E9)."""
    payload = dumps(["session-format-v2-to-v3", session_id, anchor_seq, anchor_type])
    return ID_PREFIX + hashlib.sha256(payload).hexdigest()


def _code_to_ptc(source: Any) -> Any:
    """A plugin attribution ``tools-code-mode`` → ``tools-ptc`` (only with kind ``plugin``)."""
    if (
        isinstance(source, dict)
        and source.get("kind") == "plugin"
        and source.get("plugin") == "tools-code-mode"
    ):
        return {**source, "plugin": "tools-ptc"}
    return source


def _renamed_sources(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [
        {**item, "source": _code_to_ptc(item["source"])}
        if isinstance(item, dict) and "source" in item
        else item
        for item in items
    ]


class _Run:
    def __init__(self, header: dict[str, Any], spill: UpgradeSpill | None = None) -> None:
        self.session_id = header.get("id")
        self.seeded = header.get("isSeeded") is True
        self.tagged = False
        self.remap = SeqRemap(spill)
        self.next = 0
        self.head: int | None = None  # target seq of the current protected head
        self.prompt = ""
        self.open_turn: Any = None
        self.open_step: Any = None
        # the ids generated so far (the first step/start's anchor, then every changed
        # request/header's id) and the source ids that carry the generated prefix: a log may
        # hold any number of either (issue 11 item 1), so both are ``HeldMap``s (4,096 in
        # memory, then a spill file), and a source id is looked up once, never compared with
        # every generated id (n² hashes before)
        self.head_anchor: int | None = None
        tables = spill.strings if spill is not None else None
        self.generated_ids = HeldMap("the system message ids a v2→v3 migration generated", tables)
        self.prefixed_source_ids = HeldMap("the source message ids that carry the generated prefix", tables)

    def refuse(self, detail: str, seq: int | None = None, event_type: str | None = None) -> UpgradeRefused:
        return UpgradeRefused(NAME, 2, detail, seq, event_type)

    # -- audits

    def audit_blocks(self, blocks: Any, path: str, refuse: Refuse) -> None:
        if not isinstance(blocks, list):
            raise refuse(f"{path} is not a content array")
        for i, block in enumerate(blocks):
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str):
                raise refuse(f"{path}[{i}] is not a content block with a type")
            if kind not in BLOCK_KINDS:
                raise refuse(f'unknown content block kind "{kind}" at {path}[{i}]')
            if kind == "tool-result" and "content" in block:
                self.audit_blocks(block["content"], f"{path}[{i}].content", refuse)

    def audit_stream(self, stream: Any, path: str, refuse: Refuse) -> None:
        if not isinstance(stream, list):
            return
        for i, record in enumerate(stream):
            if not isinstance(record, dict) or record.get("type") != "chunk":
                continue
            chunk = record.get("chunk")
            if not isinstance(chunk, dict):
                continue
            if chunk.get("type") == "block-start":
                kind = chunk.get("blockType")
                if kind not in BLOCK_KINDS:
                    raise refuse(f"unknown content block kind {_q(kind)} at {path}[{i}].chunk.blockType")
            elif chunk.get("type") == "block-end":
                self.audit_blocks([chunk.get("block")], f"{path}[{i}].chunk.block", refuse)

    def message_id(self, mid: Any, path: str, refuse: Refuse) -> None:
        if not isinstance(mid, str) or not mid.startswith(ID_PREFIX):
            return
        if self.generated(mid):
            raise refuse(f"message id {chosen(mid)} at {path} collides with a generated system message id")
        self.prefixed_source_ids.put(mid, "")

    def generated(self, mid: str) -> bool:
        """Whether ``mid`` is one of the ids this pass generated so far."""
        if self.head_anchor is None:
            return False
        if mid == system_message_id(self.session_id, self.head_anchor, "step/start"):
            return True
        return mid in self.generated_ids

    def audit(self, t: str, data: Any, refuse: Refuse) -> None:
        """Content kinds, message ids and the event-local refusals of §1.3."""
        if not isinstance(data, dict):
            return
        if t == "user/message":
            self.message_id(data.get("id"), "data.id", refuse)
            self.audit_blocks(data.get("content"), "data.content", refuse)
        elif t in ("assistant/message", "tool/result"):
            message = data.get("message")
            if isinstance(message, dict):
                self.message_id(message.get("id"), "data.message.id", refuse)
                self.audit_blocks(message.get("content"), "data.message.content", refuse)
            if t == "assistant/message":
                self.audit_stream(data.get("stream"), "data.stream", refuse)
            elif "error" in data:
                content = message.get("content") if isinstance(message, dict) else None
                block = content[0] if isinstance(content, list) and content else None
                if not isinstance(block, dict) or block.get("isError") is not True:
                    raise refuse(
                        "tool/result carries data.error but its tool-result block isError is not true"
                    )
        elif t == "assistant/attempt":
            self.audit_stream(data.get("stream"), "data.stream", refuse)
        elif t in ("agent/inbox/spliced", "session/title-llm-request"):
            key = "inserted" if t == "agent/inbox/spliced" else "messages"
            items = data.get(key)
            if isinstance(items, list):
                for i, item in enumerate(items):
                    if isinstance(item, dict):
                        self.message_id(item.get("id"), f"data.{key}[{i}].id", refuse)
                        if "content" in item:
                            self.audit_blocks(item["content"], f"data.{key}[{i}].content", refuse)
        elif t == "team/message/queued":
            message = data.get("message")
            if isinstance(message, dict) and "content" in message:
                self.audit_blocks(message["content"], "data.message.content", refuse)
        elif t == "compaction/summary":
            if "summary" in data:
                self.audit_blocks(data["summary"], "data.summary", refuse)
            if isinstance(data.get("rawOutput"), list):
                self.audit_blocks(data["rawOutput"], "data.rawOutput", refuse)
        elif t == "tool/code-dispatch":
            if isinstance(data.get("content"), list):
                self.audit_blocks(data["content"], "data.content", refuse)
        elif t == "session-log-deepseek/delivery-accepted":
            version = data.get("sessionFormatVersion")
            if not isinstance(version, bool) and isinstance(version, int | float) and version == 3:
                raise refuse("a v2 delivery marker claims generation 3 (sessionFormatVersion 3)")

    # -- events

    def event(self, event: dict[str, Any], raw: bytes | None) -> Iterator[Rec]:
        t = event.get("type")
        seq = event.get("seq")
        if type(seq) is not int:
            raise self.refuse(f"event without an integer seq: {chosen_repr(t)}")
        if isinstance(t, str) and t in PTC_DISPATCH:
            raise self.refuse(f'a v2 source already uses the v3 PTC tag "{t}"', seq, t)
        if not isinstance(t, str) or t not in INVENTORY_V2:
            raise self.refuse(
                f"format v2 contains unknown event type {_q(t)}; the v2→v3 edge refuses every event "
                "outside its closed first-party inventory, even one marked ignorable",
                seq,
                t if isinstance(t, str) else None,
            )

        def refuse(detail: str) -> UpgradeRefused:
            return self.refuse(detail, seq, t)

        data = event.get("data")
        self.audit(t, data, refuse)
        d: dict[str, Any] = data if isinstance(data, dict) else {}
        touched = False
        if t in _SURFACE_V2 and self.head is None:
            raise refuse("a surface event before the first step: the system head must be surface node 0")
        if t == "assistant/message" and "sourceEventSeqs" in event:
            raise refuse("assistant/message carries sourceEventSeqs, which format v3 forbids")
        if t == "session/end-seed" and d.get("inherited") is True:
            if not self.seeded:
                raise refuse("an unseeded Session contains an inherited end-seed marker")
            self.tagged = True
        if t == "request/header":
            event, touched, system = self.request_header(event, d, refuse)
            if system is not None:
                yield system
        elif t in _PTC_TYPES:
            event = {**event, "type": _PTC_TYPES[t]}
            touched = True
        elif t == "agent-preset/selected" and d.get("agentPreset") == "code":
            event = {**event, "data": {**d, "agentPreset": "ptc"}}
            touched = True
        elif t == "user/message":
            source = _code_to_ptc(d.get("source"))
            if source is not d.get("source"):
                event = {**event, "data": {**d, "source": source}}
                touched = True
        elif t in ("agent/inbox/spliced", "session/title-llm-request"):
            key = "inserted" if t == "agent/inbox/spliced" else "messages"
            if key in d:
                items = _renamed_sources(d[key])
                if items != d[key]:
                    event = {**event, "data": {**d, key: items}}
                    touched = True
        yield self.emit(event, seq, t, raw, touched)
        if t == "turn/start":
            self.open_turn, self.open_step = d.get("turn"), None
        elif t == "turn/end":
            self.open_turn = self.open_step = None
        elif t == "step/start":
            self.open_turn, self.open_step = d.get("turn"), d.get("step")
            if self.head is None:
                yield self.system(seq, t, event.get("time"), "")
        elif t == "step/end":
            self.open_step = None

    def request_header(
        self, event: dict[str, Any], d: dict[str, Any], refuse: Refuse
    ) -> tuple[dict[str, Any], bool, Rec | None]:
        """A v2 request/header: (the event with its canonical header, whether it changed, the
        system/message a changed prompt inserts before it)."""
        header = d.get("header")
        if not isinstance(header, dict):
            raise refuse("request/header data.header is not an object")
        prompt = header.get("system", "")
        if not isinstance(prompt, str):
            raise refuse("request/header header.system is not a string")
        system = None
        if prompt != self.prompt:
            if self.open_step is None or self.head is None:
                raise refuse("the system prompt changes at a request/header outside an open step")
            system = self.system(event["seq"], event["type"], event.get("time"), prompt)
        canonical = {
            k: v
            for k, v in header.items()
            if not (
                k == "system"
                or (k == "tools" and isinstance(v, list) and not v)
                or (k == "adapterDefaults" and isinstance(v, dict) and not v)
            )
        }
        if canonical != header or list(canonical) != list(header):
            return {**event, "data": {**d, "header": canonical}}, True, system
        return event, False, system

    def emit(self, event: dict[str, Any], old: int, t: str, raw: bytes | None, touched: bool) -> Rec:
        new = self.next
        self.next += 1
        self.remap.keep(old, new)

        def refuse(detail: str) -> UpgradeRefused:
            return self.refuse(detail, old, t)

        out, changed = remap_references(event, old, self.remap, refuse)
        op = out.get("surfaceOp")
        if isinstance(op, dict):
            if op.keys() != _REPLACE_KEYS or op.get("op") != "replace":
                raise refuse(f"surfaceOp {chosen_repr(op)} is not exactly {{op:'replace', start, end}}")
            out = {**out, "surfaceOp": {"op": "replace", "startSeq": op["start"], "endSeq": op["end"]}}
            changed = True
        if new != old:
            out = {**out, "seq": new}
        keep_raw = not (changed or touched or new != old)
        return Rec([out], raw if keep_raw else None)

    def system(self, anchor_seq: int, anchor_type: str, time: Any, prompt: str) -> Rec:
        """A synthetic system message: the first (empty) head, or a replacement of the head."""
        mid = system_message_id(self.session_id, anchor_seq, anchor_type)
        if mid in self.prefixed_source_ids:
            raise self.refuse(
                f"the generated system message id {mid} collides with a source message id",
                anchor_seq,
                anchor_type,
            )
        if anchor_type == "step/start":
            self.head_anchor = anchor_seq
        else:
            self.generated_ids.put(mid, "")
        message = {
            "id": mid,
            "role": "system",
            "source": {"kind": "plugin", "plugin": SYSTEM_PLUGIN},
            "content": [{"type": "text", "text": prompt}] if prompt else [],
        }
        event: dict[str, Any] = {
            "type": "system/message",
            "seq": self.next,
            "time": time,
            "data": {"turn": self.open_turn, "step": self.open_step, "message": message},
        }
        if self.head is None:
            event["surfaceOp"] = "append"
        else:
            event["surfaceOp"] = {"op": "replace", "startSeq": self.head, "endSeq": self.head}
            event["sourceEventSeqs"] = [self.head]
        self.head = self.next
        self.prompt = prompt
        self.next += 1
        return Rec([event], None)

    def finish(self) -> None:
        if self.seeded and not self.tagged:
            raise self.refuse("a seeded Session lacks an inherited end-seed marker")


def _q(value: Any) -> str:
    return f'"{chosen(value)}"' if isinstance(value, str) else chosen_repr(value)


class V2ToV3(StepShell, name=NAME, source=2):
    def edit_header(self, header: dict[str, Any]) -> dict[str, Any]:
        out = super().edit_header(header)
        if out.get("agentPreset") == "code":
            out["agentPreset"] = "ptc"
        return out

    def events(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        state = _Run(header, self.spill)
        for event, raw, _ in each_event(recs):
            yield from state.event(event, raw)
        state.finish()


STEP = V2ToV3()
