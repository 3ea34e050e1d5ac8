"""What resume sees on the active chain (spec agent-formats §0, §1.7, §1.9): the calls on it
(parallel siblings on side branches included) without a result, the results on it whose call is
not, the off-chain entries derive needs, and whether the chain ends waiting for a reply."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.entry_graph import EntryGraph, Node
from sesstool.dialects.claude.findings import Findings
from sesstool.dialects.claude.scan_facts import Compaction, ToolCall


@dataclass(frozen=True, slots=True)
class ChainView:
    chain: list[int]  # node indexes, root first
    reattached: set[int]  # node indexes off the chain that derive needs
    dangling: list[ToolCall]  # calls resume closes, in chain order
    left_open: list[ToolCall]  # in a subagent's own file: its calls without result (resume leaves them)
    orphans: list[str]  # tool_use ids of results on the chain without their call
    waiting: bool  # the chain ends on a user turn resume answers with `No response requested.`


def view(
    graph: EntryGraph,
    session: str | None,
    calls: Mapping[str, ToolCall],
    results: Mapping[str, int],
    compactions: Sequence[Compaction],
    subagent: bool,
    findings: Findings,
) -> ChainView:
    """``results``: tool_use id → node index of its first result; ``subagent``: resume leaves a
    subagent's dangling calls as they are (§0), reported as information."""
    chain = graph.active_chain(session)
    chain_set = set(chain)
    reattached: set[int] = set()
    chain_uses = _chain_uses(graph, session, chain, chain_set, reattached)
    dangling: list[ToolCall] = []
    left_open: list[ToolCall] = []
    for tool_id in chain_uses:
        result = results.get(tool_id)
        if result is None:
            call = calls[tool_id]
            offset = graph.nodes[graph.index[call.entry]].offset
            if subagent:
                left_open.append(call)
                findings.add(
                    "claude-subagent-dangling",
                    f"{call.name} call {tool_id} has no result; the CLI leaves a subagent's file so",
                    offset,
                    call.line,
                )
                continue
            dangling.append(call)
            findings.add(
                "claude-dangling-tool-use",
                f"{call.name} call {tool_id} has no result; resume appends an interrupted result",
                offset,
                call.line,
            )
        elif result not in chain_set:
            reattached.add(result)
    orphans = _orphans(graph, chain, set(chain_uses), findings)
    for compaction in compactions:
        if graph.index.get(compaction.uuid) in chain_set:
            reattached.update(graph.index[u] for u in compaction.preserved if u in graph.index)
    waiting = not subagent and _waiting(graph, chain, bool(dangling), findings)
    return ChainView(chain, reattached, dangling, left_open, orphans, waiting)


def _chain_uses(
    graph: EntryGraph, session: str | None, chain: list[int], chain_set: set[int], reattached: set[int]
) -> dict[str, None]:
    """The tool_use ids on the chain, in order; a reply's blocks on side branches count (§1.9)."""
    groups = graph.groups(session)
    on_chain_msgs: set[str] = set()
    chain_uses: dict[str, None] = {}  # ordered, unique
    for idx in chain:
        node = graph.nodes[idx]
        if node.kind != "assistant":
            continue
        if node.msg_id is None:
            chain_uses.update(dict.fromkeys(node.tool_uses))
        elif node.msg_id not in on_chain_msgs:
            on_chain_msgs.add(node.msg_id)
            for member in groups.get(node.msg_id, [idx]):
                if member not in chain_set:
                    reattached.add(member)
                chain_uses.update(dict.fromkeys(graph.nodes[member].tool_uses))
    return chain_uses


def _orphans(graph: EntryGraph, chain: list[int], issued: set[str], findings: Findings) -> list[str]:
    orphans: list[str] = []
    for idx in chain:
        node = graph.nodes[idx]
        for tool_id in node.tool_results:
            if tool_id not in issued:
                orphans.append(tool_id)
                findings.add(
                    "claude-orphan-tool-result",
                    f"result for {tool_id} has no tool_use on the active chain; resume drops it",
                    node.offset,
                    node.line,
                )
    return orphans


def _waiting(graph: EntryGraph, chain: list[int], dangling: bool, findings: Findings) -> bool:
    last: Node | None = next(
        (graph.nodes[i] for i in reversed(chain) if graph.nodes[i].kind in ("user", "assistant")), None
    )
    waiting = last is not None and last.kind == "user" and last.user_kind != "local"
    if waiting and not dangling:
        assert last is not None
        findings.add(
            "claude-unanswered-turn",
            f"the conversation ends on a user turn with no reply; resume appends {vocab.NO_RESPONSE_TEXT!r}",
            last.offset,
            last.line,
        )
    return waiting
