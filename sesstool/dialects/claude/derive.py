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
  ``No response requested.`` when the chain ends on a user turn — marked ``origin: resume``
  (a run of calls never answered is held bounded: ``interrupted.py``; so is what a span of
  user entries collects, its message made as it is walked: ``user_span.py``).

Anything outside what the lane verified is derived the same way but reported in
``best_effort`` with the reason. Pure: the engine passes the decoded entries it needs.
"""

from __future__ import annotations

import functools
import itertools
from array import array
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.first_seen import FIRST_SEEN, FirstSeen, said_once
from sesstool.core.humanize import chosen_repr
from sesstool.core.jsonline import loads
from sesstool.dialects.base import counting_pass
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.held import HeldList, Store
from sesstool.dialects.claude.interrupted import closing_ids
from sesstool.dialects.claude.line_offsets import LineOffsets
from sesstool.dialects.claude.preserved import Preserved, missing_reason
from sesstool.dialects.claude.reply import or_itself, paged_lines, reply_content
from sesstool.dialects.claude.scan_facts import TranscriptScan
from sesstool.dialects.claude.user_span import Results, Span, user_content
from sesstool.store.spill import IntArray, SpilledArray, SpillFile, text_key

Json = dict[str, Any]
VERIFIED_BLOCKS = frozenset({"text", "tool_use", "tool_result"})
VERIFIED_SYSTEM = frozenset({"compact_boundary"})
# how a reason names one chosen value (``_Builder.choice``), per field
_CHOSEN = {
    "system entry subtypes": "system entry {}",
    "attachment renderedRoles": "attachment renderedRole {}",
    "content block types": "content block {}",
}


@dataclass(frozen=True, slots=True)
class DerivedMessage:
    role: str
    content: tuple[Json, ...] | Closers[Json]  # Closers: made as walked (a span spilled)
    origin: str  # file | resume | mixed


@dataclass(frozen=True, slots=True)
class Derived:
    messages: tuple[DerivedMessage, ...]
    best_effort: tuple[str, ...]


@dataclass(slots=True)
class _Builder:
    index: Index
    entry: EntryAt
    messages: list[DerivedMessage] = field(default_factory=list)  # drained after every item
    reasons: dict[str, None] = field(default_factory=dict)
    missing: FirstSeen[None] = field(default_factory=FirstSeen)  # preserved uuids not in the file
    # the values a log chose that a reason names (a system subtype, a block type, a rendered role)
    chosen: dict[str, FirstSeen[None]] = field(default_factory=dict)
    # the tool ids since the last user turn: past ``held.HELD_AT``, in the derivation's spill file
    store: Store = field(default_factory=lambda: Store("a large transcript's derivation"))
    pending: HeldList[str] = field(default_factory=lambda: HeldList(None))
    checked: int = 0  # pending calls known to have no result (a flush without a user turn)
    emitted: IntArray = field(default_factory=bytearray)  # a bit per line: its reply was emitted
    serial: int = 0
    # the user entries and attachments since the last reply: past ``held.HELD_AT``, spilled too
    span: Span = field(init=False)

    def __post_init__(self) -> None:
        self.pending = HeldList(self.store)
        self.span = Span(self.store)

    def next_source(self) -> int:
        self.serial += 1
        return self.serial

    def item(self, line: int, entry: Json) -> None:
        kind = entry.get("type")
        if kind == "assistant":
            self.assistant(line, entry)
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
                self.choice("system entry subtypes", subtype, "taken as not sent to the model")
        elif kind == "progress":
            self.reasons["progress entries: taken as not sent to the model"] = None

    def assistant(self, line: int, entry: Json) -> None:
        emitted = self.emitted
        if emitted[line >> 3] & (1 << (line & 7)):
            return  # its reply (same message.id) was emitted with an earlier member
        self.flush()
        msg_id = _dict(entry.get("message")).get("id")
        # the members walked once, their blocks held past ``held.HELD_AT`` (``reply.py``); an
        # entry without a reply id is a reply of its own (nothing to mark emitted)
        found = functools.partial(self.index.members, msg_id, self.entry) if isinstance(msg_id, str) else None
        members = or_itself(found, line, entry)
        marks = emitted if found is not None else None
        content = reply_content(members, _content, marks, self.note_block, self.pending, self.store)
        self.messages.append(DerivedMessage("assistant", content, "file"))

    def user(self, entry: Json) -> None:
        self.span.users += 1
        source = self.next_source()
        for block in _content(entry):
            self.note_block(block)
            if block.get("type") == "tool_result":
                continue  # placed by call order in flush; an orphan is dropped (§0)
            self.span.parts.append((source, block))

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
                self.span.systems.append(_unwrap(text))
            elif role == "user":
                self.span.atts.append(text)
            else:
                self.choice("attachment renderedRoles", role, "")

    def preserved(self, summary: Json) -> None:
        """The entries the compaction anchored on this summary preserved (§1.6 "Compaction"),
        found by the anchor (``compactions.Compactions``): never a scan of every compaction; the
        uuids not in the file named up to ``FIRST_SEEN``, then that there were more (preserved.py)."""
        for compaction in self.index.scan.compactions.anchored(summary.get("uuid")):
            for uuid in compaction.preserved:
                line = self.index.preserved.line(uuid)
                entry = self.entry(line) if line is not None else None
                if line is None or entry is None:
                    reason = missing_reason(self.missing, uuid)
                    if reason is not None:
                        self.reasons[reason] = None
                else:
                    self.item(line, entry)

    def note_block(self, block: Json) -> None:
        kind = block.get("type")
        if kind not in VERIFIED_BLOCKS:
            self.choice("content block types", kind, "sent as recorded (not verified)")

    def choice(self, what: str, value: Any, then: str) -> None:
        """A best-effort reason naming a value the log chose for a field: the first
        ``FIRST_SEEN`` distinct values of each field named (in the words derive always used),
        then one reason saying there were more (issue 11 item 1: a log may choose a new one on
        every line; docs/format.md, "Memory")."""
        named, tail = repr(value), (f": {then}" if then else "")
        more = f"{what} beyond the first {FIRST_SEEN} named{tail}"
        said = _CHOSEN[what].format(chosen_repr(value)) + tail  # told apart whole, quoted cut
        reason = said_once(self.chosen.setdefault(what, FirstSeen()), named, said, more)
        if reason is not None:
            self.reasons[reason] = None

    def flush(self, after_summary: bool = False, closers: Collection[str] = ()) -> None:
        """One user message of what was written since the last reply (and what resume adds,
        §0, given the ``closers``; ``user_span.py``, §1.7 C, §1.9); then the system message of
        the span."""
        span = self.span
        # measured (lane, parallel calls finishing in either order): results go in the order
        # they were written, not the order of the calls; what resume adds comes after them
        results = Results(self.store)
        added: HeldList[str] = HeldList(self.store)
        # a call checked by an earlier flush has no result (the index does not change): only the
        # last flush, which adds what resume adds, walks them again (a run of assistant entries
        # without a user turn between them is not checked again per entry)
        for tool_id in self.pending.walk(0 if closers else self.checked):
            hit = self.index.result(tool_id, self.entry)
            if hit is not None:
                results.add(*hit)
            elif tool_id in closers:
                added.append(tool_id)
        had_user = span.users > 0 or bool(results) or bool(added) or bool(span.atts)
        if had_user:
            content, origin = user_content(span, results, added)
            self.messages.append(DerivedMessage("user", content, origin))
        if span.systems:
            text = span.system_text()
            self.messages.append(DerivedMessage("system", ({"type": "text", "text": text},), "file"))
        elif after_summary:
            self.messages.append(DerivedMessage("system", (), "file"))
        if had_user:
            self.pending = HeldList(self.store)
        self.checked = len(self.pending)
        self.span = Span(self.store)


# line number -> the decoded entry on that line (None: not an entry derive can use)
EntryAt = Callable[[int], "Json | None"]
_LINE_BITS = 32
SPILL_AT = 1 << 15  # chain entries derive indexes in memory; past them the index is a spill file
_REPLY, _RESULT = 0, 1


def _key(text: str) -> int:
    """A 31-bit digest of an id, packed above a line number: the index sorts one int per entry
    (a collision only costs a look at the other entry, which is then compared in full)."""
    return (hash(text) & 0x7FFFFFFF) << _LINE_BITS


class Index:
    """Where derive finds what the chain walk asks for, as line numbers (never the entries): the
    members of a streamed reply, the first result of a call, the preserved entries of a
    compaction. Built by one pass over the wanted lines.

    Up to ``SPILL_AT`` wanted lines, a machine word per entry in memory (sorted once); past it
    (issue 17, as the entry graph past ``entry_graph.SPILL_AT``) the ids are rows of a spill file
    (store/spill.py: a table keyed by (kind, id, line), so nothing is sorted in memory) and the
    bit per line that marks an emitted reply is a ``SpilledArray``: memory stays flat however
    many turns the chain has."""

    def __init__(self, scan: TranscriptScan, entry: EntryAt) -> None:
        self.scan = scan
        # the derivation's one spill file, opened by the index or the preserved uuids (preserved.py)
        self._held = Store("a large transcript's derivation")
        self.preserved = Preserved(scan.compactions, self._held)  # uuid -> its first wanted line
        self._store: SpillFile | None = None
        self._table = ""
        self._replies = self._results = array("q")
        self.lines = 0
        if len(scan.chain) + len(scan.reattached) >= SPILL_AT:
            self._spilled(scan, entry)
        else:
            self._in_memory(scan, entry)

    def _in_memory(self, scan: TranscriptScan, entry: EntryAt) -> None:
        wanted = sorted({*scan.chain, *scan.reattached})
        if wanted and wanted[-1] >= 1 << _LINE_BITS:
            raise ValueError("a transcript of more than 2**32 lines")
        replies: list[int] = []
        results: list[int] = []
        for kind, ident, line in self._ids(wanted, entry):
            (replies if kind == _REPLY else results).append(_key(ident) | line)
        self.lines = (wanted[-1] + 1) if wanted else 0
        del wanted
        replies.sort()
        self._replies = array("q", replies)
        del replies
        results.sort()
        self._results = array("q", results)

    def _spilled(self, scan: TranscriptScan, entry: EntryAt) -> None:
        # the preserved uuids' file when they spilled first (preserved.py): one file per derivation
        store = self._store = self._held.file or SpillFile("a large transcript's derivation")
        self._held.file = store
        self._table = store.table(
            "kind INTEGER NOT NULL, key BLOB NOT NULL, line INTEGER NOT NULL, PRIMARY KEY (kind, key, line)",
            "WITHOUT ROWID",
        )
        last = -1

        def lines() -> Iterator[int]:
            nonlocal last
            for line in itertools.chain(scan.chain, scan.reattached):  # the chain is read in order
                last = max(last, line)
                yield line

        def rows() -> Iterator[tuple[int, bytes, int]]:
            for kind, ident, line in self._ids(lines(), entry):
                yield kind, text_key(ident), line

        # a line met twice (on the chain and reattached) is one row: the primary key ignores it
        store.executemany(f"INSERT OR IGNORE INTO {self._table} VALUES (?, ?, ?)", rows())
        self.lines = last + 1

    def _ids(self, lines: Iterable[int], entry: EntryAt) -> Iterator[tuple[int, str, int]]:
        """(``_REPLY``, reply id, line) and (``_RESULT``, tool id, line) of the entries at
        ``lines``, noting the preserved entries met on the way."""
        for line in lines:
            found = entry(line)
            if found is None:
                continue
            self._note_preserved(found, line)
            kind = found.get("type")
            if kind == "assistant":
                msg_id = _dict(found.get("message")).get("id")
                if isinstance(msg_id, str):
                    yield _REPLY, msg_id, line
            elif kind == "user":
                for tool_id in _result_ids(found):
                    yield _RESULT, tool_id, line

    def _note_preserved(self, found: Json, line: int) -> None:
        if self.preserved:
            self.preserved.note(found.get("uuid"), line)  # the first in the file

    @property
    def spill_file(self) -> SpillFile | None:
        """The index's spill file (past ``SPILL_AT`` wanted lines, or many preserved uuids), else None."""
        return self._held.file

    def emitted(self) -> IntArray:
        """Zeros, a bit per line: in memory, or in the spill file with the index."""
        size = (self.lines >> 3) + 1
        return bytearray(size) if self._store is None else SpilledArray.zeros("B", self._store.pages(), size)

    def _lines(self, kind: int, text: str) -> Iterator[int]:
        """The wanted lines in file order that carry ``text`` (a reply's or a result's id), or
        that may (in memory: the same 31-bit digest)."""
        if self._store is None:
            return _packed_lines(self._replies if kind == _REPLY else self._results, _key(text))
        return paged_lines(self._store, self._table, kind, text_key(text))  # a page at a time

    def members(self, msg_id: str, entry: EntryAt) -> Iterator[tuple[int, Json]]:
        """The assistant entries of reply ``msg_id`` with their lines, in file order (§1.5, side
        branches too), decoded one at a time as they are walked (never a list of them)."""
        for line in self._lines(_REPLY, msg_id):
            member = entry(line)
            if member is not None and _dict(member.get("message")).get("id") == msg_id:
                yield line, member  # the id compared in full: a digest is shared by chance

    def result(self, tool_id: str, entry: EntryAt) -> tuple[tuple[int, int], Json] | None:
        """The first tool_result for ``tool_id`` in the file ((line, block), block): measured with
        concurrent writers, resume uses the first."""
        for line in self._lines(_RESULT, tool_id):
            found = entry(line)
            if found is None or found.get("type") != "user":
                continue
            for index, block in enumerate(_content(found)):
                if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id:
                    return (line, index), block
        return None


