"""The single streaming pass over a Claude Code transcript: entries, their graph, the findings.

Fed complete lines with their byte offsets (the store ring reads), it keeps one small record
per graph entry (uuid, parent, line, message id, tool ids) and the file-wide facts; ``finish``
picks the active chain resume uses (spec agent-formats §1.7: the latest entry of the session
back to its root), reattaches the results of parallel calls that hang off side branches (§1.9),
and classifies the file. Pure: no file I/O.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.errors import Address
from sesstool.core.jsonline import LineError, loads
from sesstool.core.model import Usage
from sesstool.core.rules import Finding, Severity
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.rules import RULES

_SEVERITY = {r.id: r.severity for r in RULES}
_PHYSICAL_SEVERITY = {R.TORN_TAIL: Severity.WARNING}

Json = dict[str, Any]


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


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: str  # compact JSON, cut to a screen line
    line: int
    entry: str  # uuid of the assistant entry that carries it


@dataclass(frozen=True, slots=True)
class Compaction:
    line: int
    uuid: str
    trigger: str | None
    pre_tokens: int | None
    logical_parent: str | None
    logical_parent_in_file: bool
    preserved: tuple[str, ...]
    anchor: str | None


@dataclass(frozen=True, slots=True)
class Closing:
    """What resume appends to the active chain (spec agent-formats §0, §4)."""

    dangling: tuple[ToolCall, ...]  # in chain order: one interrupted tool_result each
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
    dangling: tuple[ToolCall, ...]
    orphan_results: tuple[str, ...]
    compactions: tuple[Compaction, ...]
    subagent_calls: int
    sidechain_entries: int
    usage: Usage
    first_time: str | None
    last_time: str | None
    chain: tuple[int, ...]  # line numbers of the active chain, root first
    reattached: tuple[int, ...]  # off-chain lines derive needs (parallel siblings, results, preserved)
    leaf: str | None
    closing: Closing
    branches: int
    findings: tuple[Finding, ...]
    verdict: str  # clean | interrupted | torn | corrupt
    verdict_reason: str
    verdict_rule: str | None  # the rule of the finding that decided it


class TranscriptScanner:
    """Feed ``line(data, offset, lineno)`` for every complete line, then ``finish``."""

    def __init__(
        self,
        path: str,
        expected_session: str | None = None,
        max_depth: int = 1024,
        subagent: bool = False,
        keep_raw: bool = False,
    ) -> None:
        """``subagent``: the file is a subagent's side file (``<session>/subagents/agent-*.jsonl``):
        its entries are all sidechain entries, and resume leaves its dangling calls as they are (§0)."""
        self.path = path
        self.subagent = subagent
        self.keep_raw = keep_raw
        self.raw: dict[int, bytes] = {}  # derive: the graph lines, kept only when asked
        self._current = b""
        self.expected_session = expected_session
        self.max_depth = max_depth
        self.nodes: list[Node] = []
        self.index: dict[str, int] = {}
        self.findings: list[Finding] = []
        self.sessions: dict[str, int] = {}
        self.versions: dict[str, int] = {}
        self.version_at: dict[str, tuple[int, int]] = {}  # where each version first wrote
        self.cwds: dict[str, None] = {}
        self.branches_seen: dict[str, None] = {}
        self.models: dict[str, None] = {}
        self.by_type: dict[str, int] = {}
        self.unknown: dict[str, int] = {}
        self.calls: dict[str, ToolCall] = {}
        self.results: dict[str, int] = {}  # tool_use_id -> node index of the first result
        self.usage_by_message: dict[str, tuple[int, int, int, int]] = {}
        self.compactions: list[Compaction] = []
        self.first_time: str | None = None
        self.last_time: str | None = None
        self.last_envelope: dict[str, tuple[tuple[str, Any], ...]] = {}
        self.last_prompt_id: dict[str, str] = {}
        self.subagent_calls = 0
        self.sidechain_entries = 0
        self.lines = 0
        self.committed = 0

    # -- the pass ---------------------------------------------------------------------------------

    def feed_lines(self, lines: Iterable[bytes], offset: int, lineno: int) -> None:
        for data in lines:
            self.line(data, offset, lineno)
            offset += len(data) + 1
            lineno += 1

    def line(self, data: bytes, offset: int, lineno: int) -> None:
        self.lines = lineno
        self.committed = offset + len(data) + 1
        if data.startswith(b"\0"):
            stripped = data.lstrip(b"\0")
            run = len(data) - len(stripped)
            self._find(
                R.NUL_BYTES,
                f"run of {run} NUL bytes (an append whose blocks were never written)",
                offset,
                lineno,
                Severity.ERROR,
            )
            if not stripped:
                return
            offset, data = offset + run, stripped
        if not data.strip():
            return
        self._current = data
        try:
            value = loads(data, self.max_depth)
        except LineError as err:
            if err.rule in (R.INVALID_JSON, R.INVALID_UTF8):
                self._find(
                    "claude-fragment",
                    f"line does not decode ({err.message}): the CLI skips it",
                    offset,
                    lineno,
                )
            else:
                self._find(err.rule, err.message, offset, lineno, Severity.ERROR)
            return
        if not isinstance(value, dict):
            self._find(R.NOT_AN_OBJECT, "line is JSON but not an object", offset, lineno, Severity.ERROR)
            return
        self._entry(value, offset, lineno)

    def _entry(self, entry: Json, offset: int, lineno: int) -> None:
        kind = entry.get("type")
        if not isinstance(kind, str):
            self._find("claude-entry-shape", "entry has no string `type`", offset, lineno)
            return
        self.by_type[kind] = self.by_type.get(kind, 0) + 1
        session = entry.get("sessionId")
        if isinstance(session, str) and session not in self.sessions:
            self.sessions[session] = lineno
        version = entry.get("version")
        if isinstance(version, str):
            if version not in self.versions:
                self.version_at[version] = (offset, lineno)
            self.versions[version] = self.versions.get(version, 0) + 1
        stamp = entry.get("timestamp")
        if isinstance(stamp, str):
            if self.first_time is None or stamp < self.first_time:
                self.first_time = stamp
            if self.last_time is None or stamp > self.last_time:
                self.last_time = stamp
        if kind not in vocab.CHAIN_TYPES:
            if kind not in vocab.METADATA_TYPES:
                if kind not in self.unknown:
                    self._find(
                        "claude-unknown-type",
                        f"entry type {kind!r} is not one sesstool knows; kept as is",
                        offset,
                        lineno,
                    )
                self.unknown[kind] = self.unknown.get(kind, 0) + 1
            return
        uuid = entry.get("uuid")
        parent = entry.get("parentUuid")
        if not (parent is None or isinstance(parent, str)):
            self._find("claude-entry-shape", f"{kind} entry whose parentUuid is not a string", offset, lineno)
            return
        if not isinstance(uuid, str):
            # Measured (lane `damaged-entry-shape`): the CLI still uses such an entry (it can be
            # the leaf); nothing can name it as a parent.
            self._find("claude-entry-shape", f"{kind} entry without a string uuid", offset, lineno)
            uuid = f"<no uuid: line {lineno}>"
        for key in ("cwd",):
            if isinstance(entry.get(key), str):
                self.cwds[entry[key]] = None
        if isinstance(entry.get("gitBranch"), str):
            self.branches_seen[entry["gitBranch"]] = None
        sidechain = entry.get("isSidechain") is True
        if not self.nodes and sidechain and isinstance(entry.get("agentId"), str):
            self.subagent = True  # a subagent's own file, whatever its name: it starts on its sidechain
        if sidechain:
            self.sidechain_entries += 1
            sidechain = not self.subagent  # in a subagent's own file the sidechain is the chain
        message = entry.get("message")
        blocks = _blocks(message)
        msg_id = None
        tool_uses: list[str] = []
        tool_results: list[str] = []
        user_kind = ""
        if kind == "assistant" and isinstance(message, dict):
            msg_id = message.get("id") if isinstance(message.get("id"), str) else None
            model = message.get("model")
            if isinstance(model, str) and model != vocab.SYNTHETIC_MODEL:
                self.models[model] = None
            usage = message.get("usage")
            if isinstance(usage, dict) and msg_id is not None:
                self.usage_by_message[msg_id] = (
                    _int(usage.get("input_tokens")),
                    _int(usage.get("output_tokens")),
                    _int(usage.get("cache_read_input_tokens")),
                    _int(usage.get("cache_creation_input_tokens")),
                )
            for block in blocks:
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    tool_uses.append(block["id"])
                    name = block["name"] if isinstance(block.get("name"), str) else "?"
                    if name in ("Agent", "Task"):
                        self.subagent_calls += 1
                    if block["id"] not in self.calls:
                        self.calls[block["id"]] = ToolCall(
                            block["id"], name, _compact(block.get("input")), lineno, uuid
                        )
        elif kind == "user":
            for block in blocks:
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    tool_results.append(block["tool_use_id"])
            user_kind = _user_kind(entry, message, tool_results)
            prompt_id = entry.get("promptId")
            if user_kind == "prompt" and isinstance(prompt_id, str) and isinstance(session, str):
                self.last_prompt_id[session] = prompt_id
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            meta = _dict(entry.get("compactMetadata"))
            preserved = _dict(meta.get("preservedMessages"))
            uuids = preserved.get("uuids")
            uuids = uuids if isinstance(uuids, list) else []
            logical = entry.get("logicalParentUuid")
            self.compactions.append(
                Compaction(
                    lineno,
                    uuid,
                    meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
                    meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None,
                    logical if isinstance(logical, str) else None,
                    isinstance(logical, str) and logical in self.index,
                    tuple(u for u in uuids if isinstance(u, str)),
                    preserved.get("anchorUuid") if isinstance(preserved.get("anchorUuid"), str) else None,
                )
            )
        node = Node(
            uuid,
            self.index.get(parent, parent) if parent is not None else None,
            lineno,
            offset,
            kind,
            session if isinstance(session, str) else None,
            sidechain,
            msg_id,
            tuple(tool_uses),
            tuple(tool_results),
            user_kind,
        )
        if uuid in self.index:
            node.duplicate = True
            first = self.nodes[self.index[uuid]].line
            self._find(
                "claude-duplicate-uuid", f"uuid {uuid} was already used by line {first}", offset, lineno
            )
        else:
            self.index[uuid] = len(self.nodes)
            if isinstance(session, str) and not sidechain:
                self.last_envelope[session] = _envelope(entry)
        for tool_id in tool_results:
            if not sidechain:
                if tool_id in self.results and not node.duplicate:
                    first = self.nodes[self.results[tool_id]].line
                    self._find(
                        "claude-concurrent-writers",
                        f"a second result for {tool_id} (the first is on line {first}): two writers "
                        "appended to this session at once; resume uses the first",
                        offset,
                        lineno,
                    )
                self.results.setdefault(tool_id, len(self.nodes))
        self.nodes.append(node)
        if self.keep_raw:
            self.raw[lineno] = self._current

    def _find(
        self, rule: str, message: str, offset: int | None, line: int | None, severity: Severity | None = None
    ) -> None:
        sev = (
            severity
            if severity is not None
            else _SEVERITY.get(rule, _PHYSICAL_SEVERITY.get(rule, Severity.ERROR))
        )
        self.findings.append(Finding(rule, sev, message, Address(self.path, offset, line)))

    # -- the end ----------------------------------------------------------------------------------

    def copy(self) -> TranscriptScanner:
        """An independent scanner in this state, without findings (repair checks its closers on it)."""
        twin = TranscriptScanner(self.path, self.expected_session, self.max_depth, self.subagent, False)
        for key in ("lines", "committed", "first_time", "last_time", "subagent_calls", "sidechain_entries"):
            setattr(twin, key, getattr(self, key))
        twin.nodes = [Node(**{k: getattr(n, k) for k in Node.__slots__}) for n in self.nodes]
        for key in (
            "index", "sessions", "versions", "version_at", "cwds", "branches_seen", "models", "by_type",
            "unknown",
            "calls", "results", "usage_by_message", "last_envelope", "last_prompt_id",
        ):  # fmt: skip
            setattr(twin, key, dict(getattr(self, key)))
        twin.compactions = list(self.compactions)
        return twin

    def entries(self, scan: TranscriptScan) -> dict[int, Json]:
        """The decoded entries derive needs (kept with ``keep_raw``)."""
        found: dict[int, Json] = {}
        for line in (*scan.chain, *scan.reattached):
            raw = self.raw.get(line)
            if raw is not None:
                value = loads(raw, self.max_depth)
                if isinstance(value, dict):
                    found[line] = value
        return found

    def finish(
        self, torn: tuple[int, int, int] | None = None, physical: Iterable[Finding] = ()
    ) -> TranscriptScan:
        """``torn`` is the reader's partial last line (offset, length, line number);
        ``physical`` the reader's findings (a torn zstd frame, a line too long, …)."""
        if torn is not None:
            offset, length, line = torn
            self._find(
                R.TORN_TAIL,
                f"last line has no newline: {length} bytes of a torn entry",
                offset,
                line,
                Severity.WARNING,
            )
        self.findings.extend(physical)
        session = self._session()
        if len(self.sessions) > 1:
            others = [s for s in self.sessions if s != session]
            first_other = min(self.sessions[s] for s in others)
            self._find(
                "claude-several-sessions",
                f"{len(self.sessions)} session ids in one file; resume follows {session}, "
                f"not {', '.join(others)}",
                None,
                first_other,
            )
        for node in self.nodes:
            if isinstance(node.parent, str) and node.parent not in self.index and not node.duplicate:
                self._find(
                    "claude-parent-missing",
                    f"{node.kind} {node.uuid} names parent {node.parent}, which is not in the file",
                    node.offset,
                    node.line,
                )
        chain = self._chain(session)
        chain_set = set(chain)
        groups = self._groups(session)
        on_chain_msgs: set[str] = set()
        reattached: set[int] = set()
        chain_uses: dict[str, None] = {}  # ordered, unique
        for idx in chain:
            node = self.nodes[idx]
            if node.kind != "assistant":
                continue
            if node.msg_id is None:
                chain_uses.update(dict.fromkeys(node.tool_uses))
            elif node.msg_id not in on_chain_msgs:
                on_chain_msgs.add(node.msg_id)
                for member in groups.get(node.msg_id, [idx]):
                    if member not in chain_set:
                        reattached.add(member)
                    chain_uses.update(dict.fromkeys(self.nodes[member].tool_uses))
        dangling: list[ToolCall] = []
        for tool_id in chain_uses:
            result = self.results.get(tool_id)
            if result is None:
                call = self.calls[tool_id]
                if self.subagent:
                    self._find(
                        "claude-subagent-dangling",
                        f"{call.name} call {tool_id} has no result; the CLI leaves a subagent's file so",
                        self.nodes[self.index[call.entry]].offset,
                        call.line,
                    )
                    continue
                dangling.append(call)
                self._find(
                    "claude-dangling-tool-use",
                    f"{call.name} call {tool_id} has no result; resume appends an interrupted result",
                    self.nodes[self.index[call.entry]].offset,
                    call.line,
                )
            elif result not in chain_set:
                reattached.add(result)
        issued = set(chain_uses)
        orphans: list[str] = []
        for idx in chain:
            node = self.nodes[idx]
            for tool_id in node.tool_results:
                if tool_id not in issued:
                    orphans.append(tool_id)
                    self._find(
                        "claude-orphan-tool-result",
                        f"result for {tool_id} has no tool_use on the active chain; resume drops it",
                        node.offset,
                        node.line,
                    )
        for compaction in self.compactions:
            if self.index.get(compaction.uuid) in chain_set:
                for preserved in compaction.preserved:
                    if preserved in self.index:
                        reattached.add(self.index[preserved])
        last_message = next(
            (self.nodes[i] for i in reversed(chain) if self.nodes[i].kind in ("user", "assistant")), None
        )
        waiting = (
            not self.subagent
            and last_message is not None
            and last_message.kind == "user"
            and last_message.user_kind != "local"
        )
        if waiting and not dangling:
            assert last_message is not None
            self._find(
                "claude-unanswered-turn",
                "the conversation ends on a user turn with no reply; resume appends "
                f"{vocab.NO_RESPONSE_TEXT!r}",
                last_message.offset,
                last_message.line,
            )
        branches = self._branch_check(session)
        versions = tuple(sorted(self.versions.items(), key=lambda kv: vocab.version_key(kv[0])))
        if versions:
            newest = versions[-1][0]
            note = ""
            if vocab.version_key(newest) > vocab.version_key(vocab.MEASURED_VERSION):
                note = f" (newer than {vocab.MEASURED_VERSION}, the version sesstool was measured against)"
            self._find(
                "claude-writer-version",
                "written by Claude Code " + ", ".join(v for v, _ in versions) + note,
                *self.version_at[newest],  # where the newest version first wrote
            )
        leaf = self.nodes[chain[-1]] if chain else None
        envelope = self.last_envelope.get(session or "", ())
        closing = Closing(
            tuple(dangling),
            bool(dangling) or waiting,
            leaf.uuid if leaf is not None else None,
            envelope,
            self.last_prompt_id.get(session or ""),
            self.last_time,
        )
        findings = tuple(sorted(self.findings, key=_finding_order))
        verdict, reason, decided_by = _verdict(findings)
        usage = [0, 0, 0, 0, 0]  # core.model.Usage's counts: Claude Code logs no reasoning tokens
        for values in self.usage_by_message.values():
            for i, v in enumerate(values):
                usage[i] += v
        results_in_session = sum(1 for t in self.results)
        return TranscriptScan(
            path=self.path,
            lines=self.lines,
            committed=self.committed,
            torn_bytes=torn[1] if torn else 0,
            session_id=session,
            sessions=tuple(self.sessions),
            versions=versions,
            cwds=tuple(self.cwds),
            git_branches=tuple(self.branches_seen),
            models=tuple(self.models),
            by_type=tuple(sorted(self.by_type.items())),
            entries=len(self.nodes),
            turns=sum(
                1 for n in self.nodes if n.user_kind == "prompt" and not n.sidechain and not n.duplicate
            ),
            tool_uses=len(self.calls),
            tool_results=results_in_session,
            answered=sum(1 for t in self.calls if t in self.results),
            dangling=tuple(dangling),
            orphan_results=tuple(orphans),
            compactions=tuple(self.compactions),
            subagent_calls=self.subagent_calls,
            sidechain_entries=self.sidechain_entries,
            usage=Usage(*usage),
            first_time=self.first_time,
            last_time=self.last_time,
            chain=tuple(self.nodes[i].line for i in chain),
            reattached=tuple(sorted(self.nodes[i].line for i in reattached)),
            leaf=leaf.uuid if leaf is not None else None,
            closing=closing,
            branches=branches,
            findings=findings,
            verdict=verdict,
            verdict_reason=reason,
            verdict_rule=decided_by,
        )

    def _session(self) -> str | None:
        if self.expected_session is not None and self.expected_session in self.sessions:
            return self.expected_session
        return next(iter(self.sessions), None)

    def _chain(self, session: str | None) -> list[int]:
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
            found = self._parent_index(node)
            if found is None and node.tool_results:
                # Measured (lane `damaged-orphan-result`): a tool_result entry whose parent is
                # gone is bridged to the entry before it in the file; other entries end the chain.
                found = self._previous(current, session)
            current = found
        chain.reverse()
        return chain

    def _parent_index(self, node: Node) -> int | None:
        parent = node.parent
        if parent is None or isinstance(parent, int):
            return parent
        return self.index.get(parent)

    def _previous(self, index: int, session: str | None) -> int | None:
        for i in range(index - 1, -1, -1):
            node = self.nodes[i]
            if not node.duplicate and not node.sidechain and node.session == session:
                return i
        return None

    def _groups(self, session: str | None) -> dict[str, list[int]]:
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

    def _branch_check(self, session: str | None) -> int:
        """Count conversation branches (rewinds, forks) and flag those that grew interleaved."""
        children: dict[int, list[int]] = {}
        for i, node in enumerate(self.nodes):
            if node.duplicate or node.sidechain or node.session != session or node.parent is None:
                continue
            parent = self._parent_index(node)
            if parent is None:
                continue
            if node.tool_results or (node.msg_id is not None and node.msg_id == self.nodes[parent].msg_id):
                continue  # a result beside its call, or the next block of one streamed reply (§1.9)
            children.setdefault(parent, []).append(i)
        last = list(range(len(self.nodes)))
        for i in range(len(self.nodes) - 1, -1, -1):
            node = self.nodes[i]
            parent = self._parent_index(node)
            if parent is not None and parent < i and not node.duplicate:
                last[parent] = max(last[parent], last[i])
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
                    self._find(
                        "claude-concurrent-writers",
                        f"the branch starting here and the one before it (from line "
                        f"{self.nodes[parent].line}) were appended interleaved",
                        node.offset,
                        node.line,
                    )
                    break
        return branches


