"""The streaming pass over a Codex rollout, reading it as Codex's loader reads it.

``RolloutRecorder::load_rollout_items`` (agent-formats §3.4): blank lines are skipped; a line
that is not JSON, or not a ``{timestamp, type, payload}`` rollout line, is skipped and counted
(each one is a finding with its address saying Codex drops it); the first ``session_meta`` is
canonical and must come first (0.171 refuses "does not start with session metadata"). Fed the
store readers' batches and physical issues; memory holds the open state only (pending calls,
open turns, counters), never the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from sesstool.core import rule_ids as R
from sesstool.core.dropped import Dropped
from sesstool.core.errors import Address
from sesstool.core.first_seen import FirstSeen, Tally
from sesstool.core.humanize import chosen, chosen_repr
from sesstool.core.model import ScanResult, Usage
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch, FramingFact, PhysicalIssue, ReadSummary
from sesstool.core.rules import RULES as CORE_RULES
from sesstool.core.rules import Finding, Rule
from sesstool.dialects.codex import rule_ids as CX
from sesstool.dialects.codex.ending import CONTINUED, scan_result, tail_of, verdict_of
from sesstool.dialects.codex.history import HistoryBuilder
from sesstool.dialects.codex.model import CodexCall, CodexFacts, OpenTurn
from sesstool.dialects.codex.open_turns import OpenTurns
from sesstool.dialects.codex.timeline import CodexTimeline
from sesstool.dialects.codex.vocabulary import (
    CALL_TYPES,
    HISTORY_MODES,
    KNOWN_CLI_VERSION,
    LINE_START,
    META_FACTS,
    OUTPUT_TYPES,
    RESPONSE_ITEM_TYPES,
    ROLLOUT_ITEM_TYPES,
    RULES,
    TURN_END_EVENTS,
    USAGE_KEYS,
    cli_version,
    is_legacy_meta,
    is_rollout_line,
)
from sesstool.dialects.codex.waiting import Record, Waiting, record_of
from sesstool.store.frame_runs import FrameRuns

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

CODEX_RULES: dict[str, Rule] = {r.id: r for r in RULES}
_NUL_RUN = b"\0" * 8
# Reader findings that are dsh layout rules (spec §9.2), not Codex's: Codex reads a .jsonl.zst as
# one plaintext stream across frames (a line may span frames, the first frame is not a header
# frame, so the reader's facts on frame 0 set no rule either), and its compression worker
# writes frames without a content checksum (observed).
_NOT_CODEX_RULES = frozenset({R.ZSTD_FRAME_BOUNDARY, R.ZSTD_NO_CHECKSUM})


def rule(rule_id: str) -> Rule:
    return CODEX_RULES.get(rule_id) or CORE_RULES[rule_id]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


_EVENTS = frozenset({"task_started", "task_complete", "turn_aborted", "thread_rolled_back"})


def _usage(total: dict[str, Any] | None) -> Usage | None:
    return None if total is None else Usage.of(total, USAGE_KEYS)


# Response item types that need nothing beyond their count (calls, outputs and unknown types do).
_PLAIN_ITEMS = RESPONSE_ITEM_TYPES - CALL_TYPES.keys() - OUTPUT_TYPES


def _call(call_id: str, record: Record) -> CodexCall:
    kind, name, arguments, item_id, offset, lineno, turn_id = record
    return CodexCall(
        call_id=call_id,
        kind=kind,
        name=name,
        arguments=arguments,
        item_id=item_id,
        line=lineno,
        offset=offset,
        turn_id=turn_id,
    )


def _frames_file() -> SpillFile:
    from sesstool.store.spill import SpillFile  # sqlite3: only a hostile layout of zstd frames

    return SpillFile("a rollout's zstd frames")


class CodexScanner:
    """One streaming pass over one rollout (``feed`` batches and issues, then ``finish``)."""

    def __init__(self, path: str, options: ScanOptions | None = None) -> None:
        self.path = path
        self.options = options or ScanOptions()
        by_address = self.options.message_addresses
        self._history = HistoryBuilder(by_address) if self.options.collect_messages else None
        self._rows = CodexTimeline.rows_to(self.options.timeline_sink)  # inspect --timeline: streamed
        self._meta_line: bytes | None = None
        self._body_offset: int | None = None
        self._stop_offset: int | None = None
        self._last_seq: int | None = None
        self._last_turn_end: int | None = None
        self.findings: list[Finding] = []
        self.dropped = Dropped()  # past ``options.max_findings``: not kept, still weighed
        self.stopped = False
        self.committed = 0
        self._lines = 0
        self._blank = 0
        self._skipped = 0
        self._first_seen = False  # a non-blank line was seen
        self._meta: dict[str, Any] | None = None
        self._legacy: dict[str, str] | None = None  # the id of a legacy rollout's bare session meta
        self._meta_problem: tuple[str, str, Address] | None = None
        # the first FIRST_SEEN line and item types the log chose (first_seen.py, issue 11 item 1)
        self._by_type = Tally()
        self._by_item = Tally()
        # call id -> a small record of the call (waiting.py), made a CodexCall at the end
        self._pending = Waiting()
        self._turns = OpenTurns()  # turn id -> OpenTurn (open_turns.py), spilled past its SPILL_AT
        # the zstd frame of each line, for the findings made at the end (store/frame_runs.py)
        self._frames = FrameRuns(_frames_file)
        self._turn_id: str | None = None
        self._started = self._completed = self._aborted = 0
        self._calls = self._answered = self._orphans = 0
        self._compactions = self._rollbacks = 0
        self._usage_total: dict[str, Any] | None = None  # the last token_count total
        self._model: str | None = None
        self._first_time: str | None = None
        self._last_time: str | None = None
        self._last_ordinal: int | None = None
        self._fatal: PhysicalIssue | None = None
        self._unknown_reported: FirstSeen[None] = FirstSeen()
        self._defect = False
        self._nonblank = False
        self._handlers = {
            "session_meta": self._session_meta,
            "compacted": self._compacted,
            "turn_context": self._turn_context,
        }

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, item: Batch | PhysicalIssue) -> None:
        if isinstance(item, PhysicalIssue):
            self._physical(item)
        else:
            self.feed_lines(*item)

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        # The hot loop: one decode, three lookups and one dispatch per well-formed line.
        if self.stopped:
            return
        self._frames.seen(lineno, frame)
        at = self.options.at_seq
        if at is not None and lineno - 1 + len(lines) > at + 1:
            keep = max(0, at + 1 - (lineno - 1))
            lines = lines[:keep]
            self.stopped = True
            self._stop_offset = offset + sum(len(line) + 1 for line in lines)
        loads = orjson.loads
        by_type = self._by_type.kept  # the common case inline; a new type: ``Tally.count``
        by_item = self._by_item.kept
        handlers = self._handlers
        history, rows = self._history, self._rows
        seen = self._first_seen
        last: Any = None
        for line in lines:
            try:
                obj = loads(line)
                kind = obj["type"]
                payload = obj["payload"]
                if type(kind) is not str or type(obj["timestamp"]) is not str:
                    raise TypeError
            except (orjson.JSONDecodeError, TypeError, KeyError, IndexError):
                self._odd(line, offset, lineno, frame)
            else:
                if not seen:
                    seen = self._first_seen = True
                    self._first_line(obj, line, offset, lineno, frame)
                if kind in by_type:
                    by_type[kind] += 1
                else:
                    self._by_type.count(kind)
                last = obj
                if history is not None:
                    history.feed(obj, offset)
                if rows is not None:
                    rows.record(obj, lineno, offset)
                # The two kinds that make up most lines are routed here, by their payload type,
                # so that a message or an event nothing tracks costs no call at all.
                if kind == "event_msg":
                    if type(payload) is dict:
                        event = payload.get("type")
                        if event == "token_count":
                            info = payload.get("info")
                            total = info.get("total_token_usage") if type(info) is dict else None
                            if type(total) is dict:
                                self._usage_total = total  # turned into Usage in finish()
                        elif event in _EVENTS:
                            self._event(payload, event, offset, lineno)
                elif kind == "response_item":
                    if type(payload) is dict:
                        item = payload.get("type")
                        if type(item) is not str:
                            item = "?"
                        if item in by_item:
                            by_item[item] += 1
                        else:
                            self._by_item.count(item)
                        if item not in _PLAIN_ITEMS:
                            self._response_item(payload, item, offset, lineno, frame)
                else:
                    handler = handlers.get(kind)
                    if handler is not None:
                        handler(payload, offset, lineno, frame)
                    elif kind not in ROLLOUT_ITEM_TYPES:
                        self._unknown("line type", kind, offset, lineno, frame)
            offset += len(line) + 1
            lineno += 1
        self._lines += len(lines)
        if lines:
            self._last_seq = lineno - 2
        self.committed = offset
        if last is not None:
            self._last_time = last["timestamp"]
            ordinal = last.get("ordinal")
            self._last_ordinal = ordinal if type(ordinal) is int else None

    def clean_so_far(self) -> bool:
        return not self._defect

    def _physical(self, issue: PhysicalIssue) -> None:
        if issue.blank and issue.offset is not None and issue.length is not None:
            # a bulk run of empty lines (store.lines): skipped as Codex skips each one
            self._lines += issue.lines
            self._blank += issue.lines
            self.committed = issue.offset + issue.length
            return
        if issue.rule == R.ZSTD_TORN_FRAME:
            return  # the summary's torn frame becomes the tail finding in finish()
        if issue.rule in _NOT_CODEX_RULES or isinstance(issue, FramingFact):
            return
        if issue.fatal:
            self._fatal = issue
            self.stopped = True
        self._defect = True
        address = Address(self.path, issue.offset, issue.line, issue.frame, issue.frame_offset)
        if issue.lines and issue.length is not None:
            # a bulk run of NUL filler lines (store.lines): each one is a line Codex skips
            self._lines += issue.lines
            self._skipped += issue.lines
            self.committed = issue.offset + issue.length if issue.offset is not None else self.committed
            self._add(
                CX.NUL_RUN,
                f"{issue.lines} lines of NUL bytes only ({issue.length} bytes): Codex skips them on load",
                address,
            )
            return
        self._add(issue.rule, issue.message, address)

    def _add(self, rule_id: str, message: str, address: Address) -> None:
        finding = Finding(rule_id, rule(rule_id).severity, message, address)
        if len(self.findings) < self.options.max_findings:
            self.findings.append(finding)
            return
        # Past the limit as the core scanner does: counted, the first of each kind remembered, so
        # that the verdict, --fail-on and the totals are the ones every finding gives.
        self.dropped.add_finding(finding)

    def _address(self, offset: int, lineno: int, frame: int | None) -> Address:
        return Address(self.path, offset, lineno, frame)

    # -- one line ------------------------------------------------------------------------------

    def _first_line(
        self, obj: dict[str, Any], line: bytes, offset: int, lineno: int, frame: int | None
    ) -> None:
        if self._legacy is not None:
            return  # a rollout line after a legacy meta: the legacy finding says it all
        self._first_time = obj["timestamp"]
        if obj["type"] == "session_meta" and lineno == 1:
            self._meta_line = line  # the header a fork rewrites: its bytes, decoded when asked
            self._body_offset = offset + len(line) + 1
        if obj["type"] != "session_meta":
            self._no_meta_first(obj["type"], offset, lineno, frame)

    def _odd(self, line: bytes, offset: int, lineno: int, frame: int | None) -> None:
        """A line that is blank (skipped silently, as Codex does) or not a rollout line."""
        if not line.strip():
            self._blank += 1
            return
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            obj = None
        if self._legacy is not None:
            self._legacy_line(obj)
        elif not self._first_seen and is_legacy_meta(obj):
            self._enter_legacy(obj, self._address(offset, lineno, frame))
        else:
            self._undecodable(line, obj, offset, lineno, frame)

    def _enter_legacy(self, meta: dict[str, Any], address: Address) -> None:
        """A pre-envelope rollout (agent-formats §3.3): Codex 0.171 decodes none of its lines."""
        self._legacy = {"id": meta["id"]}  # its id: what a scan reports of it (not its objects)
        self._first_seen = self._nonblank = True
        self._first_time = meta["timestamp"]
        self._by_type.count("legacy session meta")
        self._add(
            CX.LEGACY_ROLLOUT,
            "a pre-envelope rollout (a bare session meta, bare response items and record_type state "
            "lines, as Codex wrote before openai/codex PR #1600): Codex 0.171 decodes none of its "
            'lines and refuses to resume it ("rollout at … is empty"); sesstool shows what it holds '
            "and writes nothing from it",
            address,
        )

    def _legacy_line(self, obj: Any) -> None:
        """One line after a legacy session meta, as the legacy loader told them apart: a state
        snapshot, or a bare response item (it skipped what was not JSON)."""
        if isinstance(obj, dict) and obj.get("record_type") == "state":
            kind = "legacy state"
        elif isinstance(obj, dict) and isinstance(obj.get("type"), str):
            kind = "legacy response item"
            self._by_item.count(obj["type"])
        else:
            kind = "legacy unreadable line"
            self._skipped += 1
        self._by_type.count(kind)

    def _turn_context(self, payload: Any, offset: int, lineno: int, frame: int | None) -> None:
        if isinstance(payload, dict) and isinstance(payload.get("model"), str):
            self._model = payload["model"]

    def _undecodable(self, line: bytes, obj: Any, offset: int, lineno: int, frame: int | None) -> None:
        self._skipped += 1
        self._defect = True
        self._nonblank = True
        address = self._address(offset, lineno, frame)
        if _NUL_RUN in line:
            count = line.count(0)
            self._add(
                CX.NUL_RUN,
                f"{count} NUL byte(s) in a {len(line)}-byte line: Codex skips this line on load",
                address,
            )
            return
        again = line.find(LINE_START, 1)
        if again > 0 and obj is None:
            try:
                rest = orjson.loads(line[again:])
            except orjson.JSONDecodeError:
                rest = None
            if is_rollout_line(rest):
                self._add(
                    CX.INTERLEAVED_LINE,
                    f"{again} byte(s) of a partial line, then a complete {rest['type']} line, written "
                    "into one line: Codex skips both (the complete one is lost to resume)",
                    address,
                )
                return
        what = "not valid JSON" if obj is None else "JSON but not a rollout line {timestamp, type, payload}"
        self._add(
            CX.UNDECODABLE_LINE,
            f"line is {what}: Codex skips it on load (counted as a "
            "parse error) and its content is lost to resume",
            address,
        )

    def _no_meta_first(self, kind: str, offset: int, lineno: int, frame: int | None) -> None:
        if self._meta_problem is None and self._meta is None:
            self._meta_problem = (
                CX.MISSING_SESSION_META,
                f"the first line is {chosen_repr(kind)}, not session_meta: Codex 0.171 refuses the rollout "
                '("does not start with session metadata")',
                self._address(offset, lineno, frame),
            )

    def _session_meta(self, payload: Any, offset: int, lineno: int, frame: int | None) -> None:
        address = self._address(offset, lineno, frame)
        if self._meta is not None or self._meta_problem is not None:
            if self._meta is not None:
                self._add(
                    CX.SESSION_META_REPEATED,
                    "a later session_meta: the first one stays "
                    "canonical, but Codex 0.171 drops every history item before this line on "
                    "resume",
                    address,
                )
            return
        if (
            not isinstance(payload, dict)
            or not isinstance(payload.get("id"), str)
            or not isinstance(payload.get("cwd"), str)
        ):
            self._meta_problem = (
                CX.SESSION_META_INVALID,
                'session_meta has no string id or cwd: Codex fails with "failed to parse thread ID '
                'from rollout file"',
                address,
            )
            self._meta = {}
            return
        # the string members a scan reports, not the payload's objects (issue 11 item 1)
        self._meta = {key: value for key in META_FACTS if isinstance(value := payload.get(key), str)}
        mode = payload.get("history_mode")
        if mode is not None and mode not in HISTORY_MODES:
            self._add(
                CX.UNKNOWN_HISTORY_MODE,
                f"history_mode {chosen_repr(mode)} is unknown to Codex 0.171: it refuses to load the rollout",
                address,
            )
        version = cli_version(payload.get("cli_version"))
        if version is not None and version > KNOWN_CLI_VERSION:
            self._add(
                CX.NEWER_CLI_VERSION,
                f"written by Codex {payload['cli_version']}, newer than "
                "0.171.0: read as 0.171 reads it (unknown items tolerated)",
                address,
            )

    def _unknown(self, label: str, kind: object, offset: int, lineno: int, frame: int | None) -> None:
        if not self._unknown_reported.fresh(what := f"{label} {kind!r}", None):  # told apart whole
            return
        # past FIRST_SEEN kinds one not kept is said again at each line: it may not be the first
        where = "first seen here" if what in self._unknown_reported else "one of more than 64 such kinds"
        said = f"{label} {chosen_repr(kind)}"
        message = f"{said} is unknown to Codex 0.171 ({where}; tolerated, never sent to the model)"
        self._add(CX.UNKNOWN_ITEM_TYPE, message, self._address(offset, lineno, frame))

    def _response_item(
        self, payload: dict[str, Any], kind: str, offset: int, lineno: int, frame: int | None
    ) -> None:
        """A call, an output, or an item type 0.171 does not know (the others need nothing)."""
        if kind in CALL_TYPES:
            call_id = payload.get("call_id")
            if type(call_id) is str:  # a local_shell_call without call_id is never paired (models.rs)
                self._calls += 1
                self._pending.add(call_id, record_of(payload, offset, lineno, self._turn_id))
        elif kind in OUTPUT_TYPES:
            call_id = _text(payload.get("call_id"))
            if call_id is not None and self._pending.pop(call_id):
                self._answered += 1
            else:
                self._orphans += 1
                self._add(
                    CX.OUTPUT_WITHOUT_CALL,
                    f"{kind} for call_id {chosen_repr(call_id)}: no call "
                    "with that id is waiting for an output; Codex drops it from the prompt",
                    self._address(offset, lineno, frame),
                )
        else:
            self._unknown("response item type", kind, offset, lineno, frame)

    def _dangling(self) -> Sequence[CodexCall]:
        return self._pending.view(_call)

    def _event(self, payload: dict[str, Any], kind: str, offset: int, lineno: int) -> None:
        if kind == "task_started":
            self._started += 1
            turn_id = _text(payload.get("turn_id"))
            self._turn_id = turn_id
            root, started = _text(payload.get("root_turn_id")), _int(payload.get("started_at"))
            self._turns.start(OpenTurn(turn_id, root, started, lineno, offset))
        elif kind in TURN_END_EVENTS:
            self._last_turn_end = lineno - 1
            if kind == "task_complete":
                self._completed += 1
            else:
                self._aborted += 1
            self._turns.end(_text(payload.get("turn_id")))
        elif kind == "thread_rolled_back":
            self._rollbacks += 1

    def _compacted(self, payload: Any, offset: int, lineno: int, frame: int | None) -> None:
        self._compactions += 1
        history = payload.get("replacement_history") if isinstance(payload, dict) else None
        if not isinstance(history, list):
            return
        # The replacement history becomes the base: only its own calls can still be dangling.
        self._pending.drop()
        pending = self._pending
        for item in history:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            call_id = _text(item.get("call_id"))
            if kind in CALL_TYPES and call_id is not None:
                pending.add(call_id, record_of(item, offset, lineno, self._turn_id))
            elif kind in OUTPUT_TYPES and call_id is not None:
                pending.pop(call_id)

    # -- the end ----------------------------------------------------------------------------------

    def finish(self, summary: ReadSummary | None) -> ScanResult:
        tail, torn = tail_of(self.path, self.committed, summary)
        if torn is not None:
            self.findings.append(torn)
        if not self._first_seen and not self._nonblank and self._fatal is None:
            self._add(
                CX.EMPTY_FILE,
                'no non-empty line: Codex 0.171 refuses the file ("… is empty")',
                Address(self.path, 0, 1, summary.first_frame if summary is not None else None),
            )
        elif all(x is None for x in (self._meta, self._meta_problem, self._fatal, self._legacy)):
            self._meta_problem = (
                CX.MISSING_SESSION_META,
                "no session_meta line: Codex 0.171 "
                'refuses the rollout ("does not start with session metadata")',
                Address(self.path, 0, 1),
            )
        if self._meta_problem is not None:
            rule_id, message, address = self._meta_problem
            self.findings.insert(0, Finding(rule_id, rule(rule_id).severity, message, address))
        dangling = self._dangling()
        for call in dangling:  # read back from the spill file past waiting.SPILL_AT
            self._add(
                CX.CALL_WITHOUT_OUTPUT,
                f"{call.kind} {chosen(call.name or '')} call_id {chosen(call.call_id)} has no output: Codex "
                'sends {"output": "aborted"} right after it on every resume',
                Address(self.path, call.offset, call.line, self._frames.frame_of(call.line)),
            )
        open_turns = self._turns.view()
        for turn in open_turns:  # read back from the spill file past open_turns.SPILL_AT
            self._add(
                CX.UNFINISHED_TURN,
                f"turn {chosen(turn.turn_id)} started and never completed or "
                "aborted: the CLI was killed (Codex writes no turn_aborted after SIGKILL)",
                Address(self.path, turn.offset, turn.line, self._frames.frame_of(turn.line)),
            )
        verdict, reason, where = verdict_of([*self.findings, *self.dropped.firsts.values()])
        meta = self._meta or self._legacy or {}
        facts = CodexFacts(
            thread_id=_text(meta.get("id")),
            forked_from_id=_text(meta.get("forked_from_id")),
            cli_version=_text(meta.get("cli_version")),
            originator=_text(meta.get("originator")),
            source=_text(meta.get("source")),
            model_provider=_text(meta.get("model_provider")),
            model=self._model,
            cwd=_text(meta.get("cwd")),
            history_mode=_text(meta.get("history_mode")),
            lines=self._lines,
            blank_lines=self._blank,
            skipped_lines=self._skipped,
            by_type=tuple(sorted(self._by_type.items())),
            by_item=tuple(sorted(self._by_item.items())),
            turns_started=self._started,
            turns_completed=self._completed,
            turns_aborted=self._aborted,
            open_turns=open_turns,
            calls=self._calls,
            answered=self._answered,
            dangling=dangling,
            orphan_outputs=self._orphans,
            usage=_usage(self._usage_total),
            compactions=self._compactions,
            rollbacks=self._rollbacks,
            first_time=self._first_time,
            last_time=self._last_time,
            last_ordinal=self._last_ordinal,
            more=tuple(
                name for name, seen in (("by_type", self._by_type), ("by_item", self._by_item)) if seen.more
            ),
        )
        return scan_result(self, facts, tail, (verdict, reason, where))

    def continuation(self) -> CodexScanner:
        """A copy in the state the committed prefix left, without findings or tail: a repair's
        closers are fed to it and must leave nothing open."""
        twin = CodexScanner(self.path)
        for name in CONTINUED:
            setattr(twin, name, getattr(self, name))
        twin._by_type = self._by_type.copy()
        twin._by_item = self._by_item.copy()
        twin._pending = self._pending.copy()
        twin._turns = self._turns.copy()
        return twin
