"""What Claude Code sends the model when a session is resumed, rebuilt from the transcript.

The CLI's rebuild is closed source (spec agent-formats §1.7 C, §5 risk 2); these rules were
measured with Claude Code 2.1.332 (the lane records the first request after ``--resume``):

* the active chain is walked root first; the entries of one streamed reply (same
  ``message.id``, side branches included) make one assistant message (§1.5, §1.9);
* the user entries between two replies make one user message: the text of ``user``-role
  rendered attachments first, then the tool results in the order they were written (results
  on side branches reattached, §1.9; parallel calls finish in any order), then the rest; a
  text block followed by a block of another entry gets a ``\\n``; a message left empty says
  ``(no content)``; a tool_result whose call is not on the chain is dropped (§0);
* ``system``-role rendered attachments of that span form one ``system`` message after it,
  their ``<system-reminder>`` wrappers removed, joined by a blank line;
* a compact summary is a user message of its own, followed by an empty ``system`` message and
  the messages the boundary preserved (``compactMetadata.preservedMessages``);
* what resume itself adds (§0): an interrupted tool_result per call without result, and
  ``No response requested.`` when the chain ends on a user turn — marked ``origin: resume``.

Anything outside what the lane verified is derived the same way but reported in
``best_effort`` with the reason. Pure: the engine passes the decoded entries it needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.scan_facts import TranscriptScan

Json = dict[str, Any]
VERIFIED_BLOCKS = frozenset({"text", "tool_use", "tool_result"})
VERIFIED_SYSTEM = frozenset({"compact_boundary"})


@dataclass(frozen=True, slots=True)
class DerivedMessage:
    role: str
    content: tuple[Json, ...]
    origin: str  # file | resume | mixed


@dataclass(frozen=True, slots=True)
class Derived:
    messages: tuple[DerivedMessage, ...]
    best_effort: tuple[str, ...]


@dataclass(slots=True)
class _Part:
    source: int  # a per-entry serial: the "\n" rule joins blocks of different entries
    block: Json
    synthesized: bool = False


@dataclass(slots=True)
class _Builder:
    scan: TranscriptScan
    groups: dict[str, list[Json]]
    results: dict[str, tuple[tuple[int, int], Json]]  # tool_use id -> ((line, block), result block)
    by_uuid: dict[str, Json]
    messages: list[DerivedMessage] = field(default_factory=list)
    reasons: dict[str, None] = field(default_factory=dict)
    atts: list[str] = field(default_factory=list)
    parts: list[_Part] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)
    users: int = 0
    pending: list[str] = field(default_factory=list)
    answered: dict[str, Json] = field(default_factory=dict)
    issued: set[str] = field(default_factory=set)
    emitted: set[str] = field(default_factory=set)
    serial: int = 0

    def next_source(self) -> int:
        self.serial += 1
        return self.serial

    def item(self, entry: Json) -> None:
        kind = entry.get("type")
        if kind == "assistant":
            self.assistant(entry)
        elif kind == "user":
            if entry.get("isCompactSummary") is True:
                self.flush()
                self.user(entry)
                self.flush(after_summary=True)
                self.preserved(entry)
            else:
                self.user(entry)
        elif kind == "attachment":
            self.attachment(entry)
        elif kind == "system":
            subtype = entry.get("subtype")
            if subtype not in VERIFIED_SYSTEM:
                self.reasons[f"system entry {subtype!r}: taken as not sent to the model"] = None
        elif kind == "progress":
            self.reasons["progress entries: taken as not sent to the model"] = None

    def assistant(self, entry: Json) -> None:
        message = _dict(entry.get("message"))
        msg_id = message.get("id")
        if isinstance(msg_id, str) and msg_id in self.emitted:
            return
        self.flush()
        members = self.groups.get(msg_id, [entry]) if isinstance(msg_id, str) else [entry]
        if isinstance(msg_id, str):
            self.emitted.add(msg_id)
        blocks: list[Json] = []
        for member in members:
            for block in _content(member):
                self.note_block(block)
                blocks.append(block)
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    self.pending.append(block["id"])
                    self.issued.add(block["id"])
        self.messages.append(DerivedMessage("assistant", tuple(blocks), "file"))

    def user(self, entry: Json) -> None:
        self.users += 1
        source = self.next_source()
        for block in _content(entry):
            self.note_block(block)
            if block.get("type") == "tool_result":
                tool_id = block.get("tool_use_id")
                if isinstance(tool_id, str) and tool_id in self.issued:
                    self.answered.setdefault(tool_id, block)
                continue  # placed by call order in flush; an orphan is dropped (§0)
            self.parts.append(_Part(source, block))

    def attachment(self, entry: Json) -> None:
        rendered = entry.get("rendered")
        if rendered is None:
            return
        role = entry.get("renderedRole")
        texts = (
            [r.get("content") for r in rendered if isinstance(r, dict)] if isinstance(rendered, list) else []
        )
        for text in texts:
            if not isinstance(text, str):
                self.reasons["attachment rendered content that is not text"] = None
                continue
            if role == "system":
                self.systems.append(_unwrap(text))
            elif role == "user":
                self.atts.append(text)
            else:
                self.reasons[f"attachment renderedRole {role!r}"] = None

    def preserved(self, summary: Json) -> None:
        anchor = summary.get("uuid")
        for compaction in self.scan.compactions:
            if compaction.anchor == anchor:
                for uuid in compaction.preserved:
                    entry = self.by_uuid.get(uuid)
                    if entry is None:
                        self.reasons[f"compaction preserved {uuid}, which is not in the file"] = None
                    else:
                        self.item(entry)

    def note_block(self, block: Json) -> None:
        kind = block.get("type")
        if kind not in VERIFIED_BLOCKS:
            self.reasons[f"content block {kind!r}: sent as recorded (not verified)"] = None

    def flush(self, after_summary: bool = False, closers: tuple[str, ...] = ()) -> None:
        parts: list[_Part] = [_Part(self.next_source(), {"type": "text", "text": t}) for t in self.atts]
        # measured (lane, parallel calls finishing in either order): results go in the order
        # they were written, not the order of the calls; what resume adds comes after them
        found: list[tuple[tuple[int, int], Json]] = []
        added: list[_Part] = []
        for tool_id in self.pending:
            hit = self.results.get(tool_id)
            if hit is None and tool_id in self.answered:
                hit = ((1 << 62, len(found)), self.answered[tool_id])
            if hit is not None:
                found.append(hit)
            elif tool_id in closers:
                added.append(_Part(-1, _interrupted(tool_id), synthesized=True))
        results = [_Part(-1, block) for _, block in sorted(found, key=lambda pair: pair[0])] + added
        parts.extend(results)
        parts.extend(self.parts)
        had_user = self.users > 0 or bool(results) or bool(self.atts)
        if had_user:
            content: list[Json] = []
            for i, part in enumerate(parts):
                block = part.block
                following = parts[i + 1] if i + 1 < len(parts) else None
                if block.get("type") == "text" and following is not None and following.source != part.source:
                    block = {**block, "text": f"{block.get('text', '')}\n"}
                content.append(block)
            if not content:
                content = [{"type": "text", "text": "(no content)"}]
            synthesized = sum(1 for p in parts if p.synthesized)
            origin = "file" if not synthesized else ("resume" if synthesized == len(parts) else "mixed")
            self.messages.append(DerivedMessage("user", tuple(content), origin))
        if self.systems:
            text = "\n\n".join(self.systems)
            self.messages.append(DerivedMessage("system", ({"type": "text", "text": text},), "file"))
        elif after_summary:
            self.messages.append(DerivedMessage("system", (), "file"))
        if had_user:
            self.pending = []
        self.atts, self.parts, self.systems, self.users, self.answered = [], [], [], 0, {}


def derive(scan: TranscriptScan, entries: Mapping[int, Json]) -> Derived:
    """The resume request's messages for the parts that come from the file (plus what resume
    itself appends). ``entries`` maps line numbers to decoded entries for ``scan.chain`` and
    ``scan.reattached``."""
    chain = [entries[line] for line in scan.chain]
    everything = sorted(
        [(line, entries[line]) for line in (*scan.chain, *scan.reattached)], key=lambda pair: pair[0]
    )
    groups: dict[str, list[Json]] = {}
    results: dict[str, tuple[tuple[int, int], Json]] = {}
    by_uuid: dict[str, Json] = {}
    for _, entry in everything:
        if isinstance(entry.get("uuid"), str):
            by_uuid.setdefault(entry["uuid"], entry)
        message = _dict(entry.get("message"))
        if entry.get("type") == "assistant" and isinstance(message.get("id"), str):
            groups.setdefault(message["id"], []).append(entry)
    for line, entry in everything:  # the first result in the file wins (measured: concurrent-writers)
        if entry.get("type") == "user":
            for index, block in enumerate(_content(entry)):
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    results.setdefault(block["tool_use_id"], ((line, index), block))
    builder = _Builder(scan, groups, results, by_uuid)
    preserved = {u for c in scan.compactions for u in c.preserved}
    for entry in chain:
        if entry.get("uuid") in preserved and entry.get("type") == "assistant":
            builder.reasons["a preserved message is also on the chain"] = None
        builder.item(entry)
    if any(f.rule == CR.PARENT_MISSING for f in scan.findings):
        builder.reasons[
            "a parentUuid names no entry: the chain is cut there (a tool_result is bridged to "
            "the entry before it, as 2.1.332 was measured doing)"
        ] = None
    closers = tuple(call.id for call in scan.closing.dangling)
    builder.flush(closers=closers)
    if scan.closing.no_response:
        builder.messages.append(
            DerivedMessage("assistant", ({"type": "text", "text": vocab.NO_RESPONSE_TEXT},), "resume")
        )
    return Derived(tuple(builder.messages), tuple(builder.reasons))


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _content(entry: Json) -> list[Json]:
    message = entry.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [dict(b) for b in content if isinstance(b, dict)]
    return []


def _unwrap(text: str) -> str:
    if text.startswith(vocab.SYSTEM_REMINDER_OPEN) and text.endswith(vocab.SYSTEM_REMINDER_CLOSE):
        return text[len(vocab.SYSTEM_REMINDER_OPEN) : -len(vocab.SYSTEM_REMINDER_CLOSE)]
    return text


def _interrupted(tool_id: str) -> Json:
    # Key order as the CLI writes the closer's block (spec agent-formats §0).
    return {
        "type": "tool_result",
        "content": vocab.INTERRUPTED_TOOL_TEXT,
        "is_error": True,
        "tool_use_id": tool_id,
    }
