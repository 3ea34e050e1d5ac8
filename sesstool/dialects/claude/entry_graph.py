"""The ``parentUuid`` graph of a transcript's entries (spec agent-formats §1.7, §1.9): one small
record per graph entry, the uuid index, and the walks over them — the active chain resume
continues, the entry before one in the file, the entries of one streamed reply, branches."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude.findings import Findings


@dataclass(slots=True)
class Node:
    """One graph entry, as small as the pass can keep it."""

    uuid: str
    parent: int | str | None  # the parent's node index once seen, else its uuid (missing so far)
    line: int
    offset: int
    kind: str
    session: str | None
    sidechain: bool
    msg_id: str | None
    tool_uses: tuple[str, ...]
    tool_results: tuple[str, ...]
    user_kind: str  # prompt | tool_result | local | summary | text | "" (not a user entry)
    duplicate: bool = False


class EntryGraph:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def resolve(self, parent: str | None) -> int | str | None:
        """A parent uuid as the node index it names when seen already."""
        return self.index.get(parent, parent) if parent is not None else None

    def add(self, node: Node) -> int | None:
        """Append ``node``; the line that used its uuid first when it is a duplicate."""
        first = self.index.get(node.uuid)
        if first is not None:
            node.duplicate = True
        else:
            self.index[node.uuid] = len(self.nodes)
        self.nodes.append(node)
        return self.nodes[first].line if first is not None else None

    def copy(self) -> EntryGraph:
        twin = EntryGraph()
        twin.nodes = [Node(**{k: getattr(n, k) for k in Node.__slots__}) for n in self.nodes]
        twin.index = dict(self.index)
        return twin

    def missing_parents(self, findings: Findings) -> None:
        for node in self.nodes:
            if isinstance(node.parent, str) and node.parent not in self.index and not node.duplicate:
                findings.add(
                    CR.PARENT_MISSING,
                    f"{node.kind} {node.uuid} names parent {node.parent}, which is not in the file",
                    node.offset,
                    node.line,
                )

    def active_chain(self, session: str | None) -> list[int]:
        """§1.7: the latest entry of the session (not a sidechain, not a replayed uuid) back to
        its root. Measured (lane): resume continues from the newest entry, attachments included."""
        leaf = next(
            (
                i
                for i in range(len(self.nodes) - 1, -1, -1)
                if not self.nodes[i].duplicate
                and not self.nodes[i].sidechain
                and self.nodes[i].session == session
            ),
            None,
        )
        chain: list[int] = []
        seen: set[int] = set()
        current = leaf
        while current is not None and current not in seen:
            seen.add(current)
            chain.append(current)
            node = self.nodes[current]
            if node.parent is None:
                break
            found = self.parent_index(node)
            if found is None and node.tool_results:
                # Measured (lane `damaged-orphan-result`): a tool_result entry whose parent is
                # gone is bridged to the entry before it in the file; other entries end the chain.
                found = self.previous(current, session)
            current = found
        chain.reverse()
        return chain

    def parent_index(self, node: Node) -> int | None:
        parent = node.parent
        if parent is None or isinstance(parent, int):
            return parent
        return self.index.get(parent)

    def previous(self, index: int, session: str | None) -> int | None:
        for i in range(index - 1, -1, -1):
            node = self.nodes[i]
            if not node.duplicate and not node.sidechain and node.session == session:
                return i
        return None

    def groups(self, session: str | None) -> dict[str, list[int]]:
        """The entries of each streamed reply (same ``message.id``) in the session (§1.9)."""
        groups: dict[str, list[int]] = {}
        for i, node in enumerate(self.nodes):
            if (
                node.msg_id is not None
                and not node.duplicate
                and not node.sidechain
                and node.session == session
            ):
                groups.setdefault(node.msg_id, []).append(i)
        return groups

    def branch_check(self, session: str | None, findings: Findings) -> int:
        """Count conversation branches (rewinds, forks) and flag those that grew interleaved."""
        children = self._children(session)
        last = self._last_descendants()
        branches = 0
        for parent, kids in children.items():
            if len(kids) < 2:
                continue
            siblings = [
                k
                for k in kids
                if self.nodes[k].msg_id is None
                or sum(1 for o in kids if self.nodes[o].msg_id == self.nodes[k].msg_id) == 1
            ]
            if len(siblings) < 2:
                continue
            branches += len(siblings) - 1
            spans = sorted((k, last[k]) for k in siblings)
            for (_, end), (start, _) in itertools.pairwise(spans):
                if start < end:
                    node = self.nodes[start]
                    findings.add(
                        CR.CONCURRENT_WRITERS,
                        f"the branch starting here and the one before it (from line "
                        f"{self.nodes[parent].line}) were appended interleaved",
                        node.offset,
                        node.line,
                    )
                    break
        return branches

    def _children(self, session: str | None) -> dict[int, list[int]]:
        children: dict[int, list[int]] = {}
        for i, node in enumerate(self.nodes):
            if node.duplicate or node.sidechain or node.session != session or node.parent is None:
                continue
            parent = self.parent_index(node)
            if parent is None:
                continue
            if node.tool_results or (node.msg_id is not None and node.msg_id == self.nodes[parent].msg_id):
                continue  # a result beside its call, or the next block of one streamed reply (§1.9)
            children.setdefault(parent, []).append(i)
        return children

    def _last_descendants(self) -> list[int]:
        last = list(range(len(self.nodes)))
        for i in range(len(self.nodes) - 1, -1, -1):
            node = self.nodes[i]
            parent = self.parent_index(node)
            if parent is not None and parent < i and not node.duplicate:
                last[parent] = max(last[parent], last[i])
        return last