def _result_ids(entry: Json) -> set[str]:
    return {
        b["tool_use_id"]
        for b in _content(entry)
        if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
    }


def _packed_lines(packed: array[int], key: int) -> Iterator[int]:
    mask = (1 << _LINE_BITS) - 1
    i = bisect_left(packed, key)
    while i < len(packed) and packed[i] & ~mask == key:
        yield packed[i] & mask
        i += 1


class Derivation:
    """The derived messages, produced as they are iterated (``messages()``, any number of
    passes), each pass walking the chain and reading the entries it needs through ``entry``."""

    def __init__(self, scan: TranscriptScan, entry: EntryAt) -> None:
        self.scan = scan
        self.entry = entry
        self.index = Index(scan, entry)
        self.best_effort: tuple[str, ...] = ()
        # where a run of pending calls goes past ``held.HELD_AT`` (``interrupted.py``): the
        # index's spill file when it has one, else one opened then; shared by every pass
        self.store = Store("a large transcript's derivation")
        self.store.file = self.index.spill_file

    def messages(self) -> Iterator[DerivedMessage]:
        """One pass; ``best_effort`` holds its reasons once it is exhausted."""
        scan, entry = self.scan, self.entry
        builder = _Builder(self.index, entry, emitted=self.index.emitted(), store=self.store)
        preserved = self.index.preserved
        for line in scan.chain:
            found = entry(line)
            if found is None:
                raise KeyError(line)  # a chain line is a graph entry: the scan decoded it
            if found.get("type") == "assistant" and found.get("uuid") in preserved:
                builder.reasons["a preserved message is also on the chain"] = None
            builder.item(line, found)
            yield from builder.messages
            builder.messages.clear()
        found = None  # the last entry, let go: a span still open after it is handed on below
        if scan.parents_missing:
            builder.reasons[
                "a parentUuid names no entry: the chain is bridged over it to the newest earlier "
                "entry written no later, or cut there when there is none (as 2.1.332 does)"
            ] = None
        # the calls still pending that resume closes: one walk of the dangling calls (read back
        # past ``held.HELD_AT``), holding no more ids than the pending ones (a table of them in
        # the spill file once the pending ones moved there)
        builder.flush(closers=closing_ids(scan.closing.dangling, builder.pending, builder.store))
        if scan.closing.no_response:
            builder.messages.append(
                DerivedMessage("assistant", ({"type": "text", "text": vocab.NO_RESPONSE_TEXT},), "resume")
            )
        yield from builder.messages
        self.best_effort = tuple(builder.reasons)


