"""The single streaming pass over a Claude Code transcript: entries, their graph, the findings.

Fed complete lines with their byte offsets (the store ring reads), it keeps one small record
per graph entry (entry_graph.py) and the file-wide facts; ``finish`` picks the active chain
resume uses (spec agent-formats §1.7: the latest entry of the session back to its root),
reattaches the results of parallel calls that hang off side branches (§1.9, active_chain.py),
and classifies the file (findings.py). Pure: no file I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from sesstool.core import rule_ids as R
from sesstool.core.first_seen import FirstSeen, Tally, held_key
from sesstool.core.humanize import chosen, chosen_repr
from sesstool.core.jsonline import LineError, loads
from sesstool.core.rules import Finding, Severity
from sesstool.core.timeline import SpanCollector
from sesstool.dialects.claude import active_chain, entry_graph
from sesstool.dialects.claude import entry_fields as fields
from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.compactions import Compactions
from sesstool.dialects.claude.entry_graph import (
    ASSISTANT,
    LOCAL,
    RESULTS,
    SIDECHAIN,
    SYSTEM,
    USER,
    EntryGraph,
)
from sesstool.dialects.claude.findings import Findings, in_order, verdict
from sesstool.dialects.claude.held import Store
from sesstool.dialects.claude.scan_facts import Closing, Compaction, ToolCall, TranscriptScan
from sesstool.dialects.claude.tool_calls import ToolBook
from sesstool.dialects.claude.usage_tally import UsageTally
from sesstool.store.spill import IntArray

Json = dict[str, Any]


class TranscriptScanner:
    """Feed ``line(data, offset, lineno)`` for every complete line, then ``finish``."""

    def __init__(
        self,
        path: str,
        expected_session: str | None = None,
        max_depth: int = 1024,
        subagent: bool = False,
        keep_raw: bool = False,
        max_findings: int | None = None,
    ) -> None:
        """``subagent``: the file is a subagent's side file (``<session>/subagents/agent-*.jsonl``):
        its entries are all sidechain entries, and resume leaves its dangling calls as they are (§0).
        ``max_findings``: the findings kept (the first in order; findings.Findings), None: all."""
        self.path = path
        self.subagent = subagent
        self.keep_raw = keep_raw
        self.raw: dict[int, bytes] = {}  # derive: the graph lines, kept only when asked
        self._current = b""
        self.expected_session = expected_session
        self.max_depth = max_depth
        self.held = Store()  # the spill file, opened when first needed (held.py, entry_graph.SPILL_AT)
        self.graph = EntryGraph(self.held)
        self.spill_at = entry_graph.SPILL_AT  # past it the graph and the book move to a spill file
        self.found = Findings(path, max_findings, self.held)
        # the values the log chooses, the first FIRST_SEEN of each (first_seen.py, issue 11 item 1)
        self.sessions: FirstSeen[int] = FirstSeen()  # session id -> its first line
        self.first_session: str | None = None  # whole: resume may choose it (§1.6, §1.8), as ``leaves``
        self.expected_at: int | None = None  # the first line of ``expected_session``, kept or not
        self.versions = Tally()
        self.version_at: dict[object, tuple[int, int]] = {}  # by held_key: where each kept one first wrote
        self.cwds: FirstSeen[None] = FirstSeen()
        self.branches_seen: FirstSeen[None] = FirstSeen()
        self.models: FirstSeen[None] = FirstSeen()
        self.by_type = Tally()
        self.book = ToolBook(self.held)
        self.usage = UsageTally()
        self.turns = 0
        # of the sessions resume can choose (``_candidate``): session -> uuid of its last entry (the leaf)
        self.leaves: dict[str | None, str] = {}
        self.compactions = Compactions(self.held)  # in the spill file past held.HELD_AT (§1.6)
        self.first_time: str | None = None
        self.last_time: str | None = None
        self.last_envelope: dict[str, tuple[tuple[str, Any], ...]] = {}
        self.last_prompt_id: dict[str, str] = {}
        self.subagent_calls = 0
        self.sidechain_entries = 0
        self.lines = 0
        self.committed = 0
        self.timeline: SpanCollector | None = None  # inspect --timeline: fed every decoded entry

    @property
    def findings(self) -> list[Finding]:
        return self.found.items

    # -- the pass ---------------------------------------------------------------------------------

    def feed_lines(self, lines: Iterable[bytes], offset: int, lineno: int) -> None:
        for data in lines:
            self.line(data, offset, lineno)
            offset += len(data) + 1
            lineno += 1
        self._current = b""  # the batch's last line, let go (a scanner outlives its read)

    def line(self, data: bytes, offset: int, lineno: int) -> None:
        self.lines = lineno
        self.committed = offset + len(data) + 1
        if data.startswith(b"\0"):
            stripped = data.lstrip(b"\0")
            run = len(data) - len(stripped)
            self.found.add(
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
                message = f"line does not decode ({err.message}): the CLI skips it"
                self.found.add(CR.FRAGMENT, message, offset, lineno)
            else:
                self.found.add(err.rule, err.message, offset, lineno, Severity.ERROR)
            return
        if not isinstance(value, dict):
            self.found.add(R.NOT_AN_OBJECT, "line is JSON but not an object", offset, lineno, Severity.ERROR)
            return
        if self.timeline is not None:
            self.timeline.record(value, lineno, offset)
        self._entry(value, offset, lineno)

    def _entry(self, entry: Json, offset: int, lineno: int) -> None:
        kind = entry.get("type")
        if not isinstance(kind, str):
            self.found.add(CR.ENTRY_SHAPE, "entry has no string `type`", offset, lineno)
            return
        new = kind not in self.by_type  # past FIRST_SEEN types one not kept is said again
        self.by_type.count(kind)
        self._file_facts(entry, offset, lineno)
        if kind in vocab.CHAIN_TYPES:
            self._graph_entry(kind, entry, offset, lineno)
        elif kind not in vocab.METADATA_TYPES and new:
            message = f"entry type {chosen_repr(kind)} is not one sesstool knows; kept as is"
            self.found.add(CR.UNKNOWN_TYPE, message, offset, lineno)

    def _file_facts(self, entry: Json, offset: int, lineno: int) -> None:
        """Session ids, writer versions and the time span: every entry type carries them."""
        session = entry.get("sessionId")
        if isinstance(session, str):
            self.sessions.add(session, lineno)
            if self.first_session is None:
                self.first_session = session
            if session == self.expected_session and self.expected_at is None:
                self.expected_at = lineno
        version = entry.get("version")
        if isinstance(version, str) and self.versions.count(version):
            self.version_at[held_key(version)] = (offset, lineno)
        stamp = entry.get("timestamp")
        if isinstance(stamp, str):
            if self.first_time is None or stamp < self.first_time:
                self.first_time = stamp
            if self.last_time is None or stamp > self.last_time:
                self.last_time = stamp

    def _graph_entry(self, kind: str, entry: Json, offset: int, lineno: int) -> None:
        uuid = entry.get("uuid")
        parent = entry.get("parentUuid")
        if not (parent is None or isinstance(parent, str)):
            self.found.add(CR.ENTRY_SHAPE, f"{kind} entry whose parentUuid is not a string", offset, lineno)
            return
        if not isinstance(uuid, str):
            # Measured (lane `damaged-entry-shape`): the CLI still uses such an entry (it can be
            # the leaf); nothing can name it as a parent.
            self.found.add(CR.ENTRY_SHAPE, f"{kind} entry without a string uuid", offset, lineno)
            uuid = f"<no uuid: line {lineno}>"
        if isinstance(entry.get("cwd"), str):
            self.cwds.add(entry["cwd"], None)
        if isinstance(entry.get("gitBranch"), str):
            self.branches_seen.add(entry["gitBranch"], None)
        sidechain = entry.get("isSidechain") is True
        if not len(self.graph) and sidechain and isinstance(entry.get("agentId"), str):
            self.subagent = True  # a subagent's own file, whatever its name: it starts on its sidechain
        if sidechain:
            self.sidechain_entries += 1
            sidechain = not self.subagent  # in a subagent's own file the sidechain is the chain
        session = fields.as_str(entry.get("sessionId"))
        node = len(self.graph)
        message = entry.get("message")
        flags = SIDECHAIN if sidechain else 0
        msg_id: str | None = None
        calls: list[ToolCall] = []
        results: list[str] = []
        prompt = False
        if kind == "assistant":
            flags |= ASSISTANT
            if isinstance(message, dict):
                msg_id, calls = self._assistant(message, uuid, lineno)
        elif kind == "user":
            results, flags, prompt = self._user(entry, message, session, flags)
        elif kind == "system":
            flags |= SYSTEM
            if entry.get("subtype") == "compact_boundary":
                self._compaction(entry, uuid, lineno)
        if self.graph.store is None and (node >= self.spill_at or self._keys_long()):
            store = self.held()
            self.graph.spill(store)
            self.book.spill(store)
        first = self.graph.add(uuid, parent, kind, (lineno, offset), flags, entry.get("timestamp"))
        self.graph.session(node, session if self._candidate(session) else self._other())
        if msg_id is not None:
            self.graph.message(node, msg_id)
        for block, call in enumerate(calls):
            self.book.call(node, call, block)
        self.turns += prompt and not sidechain and first < 0
        self._added(node, uuid, first, entry, results)

    def _keys_long(self) -> bool:
        """The text keys held (odd uuids, tool ids: as long as the log chose them) are past
        ``entry_graph.SPILL_BYTES``: the graph and the book move to the spill file then too."""
        return len(self.graph.uuids.arena) + len(self.book.ids.arena) > entry_graph.SPILL_BYTES

    def _assistant(self, message: Json, uuid: str, lineno: int) -> tuple[str | None, list[ToolCall]]:
        msg_id = fields.as_str(message.get("id"))
        model = message.get("model")
        if isinstance(model, str) and model != vocab.SYNTHETIC_MODEL:
            self.models.add(model, None)
        usage = message.get("usage")
        if isinstance(usage, dict) and msg_id is not None:
            self.usage.add(msg_id, usage)
        calls: list[ToolCall] = []
        for block in fields.blocks(message):
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                name = block["name"] if isinstance(block.get("name"), str) else "?"
                if name in ("Agent", "Task"):
                    self.subagent_calls += 1
                calls.append(ToolCall(block["id"], name, fields.compact(block.get("input")), lineno, uuid))
        return msg_id, calls

    def _user(
        self, entry: Json, message: Any, session: str | None, flags: int
    ) -> tuple[list[str], int, bool]:
        results = [
            block["tool_use_id"]
            for block in fields.blocks(message)
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str)
        ]
        kind = fields.user_kind(entry, message, results)
        flags |= USER | (RESULTS if results else 0) | (LOCAL if kind == "local" else 0)
        prompt_id = entry.get("promptId")
        if (
            kind == "prompt"
            and isinstance(prompt_id, str)
            and session is not None
            and self._candidate(session)
        ):
            self.last_prompt_id[session] = prompt_id
        return results, flags, kind == "prompt"

    def _compaction(self, entry: Json, uuid: str, lineno: int) -> None:
        meta = fields.as_dict(entry.get("compactMetadata"))
        preserved = fields.as_dict(meta.get("preservedMessages"))
        uuids = preserved.get("uuids")
        logical = fields.as_str(entry.get("logicalParentUuid"))
        self.compactions.append(
            Compaction(
                lineno,
                uuid,
                fields.as_str(meta.get("trigger")),
                meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None,
                logical,
                logical is not None and self.graph.find(logical) >= 0,
                tuple(u for u in uuids if isinstance(u, str)) if isinstance(uuids, list) else (),
                fields.as_str(preserved.get("anchorUuid")),
            )
        )

    def _added(self, node: int, uuid: str, first: int, entry: Json, results: list[str]) -> None:
        graph = self.graph
        line, offset, flags = graph.lines[node], graph.offset(node), graph.flags[node]
        session = graph.session_of(node)
        if first >= 0:
            message = f"uuid {chosen(uuid)} was already used by line {graph.lines[first]}"
            self.found.add(CR.DUPLICATE_UUID, message, offset, line)
        elif not flags & SIDECHAIN and self._candidate(session):
            self.leaves[session] = uuid
            if session is not None:
                self.last_envelope[session] = fields.envelope(entry)
        # Measured (Claude Code 2.1.332, docs/format.md): a result answers its call and is sent
        # whether or not its entry says `isSidechain`; only the leaf's choice skips sidechains.
        parent = graph.parent(node) if results else -1
        for tool_id in results:
            earlier = self.book.result(node, tool_id, parent, first >= 0)
            if earlier >= 0 and first < 0:
                self.found.add(
                    CR.CONCURRENT_WRITERS,
                    f"a second result for {chosen(tool_id)} (the first is on line {graph.lines[earlier]}): "
                    "two writers appended to this session at once; resume uses the first",
                    offset,
                    line,
                )
        if self.keep_raw:
            self.raw[line] = self._current

    # -- the end ----------------------------------------------------------------------------------

    def copy(self) -> TranscriptScanner:
        """An independent scanner in this state, without findings (repair checks its closers on it)."""
        twin = TranscriptScanner(
            self.path, self.expected_session, self.max_depth, self.subagent, False, self.found.limit
        )
        twin.spill_at, twin.held = self.spill_at, self.held
        for key in (
            "lines", "committed", "first_time", "last_time", "subagent_calls", "sidechain_entries", "turns",
            "expected_at", "first_session",
        ):  # fmt: skip
            setattr(twin, key, getattr(self, key))
        twin.graph, twin.book, twin.usage = self.graph.copy(), self.book.copy(), self.usage.copy()
        for key in ("sessions", "versions", "cwds", "branches_seen", "models", "by_type"):
            setattr(twin, key, getattr(self, key).copy())
        for key in ("version_at", "last_envelope", "last_prompt_id", "leaves"):
            setattr(twin, key, dict(getattr(self, key)))
        twin.compactions = self.compactions.copy()
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
        self, torn: tuple[int, int, int] | None = None, physical: Findings | None = None
    ) -> TranscriptScan:
        """``torn`` is the reader's partial last line (offset, length, line number);
        ``physical`` the reader's findings (a torn zstd frame, a line too long, …). The
        scanner's own state is left as it was: ``finish`` may be asked again."""
        found = self.found.copy()
        if torn is not None:
            offset, length, line = torn
            message = f"last line has no newline: {length} bytes of a torn entry"
            found.add(R.TORN_TAIL, message, offset, line, Severity.WARNING)
        if physical is not None:
            found.absorb(physical)
        session = self._session()
        self._several_sessions(session, found)
        parents_missing = self.graph.missing_parents(found)
        view = active_chain.view(self.graph, session, self.book, self.compactions, self.subagent, found)
        branches = self.graph.branch_check(session, found)
        versions = self._versions(found)
        leaf = self.leaves.get(session) if view.chain else None  # the chain's last entry
        closing = Closing(
            view.dangling,
            bool(view.dangling) or view.waiting,
            leaf,
            self.last_envelope.get(session or "", ()),
            self.last_prompt_id.get(session or ""),
            self.last_time,
        )
        findings = found.kept()
        dropped = found.dropped
        firsts = in_order(dropped.firsts.values())  # each the first of its kind among the dropped
        every_first = in_order((*findings, *firsts))  # as many firsts as all the findings have
        decided, reason, decided_by = verdict(every_first)
        address = next((f.address for f in every_first if f.rule == decided_by), None)
        s = dropped.by_severity
        calls, results, answered = self.book.counts()
        lines = self.graph.lines
        return TranscriptScan(
            path=self.path,
            lines=self.lines,
            committed=self.committed,
            torn_bytes=torn[1] if torn else 0,
            session_id=session,
            sessions=tuple(self.sessions),
            session_index=self._index(session),
            versions=versions,
            cwds=tuple(self.cwds),
            git_branches=tuple(self.branches_seen),
            models=tuple(self.models),
            by_type=tuple(sorted(self.by_type.items())),
            entries=len(self.graph),
            turns=self.turns,
            tool_uses=calls,
            tool_results=results,
            answered=answered,
            dangling=view.dangling,
            left_open=view.left_open,
            orphan_results=view.orphans,
            compactions=self.compactions.copy(),  # the scanner may go on
            subagent_calls=self.subagent_calls,
            sidechain_entries=self.sidechain_entries,
            usage=self.usage.total(),
            first_time=self.first_time,
            last_time=self.last_time,
            chain=_as_lines(view.chain, lines),
            reattached=_marked_lines(view.reattached, lines, self.graph.ints()),
            leaf=leaf,
            closing=closing,
            branches=branches,
            findings=findings,
            dropped=(dropped.count, firsts, (s[0], s[1], s[2])),
            verdict_address=address,
            parents_missing=parents_missing,
            verdict=decided,
            verdict_reason=reason,
            verdict_rule=decided_by,
            more=self._more(),
        )

    def _candidate(self, session: str | None) -> bool:
        """Whether resume can still choose ``session`` (§1.6, §1.8: the expected session when
        the file has it, else the first): only these keep a leaf, an envelope, a prompt id."""
        return session is None or session == self.first_session or session == self.expected_session

    def _other(self) -> str:
        """The one session id the graph gets for the entries of every session resume cannot
        choose (so it numbers at most four): none of the candidates."""
        other = "\0other sessions"
        while other in (self.first_session, self.expected_session):
            other += "\0"
        return other

    def _session(self) -> str | None:
        if self.expected_session is not None and self.expected_at is not None:
            return self.expected_session
        return self.first_session

    def _index(self, session: str | None) -> int | None:
        """Where ``session`` is among the kept session ids (told apart whole), None: not kept."""
        held = held_key(session)
        return next((i for i, (key, _, _) in enumerate(self.sessions.entries()) if key == held), None)

    def _several_sessions(self, session: str | None, found: Findings) -> None:
        count = len(self.sessions) + (session is not None and session not in self.sessions)
        if count > 1 or self.sessions.more:
            held = held_key(session)
            others = [(s, line) for key, s, line in self.sessions.entries() if key != held]
            first_other = min((line for _, line in others), default=self.expected_at)
            many = f"more than {len(self.sessions)}" if self.sessions.more else str(count)
            found.add(  # the kept ids are as quoted already (first_seen.py)
                CR.SEVERAL_SESSIONS,
                f"{many} session ids in one file; resume follows {chosen(session)}, "
                f"not {', '.join(s for s, _ in others)}" + (", …" if self.sessions.more else ""),
                None,
                first_other,
            )

    def _more(self) -> tuple[str, ...]:
        """The facts whose lists stop at ``FIRST_SEEN`` values, by their --json names."""
        cut = (
            ("sessions", self.sessions), ("versions", self.versions), ("cwd", self.cwds),
            ("git_branch", self.branches_seen), ("models", self.models), ("by_type", self.by_type),
        )  # fmt: skip
        return tuple(name for name, seen in cut if seen.more)

    def _versions(self, found: Findings) -> tuple[tuple[str, int], ...]:
        kept = sorted(self.versions.entries(), key=lambda e: vocab.version_key(e[1]))
        versions = tuple((version, n) for _, version, n in kept)  # a long one as quoted
        if versions:
            newest = versions[-1][0]
            note = ""
            if vocab.version_key(newest) > vocab.version_key(vocab.MEASURED_VERSION):
                note = f" (newer than {vocab.MEASURED_VERSION}, the version sesstool was measured against)"
            more = " and more" if self.versions.more else ""
            found.add(
                CR.WRITER_VERSION,
                "written by Claude Code " + ", ".join(v for v, _ in versions) + more + note,
                *self.version_at[kept[-1][0]],  # where the newest version first wrote
            )
        return versions


def _marked_lines(marks: IntArray, lines: IntArray, into: IntArray) -> Sequence[int]:
    """The line numbers of the entries ``marks`` marks, in file order (entries are numbered in
    file order), appended to ``into``: an ``array``, or a ``SpilledArray`` past the graph's
    ``SPILL_AT``."""
    for node, marked in enumerate(marks):
        if marked:
            into.append(lines[node])
    return cast(Sequence[int], into)


def _as_lines(chain: IntArray, lines: IntArray) -> Sequence[int]:
    """The chain's entries as their line numbers, in place (it is as long as the file): an
    ``array``, or a ``SpilledArray`` past the graph's ``SPILL_AT``."""
    for i, node in enumerate(chain):
        chain[i] = lines[node]
    return cast(Sequence[int], chain)
