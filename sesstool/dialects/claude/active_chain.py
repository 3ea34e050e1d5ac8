"""What resume sees on the active chain (spec agent-formats §0, §1.7, §1.9): the calls on it
(parallel siblings on side branches included) without a result, the results on it whose call is
not, the off-chain entries derive needs, and whether the chain ends waiting for a reply."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.entry_graph import ASSISTANT, LOCAL, USER, EntryGraph
from sesstool.dialects.claude.findings import Findings
from sesstool.dialects.claude.scan_facts import Compaction, ToolCall
from sesstool.dialects.claude.tool_calls import ToolBook
from sesstool.store.spill import IntArray


@dataclass(frozen=True, slots=True)
class ChainView:
    chain: IntArray  # entries, root first
    reattached: IntArray  # a byte per entry: off the chain, and derive needs it
    dangling: list[ToolCall]  # calls resume closes, in chain order
    left_open: list[ToolCall]  # in a subagent's own file: its calls without result (resume leaves them)
    orphans: list[str]  # tool_use ids of results on the chain without their call
    waiting: bool  # the chain ends on a user turn resume answers with `No response requested.`


class _Attached:
    """Which entries' calls are on the chain: the chain's own and the other blocks of its replies."""

    def __init__(self, graph: EntryGraph, session: str | None, book: ToolBook) -> None:
        self.graph = graph
        self.chain, self.on_chain = graph.active_chain(session)
        self.siblings = graph.reply_siblings(session, self.on_chain)
        self.book = book
        self.repeated: dict[int, list[tuple[int, int]]] = {}  # item -> (entry, block) after the first
        for item, entry, block in book.repeated:
            self.repeated.setdefault(item, []).append((entry, block))

    def entry(self, node: int) -> bool:
        return bool(self.on_chain[node] or self.siblings[node])

    def issued(self, item: int) -> bool:
        """Some entry carrying the call ``item`` is on the chain."""
        first = self.book.call_entry[item]
        return first >= 0 and (
            self.entry(first) or any(self.entry(e) for e, _ in self.repeated.get(item, ()))
        )

    def positions(self, nodes: Iterable[int]) -> dict[int, int]:
        """Where on the chain each of ``nodes`` — or the first block of its reply — is."""
        anchors = {node: self._anchors(node) for node in nodes}
        wanted = {a for found in anchors.values() for a in found}
        at = {node: i for i, node in enumerate(self.chain) if node in wanted} if wanted else {}
        return {
            node: min((at[a] for a in found if a in at), default=len(self.chain))
            for node, found in anchors.items()
        }

    def _anchors(self, node: int) -> set[int]:
        group = self.graph.group(node)
        if group < 0:
            return {node}
        return self.graph.reply(group)


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
    dangling, left_open = ([], open_calls) if subagent else (open_calls, [])
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


def _dangling(on: _Attached, subagent: bool, findings: Findings) -> list[ToolCall]:
    """The calls on the chain without a result anywhere, in the order resume meets them."""
    book, graph = on.book, on.graph
    calls: list[tuple[list[tuple[int, int]], ToolCall]] = []  # (the entries using it, the call)
    for item, call, block in book.waiting.values():
        if on.issued(item):
            used = [(book.call_entry[item], block), *on.repeated.get(item, ())]
            calls.append(([(e, b) for e, b in used if on.entry(e)], call))
    where = on.positions({e for used, _ in calls for e, _ in used})
    calls.sort(key=lambda pair: min((where[e], e, b) for e, b in pair[0]))
    dangling: list[ToolCall] = []
    for _, call in calls:
        offset = graph.offset(graph.find(call.entry))
        if subagent:
            message = f"{call.name} call {call.id} has no result; the CLI leaves a subagent's file so"
            findings.add(CR.SUBAGENT_DANGLING, message, offset, call.line)
        else:
            message = f"{call.name} call {call.id} has no result; resume appends an interrupted result"
            findings.add(CR.DANGLING_TOOL_USE, message, offset, call.line)
        dangling.append(call)
    return dangling


def _orphans(on: _Attached, findings: Findings) -> list[str]:
    graph = on.graph
    found = [
        (entry, tool_id)
        for entry, tool_id, item in on.book.loose
        if on.on_chain[entry] and not on.issued(item)
    ]
    at = {node: i for i, node in enumerate(on.chain) if node in {e for e, _ in found}} if found else {}
    found.sort(key=lambda pair: at[pair[0]])
    for entry, tool_id in found:
        findings.add(
            CR.ORPHAN_TOOL_RESULT,
            f"result for {tool_id} has no tool_use on the active chain; resume drops it",
            graph.offset(entry),
            graph.lines[entry],
        )
    return [tool_id for _, tool_id in found]


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
