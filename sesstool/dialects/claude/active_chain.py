"""What resume sees on the active chain (spec agent-formats §0, §1.7, §1.9): the calls on it
(parallel siblings on side branches included) without a result, the results on it whose call is
not, the off-chain entries derive needs, and whether the chain ends waiting for a reply."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sesstool.core.humanize import chosen
from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.entry_graph import ASSISTANT, LOCAL, USER, EntryGraph
from sesstool.dialects.claude.findings import Findings
from sesstool.dialects.claude.held import HeldList, HeldOrder
from sesstool.dialects.claude.scan_facts import Compaction, ToolCall
from sesstool.dialects.claude.tool_calls import ToolBook
from sesstool.store.spill import IntArray, SpilledArray


@dataclass(frozen=True, slots=True)
class ChainView:
    chain: IntArray  # entries, root first
    reattached: IntArray  # a byte per entry: off the chain, and derive needs it
    dangling: Sequence[ToolCall]  # calls resume closes, in chain order
    left_open: Sequence[ToolCall]  # in a subagent's own file: its calls without result (resume leaves them)
    orphans: Sequence[str]  # tool_use ids of results on the chain without their call
    waiting: bool  # the chain ends on a user turn resume answers with `No response requested.`


class _Attached:
    """Which entries' calls are on the chain: the chain's own and the other blocks of its replies.
    Nothing here grows with the calls or results (issue 11 item 1): per tool id a byte (some
    repeated use of it is on the chain), per entry the marks and, when something must be put in
    chain order, a word (``_where``); all in the spill file once the graph is."""

    def __init__(self, graph: EntryGraph, session: str | None, book: ToolBook) -> None:
        self.graph = graph
        self.chain, self.on_chain = graph.active_chain(session)
        self.siblings = graph.reply_siblings(session, self.on_chain)
        self.book = book
        self.repeat_on = _per_item(graph, len(book.call_entry))  # an id used again on the chain
        for item, entry, _ in book.repeated:
            if self.entry(entry):
                self.repeat_on[item] = 1
        self._at: IntArray | None = None  # per entry: its place on the chain + 1, else 0
        self._first: IntArray | None = None  # per reply (or entry outside one): its first place + 1

    def entry(self, node: int) -> bool:
        return bool(self.on_chain[node] or self.siblings[node])

    def issued(self, item: int) -> bool:
        """Some entry carrying the call ``item`` is on the chain."""
        first = self.book.call_entry[item]
        return first >= 0 and bool(self.entry(first) or self.repeat_on[item])

    def _places(self) -> tuple[IntArray, IntArray]:
        if self._at is None or self._first is None:
            self._at, self._first = self.graph.marks("i"), self.graph.marks("i")
            for i, node in enumerate(self.chain):
                self._at[node] = i + 1
                group = self.graph.group(node)
                anchor = group if group >= 0 else node
                if not self._first[anchor]:
                    self._first[anchor] = i + 1
        return self._at, self._first

    def place(self, node: int) -> int:
        """Where on the chain ``node`` is, else len(chain)."""
        at = self._places()[0][node]
        return at - 1 if at else len(self.chain)

    def where(self, node: int) -> int:
        """Where on the chain ``node`` — or the first entry of its reply on it — is, else len(chain)."""
        group = self.graph.group(node)
        first = self._places()[1][group if group >= 0 else node]
        return first - 1 if first else len(self.chain)


def _per_item(graph: EntryGraph, length: int) -> IntArray:
    """A zero byte per tool id: in the spill file once the graph (and the book) are."""
    if graph.store is not None:
        return SpilledArray.zeros("B", graph.store.pages(), length)
    return bytearray(length)


def view(
    graph: EntryGraph,
    session: str | None,
    book: ToolBook,
    compactions: Sequence[Compaction],
    subagent: bool,
    findings: Findings,
) -> ChainView:
    """``subagent``: resume leaves a subagent's dangling calls as they are (§0), reported as
    information."""
    on = _Attached(graph, session, book)
    reattached = graph.marks()  # a byte per entry, as the siblings' (never a set: issue 11 item 1)
    for node, sibling in enumerate(on.siblings):
        if sibling:
            reattached[node] = 1
    open_calls = _dangling(on, subagent, findings)
    none: HeldList[ToolCall] = HeldList(None)
    dangling, left_open = (none, open_calls) if subagent else (open_calls, none)
    for item, result in enumerate(book.result_entry):
        if result >= 0 and not on.on_chain[result] and on.issued(item):
            reattached[result] = 1
    orphans = _orphans(on, findings)
    for compaction in compactions:
        boundary = graph.find(compaction.uuid)
        if boundary >= 0 and on.on_chain[boundary]:
            for node in map(graph.find, compaction.preserved):
                if node >= 0:
                    reattached[node] = 1
    waiting = not subagent and _waiting(graph, on.chain, bool(dangling), findings)
    return ChainView(on.chain, reattached, dangling, left_open, orphans, waiting)


def _dangling(on: _Attached, subagent: bool, findings: Findings) -> HeldList[ToolCall]:
    """The calls on the chain without a result anywhere, in the order resume meets them: by the
    first place on the chain of an entry carrying the call (or of its reply), then that entry and
    the call's block in it. Sorted in the spill file past ``held.HELD_AT`` uses."""
    book, graph = on.book, on.graph
    uses = HeldOrder(graph.held)  # (place, entry, block, item) of each use on the chain
    for item, _, block in book.waiting.values():
        first = book.call_entry[item]
        if on.entry(first):
            uses.add((on.where(first), first, block, item))
    for item, entry, block in book.repeated:
        if book.result_entry[item] < 0 and on.entry(entry):  # still waiting (``ToolBook.waiting``)
            uses.add((on.where(entry), entry, block, item))
    met = _per_item(graph, len(book.call_entry))
    dangling: HeldList[ToolCall] = HeldList(graph.held)
    for *_, item in uses.sorted():
        if met[item]:
            continue
        met[item] = 1
        call: ToolCall = book.waiting[book.ids.key(item)][1]
        offset = graph.offset(graph.find(call.entry))
        said = f"{chosen(call.name)} call {chosen(call.id)} has no result"
        if subagent:
            message = f"{said}; the CLI leaves a subagent's file so"
            findings.add(CR.SUBAGENT_DANGLING, message, offset, call.line)
        else:
            message = f"{said}; resume appends an interrupted result"
            findings.add(CR.DANGLING_TOOL_USE, message, offset, call.line)
        dangling.append(call)
    return dangling