def _finding_order(f: Finding) -> tuple[int, int, str]:
    line = f.address.line if f.address.line is not None else 0
    return (line, f.address.offset or 0, f.rule)


def _verdict(findings: tuple[Finding, ...]) -> tuple[str, str, str | None]:
    verdict_of = {r.id: r.verdict for r in RULES}
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        return "corrupt", errors[0].message, errors[0].rule
    torn = [f for f in findings if f.rule in (R.TORN_TAIL, R.ZSTD_TORN_FRAME)]
    if torn:
        return "torn", torn[0].message, torn[0].rule
    open_ = [f for f in findings if verdict_of.get(f.rule) == "interrupted"]
    if open_:
        return "interrupted", open_[0].message, open_[0].rule
    return "clean", "the active chain ends with a reply and every call on it has a result", None


def _blocks(message: Any) -> list[Json]:
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _user_kind(entry: Json, message: Any, results: list[str]) -> str:
    if entry.get("isCompactSummary") is True:
        return "summary"
    if results:
        return "tool_result"
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = next((t for t in texts if isinstance(t, str)), "")
    if text.startswith(vocab.LOCAL_COMMAND_PREFIXES):
        return "local"
    if (
        entry.get("isMeta") is True
        or entry.get("origin") is not None
        or text.startswith("[Request interrupted")
    ):
        return "text"
    return "prompt"


def _envelope(entry: Json) -> tuple[tuple[str, Any], ...]:
    fields: list[tuple[str, Any]] = [("isSidechain", entry.get("isSidechain", False))]
    fields.extend((key, entry[key]) for key in vocab.ENVELOPE_TAIL if key in entry)
    if "slug" in entry:
        fields.append(("slug", entry["slug"]))
    return tuple(fields)


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _compact(value: Any) -> str:
    from sesstool.core.jsonline import dumps

    text = dumps(value).decode("utf-8", "replace")
    return text if len(text) <= 200 else text[:199] + "…"
