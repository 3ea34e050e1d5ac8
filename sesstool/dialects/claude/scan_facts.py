"""What one pass over a Claude Code transcript learned: the value types ``TranscriptScan``
hands inspect, validate, derive, repair and fork. Values only: no parsing, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sesstool.core.errors import Address
from sesstool.core.model import Usage
from sesstool.core.rules import Finding
from sesstool.dialects.claude.compactions import Compaction as Compaction
from sesstool.dialects.claude.compactions import Compactions


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: str  # compact JSON, cut to a screen line
    line: int
    entry: str  # uuid of the assistant entry that carries it


@dataclass(frozen=True, slots=True)
class Closing:
    """What resume appends to the active chain (spec agent-formats §0, §4)."""

    dangling: Sequence[ToolCall]  # in chain order: one interrupted tool_result each (held.HeldList)
    no_response: bool  # then the `No response requested.` assistant entry
    parent: str | None  # the entry the first appended entry hangs off when nothing dangles
    envelope: tuple[tuple[str, Any], ...]  # fields copied from the last entry, in order
    prompt_id: str | None
    timestamp: str | None


@dataclass(frozen=True, slots=True)
class TranscriptScan:
    """Everything one pass learned; ``findings`` carry addresses, the rest are facts."""

    path: str
    lines: int
    committed: int  # bytes up to the end of the last complete line
    torn_bytes: int
    session_id: str | None
    sessions: tuple[str, ...]
    versions: tuple[tuple[str, int], ...]
    cwds: tuple[str, ...]
    git_branches: tuple[str, ...]
    models: tuple[str, ...]
    by_type: tuple[tuple[str, int], ...]
    entries: int
    turns: int
    tool_uses: int
    tool_results: int
    answered: int
    # what only hostile input makes long (issue 11 item 1): ``held.HeldList``s, in the spill file
    # past ``held.HELD_AT`` items, equal to the tuples they stand for
    dangling: Sequence[ToolCall]
    left_open: Sequence[ToolCall]  # a subagent's own file: calls without result, left so by resume
    orphan_results: Sequence[str]
    compactions: Compactions  # found by anchor (compactions.py), equal to the tuple it stands for
    subagent_calls: int
    sidechain_entries: int
    usage: Usage
    first_time: str | None
    last_time: str | None
    chain: Sequence[int]  # line numbers of the active chain, root first (an array: it can be long)
    reattached: Sequence[int]  # off-chain lines derive needs (parallel siblings, results, preserved), sorted:
    # an ``array``, or a ``SpilledArray`` past the graph's ``SPILL_AT`` (issue 11 item 1)
    leaf: str | None
    closing: Closing
    branches: int
    findings: tuple[Finding, ...]  # the first ``max_findings`` in order
    dropped: tuple[
        int, tuple[Finding, ...], tuple[int, int, int]
    ]  # of the others: count, firsts, by severity
    verdict_address: Address | None  # of the first finding of the verdict's rule
    parents_missing: Sequence[int]  # lines of the entries whose parent is not in the file (a HeldList)
    verdict: str  # clean | interrupted | torn | corrupt
    verdict_reason: str
    verdict_rule: str | None  # the rule of the finding that decided it
    # the --json names of the lists above cut at ``first_seen.FIRST_SEEN`` values (issue 11 item 1)
    more: tuple[str, ...] = ()
    # where ``session_id`` is among ``sessions`` (told apart whole: a long id is kept as quoted,
    # ``first_seen.py``), None when it is not among them
    session_index: int | None = None