def _orphans(on: _Attached, findings: Findings) -> HeldList[str]:
    """Results on the chain whose call is not, in chain order (then as written)."""
    graph = on.graph
    found = HeldOrder(graph.held)  # (place, n, entry, item)
    for n, (entry, _, item) in enumerate(on.book.loose):
        if on.on_chain[entry] and not on.issued(item):
            found.add((on.place(entry), n, entry, item))
    orphans: HeldList[str] = HeldList(graph.held)
    for _, _, entry, item in found.sorted():
        tool_id = on.book.ids.key(item)
        findings.add(
            CR.ORPHAN_TOOL_RESULT,
            f"result for {chosen(tool_id)} has no tool_use on the active chain; resume drops it",
            graph.offset(entry),
            graph.lines[entry],
        )
        orphans.append(tool_id)
    return orphans


def _waiting(graph: EntryGraph, chain: IntArray, dangling: bool, findings: Findings) -> bool:
    last = next((i for i in reversed(chain) if graph.flags[i] & (USER | ASSISTANT)), -1)
    waiting = last >= 0 and bool(graph.flags[last] & USER) and not graph.flags[last] & LOCAL
    if waiting and not dangling:
        findings.add(
            CR.UNANSWERED_TURN,
            f"the conversation ends on a user turn with no reply; resume appends {vocab.NO_RESPONSE_TEXT!r}",
            graph.offset(last),
            graph.lines[last],
        )
    return waiting