def derive(scan: TranscriptScan, entries: Mapping[int, Json]) -> Derived:
    """The resume request's messages for the parts that come from the file (plus what resume
    itself appends). ``entries`` maps line numbers to decoded entries for ``scan.chain`` and
    ``scan.reattached``; ``Derivation`` reads them one at a time instead."""
    derivation = Derivation(scan, entries.get)
    messages = tuple(derivation.messages())
    return Derived(messages, derivation.best_effort)


class EntriesAt:
    """derive streamed by entries (issue 11 item 1; ``Dialect.entry_derivation``): the entries
    read back through ``read(offset)`` from the plaintext offsets the scan kept per line, one at
    a time (the reader's cache keeps the recent ones); a first pass counts the messages."""

    def __init__(
        self, scan: TranscriptScan, offsets: LineOffsets, read: Callable[[int], bytes], max_depth: int
    ) -> None:
        self._offsets, self._read, self._max_depth = offsets, read, max_depth
        self.escaped = False  # a line held a \\u escape: a message may hold a lone surrogate
        self._derivation = Derivation(scan, self.entry)

    def entry(self, line: int) -> Json | None:
        offset = self._offsets.at(line)
        if offset < 0:
            return None
        data = self._read(offset).lstrip(b"\0")  # the scan read an entry after a NUL run too
        if b"\\u" in data:
            self.escaped = True
        value = loads(data, self._max_depth)
        return value if isinstance(value, dict) else None

    def prepare(self) -> tuple[int, bool, tuple[str, ...] | None]:
        count, unencodable = counting_pass(self.messages(), lambda: self.escaped)
        return count, unencodable, self._derivation.best_effort

    def messages(self) -> Iterator[Json]:
        return (message_doc(m) for m in self._derivation.messages())


def message_doc(message: DerivedMessage) -> Json:
    """A derived message as derive writes it (a spilled run of interrupted results stays the
    ``Closers`` it is: the writers stream it)."""
    content = message.content
    return {
        "role": message.role,
        "content": content if isinstance(content, Closers) else list(content),
        "origin": message.origin,
    }


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
