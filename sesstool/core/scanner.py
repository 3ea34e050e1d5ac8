"""The one streaming pass: validation rules, the projection fold and the statistics (§3–§6).

A ``Scanner`` is fed the reader's batches in order and keeps only the open state (open turn and
step, pending calls, surface node list), never the file. ``finish()`` classifies the tail
(§6.3) and returns a frozen ``ScanResult``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

import orjson

from sesstool.core import mini
from sesstool.core.chunk_rows import RowError, expand_row
from sesstool.core.errors import Address
from sesstool.core.header import MAX_SAFE, Header, decode_header, is_safe_nonneg
from sesstool.core.jsonline import ORJSON_MAX_DEPTH, LineError, duplicate_keys, negative_zero_keys
from sesstool.core.jsonline import loads as loads_checked
from sesstool.core.model import (
    Boundaries,
    Lineage,
    OpenState,
    PendingCall,
    RequestEnvelope,
    ScanResult,
    Stats,
    SurfaceStats,
    Tail,
    TailKind,
    TimelineEntry,
    TimeSpan,
    ToolCallStats,
    Usage,
    Verdict,
)
from sesstool.core.physical import Batch, PhysicalIssue, ReadSummary
from sesstool.core.rules import RULES, Finding, Severity, severity_for
from sesstool.core.seq_ranges import SeqRangeError, SeqSet, decode_seq_set
from sesstool.core.shapes import CHECKERS, stream_records, turn_end_members
from sesstool.core.upgrade.v1 import v0_reader_view
from sesstool.core.vocabulary import (
    ALL_KNOWN,
    PACKED_TAGS,
    RETIRED_V0,
    SURFACE,
    is_known,
)

_NO_TIME = MAX_SAFE + 1
_SEQLESS = PACKED_TAGS | {"session"}
_ENVELOPE = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})
_REPLACE_V0 = frozenset({"op", "start", "end"})
_REPLACE_V3 = frozenset({"op", "startSeq", "endSeq"})
_USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError
# Unsafe integers (§3): a 16-digit run is the cheap C-level sign (2^53 has 16 digits); only the
# lines of a batch that has one are looked at token by token, outside strings.
_DIGIT_MAP = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_INT_TOKEN = re.compile(rb"(?<![\w.+-])-?[0-9]{16,}(?![0-9.eE])")


def _maybe_unsafe_integers(lines: list[bytes]) -> bool:
    return b"\n".join(lines).translate(_DIGIT_MAP).find(_SIXTEEN_DIGITS) >= 0


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What to collect and how strictly to read."""

    fixture: bool = False  # seq/time may be omitted; header optional
    assume_version: int = 0  # fixture mode without a header
    at_seq: int | None = None  # fold only events with seq <= at_seq
    collect_messages: bool = False  # derive: keep the projected messages
    collect_timeline: bool = False  # inspect --timeline
    # where timeline entries go instead of a list kept in the result: anything with ``append``
    # (inspect streams them to its output, issue 11 item 1c)
    timeline_sink: Any = None
    max_findings: int = 1000
    max_depth: int = ORJSON_MAX_DEPTH  # below orjson's own 1024, every line is depth-checked
    dialect: str = "auto"  # "auto" (detected from the first line), "dsh" or "mini"
    strict: bool = False  # also report duplicate object keys (every line takes the careful path)
    filename_version: int | None = None  # version implied by a canonical file name


class _Issue:
    """The first record of §6.3's suspect region, held until EOF decides tail vs corruption."""

    __slots__ = ("address", "message", "proof", "proven", "rule", "start")

    def __init__(self, rule: str, message: str, address: Address, start: int) -> None:
        self.rule = rule
        self.message = message
        self.address = address
        self.start = start
        self.proven = False
        self.proof: str | None = None


class Scanner:
    __slots__ = (
        "_base",
        "_base_line",
        "_envelope_checked",
        "_fixed",
        "_i",
        "_lines",
        "_pos",
        "_seen_once",
        "advertised",
        "advertised_total",
        "answered",
        "at",
        "backwards",
        "body_offset",
        "committed",
        "counts",
        "dangling",
        "dialect",
        "dropped_lines",
        "failed",
        "fast_ok",
        "fatal",
        "findings",
        "findings_dropped",
        "first_time",
        "frame",
        "halt",
        "handlers",
        "header",
        "header_done",
        "issue",
        "last_end_seed",
        "last_time",
        "last_time_text",
        "last_turn",
        "last_turn_end",
        "marker_count",
        "markers",
        "max_time",
        "min_time",
        "never_started",
        "next_seq",
        "next_step",
        "node_type",
        "nodes",
        "open_step",
        "open_turn",
        "open_turn_seq",
        "opt",
        "path",
        "projected",
        "replacements",
        "request_context",
        "request_context_seq",
        "request_header",
        "request_header_seq",
        "resume_seq",
        "seq",
        "shadowed",
        "split_row",
        "started",
        "started_total",
        "steps",
        "stop_offset",
        "stopped",
        "surface",
        "surface_events",
        "timeline",
        "tool_fp",
        "turn_ends",
        "turns",
        "unsupported_version",
        "usage",
        "version",
        "version_le1",
    )

    def __init__(self, path: str, options: ScanOptions | None = None) -> None:
        self.path = path
        self.opt = options or ScanOptions()
        self.at = self.opt.at_seq if self.opt.at_seq is not None else MAX_SAFE + 1
        self.stopped = False
        self.fatal = False
        self.header: Header | None = None
        self.header_done = False
        self.version: int | None = None
        self.version_le1 = False
        self.dialect = "dsh"
        self.last_time_text: str | None = None
        self.unsupported_version = False
        self.findings: list[Finding] = []
        self.findings_dropped = 0
        self._seen_once: set[tuple[str, str]] = set()
        # position of the record being processed
        self._lines: list[bytes] = []
        self._base = 0
        self._base_line = 1
        self._i = 0
        self._pos = (0, 0)  # (index, offset) last computed in this batch: _position walks on
        self._fixed: tuple[int, int] | None = None
        self.halt = False  # stop the fast loop: an issue began or the scan stopped
        self.fast_ok = self.opt.max_depth >= ORJSON_MAX_DEPTH and not self.opt.strict
        self.stop_offset: int | None = None  # --at: where the first unconsumed record starts
        self.last_turn_end: int | None = None
        self.resume_seq: int | None = None
        self.last_end_seed: int | None = None
        self.split_row: tuple[int, int] | None = None
        self.body_offset: int | None = None  # plaintext offset after the header line
        self.frame: int | None = None
        self.seq: int | None = None
        # envelope / contiguity
        self.next_seq = 0
        self.last_time = _NO_TIME  # sentinel above every safe integer: first time is irregular
        self._envelope_checked: int | None = None
        self.committed = 0
        self.issue: _Issue | None = None
        self.dropped_lines = 0
        # relational state (§6.2) and repair registry (§7.1)
        self.open_turn: int | None = None
        self.open_turn_seq: int | None = None
        self.open_step: int | None = None
        self.last_turn = 0
        self.next_step = 1
        self.advertised: dict[str, list[Any]] = {}  # callId -> [step, call_seq, name]
        self.started: dict[str, int] = {}  # callId -> tool/call seq
        # fold (§5)
        self.nodes: list[int] = []
        self.node_type: dict[int, str] = {}
        self.tool_fp: dict[int, int | None] = {}
        self.projected: dict[int, Any] = {}
        self.replacements = 0
        self.shadowed = 0
        self.request_header: Any = None
        self.request_header_seq: int | None = None
        self.request_context: Any = None
        self.request_context_seq: int | None = None
        # statistics
        self.counts: dict[str, int] = {}
        self.turns = 0
        self.turn_ends: dict[str, int] = {}
        self.steps = 0
        self.advertised_total = 0
        self.started_total = 0
        self.answered = 0
        self.failed = 0
        self.dangling = 0
        self.never_started = 0
        self.usage = [0, 0, 0, 0, 0]
        self.first_time: int | None = None
        self.min_time: int | None = None
        self.max_time = -MAX_SAFE
        self.backwards = 0
        self.surface_events = 0
        self.markers: list[tuple[int, bool]] = []  # (seq, tagged) of session/end-seed
        self.marker_count = 0
        self.timeline: Any = None
        if self.opt.timeline_sink is not None:
            self.timeline = self.opt.timeline_sink
        elif self.opt.collect_timeline:
            self.timeline = []
        self.surface: frozenset[str] = SURFACE[0]
        self.handlers: dict[str, Any] = {}

    # -- findings -----------------------------------------------------------------------------

    def address(self, seq: int | None = None) -> Address:
        offset, line = self._position()
        return Address(self.path, offset, line, self.frame, None, seq if seq is not None else self.seq)

    def report(
        self, rule: str, message: str, address: Address | None = None, severity: Severity | None = None
    ) -> None:
        if len(self.findings) >= self.opt.max_findings:
            self.findings_dropped += 1
            return
        sev = severity if severity is not None else severity_for(rule, self.version)
        self.findings.append(Finding(rule, sev, message, address or self.address()))

    def report_once(self, rule: str, key: str, message: str) -> None:
        if (rule, key) not in self._seen_once:
            self._seen_once.add((rule, key))
            self.report(rule, message)

    # -- physical input -----------------------------------------------------------------------

    def feed(self, item: Batch | PhysicalIssue) -> None:
        if type(item) is tuple:
            self.feed_lines(*item)
        else:
            assert isinstance(item, PhysicalIssue)
            self.physical(item)

    def physical(self, issue: PhysicalIssue) -> None:
        address = Address(self.path, issue.offset, issue.line, issue.frame, issue.frame_offset, None)
        if issue.rule == "zstd-header-frame" and self.dialect == mini.DIALECT:
            return  # a dsh framing rule (§9.2): the mini-agent layout has none
        if issue.fatal or issue.rule.startswith("zstd-"):
            # A defect inside a complete frame is corruption wherever it is (§6.3).
            self.report(issue.rule, issue.message, address)
            if issue.fatal:
                self.fatal = True  # the reader stopped: nothing after this was read
            return
        # line-too-long or a run of filler lines: records that cannot be decoded -> §6.3
        # suspect region
        self._fixed = (issue.offset or 0, issue.line or 0)
        self.frame = issue.frame
        self._bad_record(issue.rule, issue.message, address)
        self.dropped_lines += issue.lines - 1  # a bulk run of filler lines (store.lines)
        self._fixed = None

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        if self.stopped:
            return
        self.frame = frame
        self._lines, self._base, self._base_line, self._i = lines, offset, lineno, 0
        self._pos = (0, offset)
        i, n = 0, len(lines)
        while i < n and not self.stopped:
            if self.header_done and self.issue is None and self.next_seq > 0 and self.fast_ok:
                i = self._fast(lines, i)
                if i < n and self.issue is None and not self.stopped:
                    i = self._slow(lines, i, i + 1)  # the one line orjson refused
            else:
                i = self._slow(lines, i, n)
        if self.issue is None and not self.stopped:
            self.committed = offset + sum(map(len, lines)) + len(lines)
        if lines and _maybe_unsafe_integers(lines):
            # after the batch: the header has told the dialect; a --at stop ends the check too
            self._unsafe_integers(lines[: self._i + 1] if self.stopped else lines, offset, lineno, frame)

    def _fast(self, lines: list[bytes], start: int) -> int:
        """The hot path for well-formed records; returns the index of the first line it did not
        consume.

        Decoding runs inside ``map`` and addresses are computed lazily from the line index
        (``_position``), so a clean record costs one decode and one dispatch. A line orjson
        refuses is left to the careful loop, which classifies it (or decodes it by fallback).
        """
        self._i = start - 1
        try:
            self._run(map(_loads, islice(lines, start, None)))
        except _JSONDecodeError:
            return self._i + 1
        return self._i + 1 if self.halt else len(lines)

    def _slow(self, lines: list[bytes], start: int, stop: int) -> int:
        """The header, the first event, undecodable records and the §6.3 suspect region, one
        line at a time; returns as soon as the fast path can take over."""
        for i in range(start, stop):
            self._i = i
            raw = lines[i]
            try:
                obj = loads_checked(raw, self.opt.max_depth)
            except LineError as err:
                self.seq = None
                self._bad_record(err.rule, err.message, None)
                continue
            if self.issue is not None:
                self.dropped_lines += 1
                if type(obj) is dict and obj.get("type") == "turn/end":
                    self.issue.proven = True
                continue
            if self.opt.strict:
                seq = obj.get("seq") if type(obj) is dict else None
                self.seq = seq if type(seq) is int else None
                for key in duplicate_keys(raw):
                    self.report("duplicate-key", f'key "{key}" occurs twice in one object')
            if not self.header_done:
                self._header(obj, raw)
            else:
                first = self.next_seq == 0
                self._event(obj)
                if (
                    first
                    and self.version is not None
                    and self.version >= 4
                    and ("seq" in negative_zero_keys(raw))
                ):
                    self.report("envelope-seq", "seq is -0, which a v4 reader rejects")
            if self.stopped:
                return stop
            if self.header_done and self.issue is None and self.next_seq > 0:
                return i + 1
        return stop

    def _unsafe_integers(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        """Integer literals beyond ±(2^53−1), one warning per line (§3: every number in a log is
        read by a JavaScript harness as a double; orjson reads past 2^64 as a float too)."""
        if self.opt.dialect == "mini" or self.dialect == mini.DIALECT:
            return  # the mini-agent layout is written and read by Python: exact integers
        for i, raw in enumerate(lines):
            if raw.translate(_DIGIT_MAP).find(_SIXTEEN_DIGITS) < 0:
                continue
            big = [
                tok for tok in _INT_TOKEN.findall(_JSON_STRING.sub(b'""', raw)) if abs(int(tok)) > MAX_SAFE
            ]
            if not big:
                continue
            seq: int | None = None
            try:
                obj = _loads(raw)
                seq = obj.get("seq") if type(obj) is dict and type(obj.get("seq")) is int else None
            except _JSONDecodeError:
                continue  # an undecodable line has its own finding
            at = offset + sum(map(len, lines[:i])) + i
            first = big[0].decode()
            more = f" and {len(big) - 1} more" if len(big) > 1 else ""
            self.report(
                "unsafe-integer",
                f"integer {first[:40]}{'…' if len(first) > 40 else ''}{more} is beyond ±(2^53−1): a "
                "JavaScript reader rounds it to the nearest double (a migration rewrites such an "
                "event with that value)",
                Address(self.path, at, lineno + i, frame, None, seq),
            )

    def _position(self) -> tuple[int, int]:
        """(plaintext offset, line number) of the record being processed."""
        if self._fixed is not None:
            return self._fixed
        i = self._i
        at, offset = self._pos
        if i < at:  # rare: a step back; walk from the start of the batch
            at, offset = 0, self._base
        # walk on from the last position asked for: many packed rows in one batch stay linear
        offset += sum(map(len, self._lines[at:i])) + (i - at)
        self._pos = (i, offset)
        return offset, self._base_line + i

    def _bad_record(self, rule: str, message: str, address: Address | None) -> None:
        """§6.3: a record that fails to decode starts the suspect region (unless one exists)."""
        if self.issue is None:
            self.issue = _Issue(rule, message, address or self.address(None), self._position()[0])
            self.halt = True
        self.dropped_lines += 1

    # -- header (§2) --------------------------------------------------------------------------

    def _header(self, obj: Any, raw: bytes) -> None:
        self.header_done = True
        self.seq = None
        if self.opt.fixture and not (isinstance(obj, dict) and obj.get("type") == "session"):
            self._set_version(self.opt.assume_version)
            self._event(obj)
            return
        self.body_offset = self._position()[0] + len(raw) + 1
        if self.opt.dialect == "mini" or (self.opt.dialect == "auto" and mini.is_header(obj)):
            self._mini_header(obj)
            return
        header, problems = decode_header(obj)
        for key in sorted(negative_zero_keys(raw) & {"createdAt", "delegationDepth", "seedLength"}):
            problems.append(("header-field", f"header {key} is -0 (not a non-negative integer)"))
        for rule, message in problems:
            sev = None
            if rule == "header-unknown-key" and header is not None and header.version == 0:
                sev = Severity.INFO
            self.report(rule, message, severity=sev)
        if header is None:
            if any(rule in ("header-newer-version", "header-older-version") for rule, _ in problems):
                self.unsupported_version = True
            self.stopped = self.halt = True  # nothing after an unusable/newer header is read
            return
        self.header = header
        self._set_version(header.version)
        fv = self.opt.filename_version
        if fv is not None and fv != header.version:
            self.report(
                "header-filename-version",
                f"file name identifies v{fv}, but its header identifies v{header.version}",
            )

    def _mini_header(self, obj: Any) -> None:
        """The mini-agent header is the event at seq 0 (mini-agent-format.md "File")."""
        self.dialect = mini.DIALECT
        header, problems = mini.decode_header(obj)
        for rule, message in problems:
            self.report(rule, message)
        if header is None:
            if any(rule in ("header-newer-version", "header-older-version") for rule, _ in problems):
                self.unsupported_version = True
            self.stopped = self.halt = True
            return
        self.header = header
        mini.install(self, header.version)
        self.next_seq = 1
        self.counts[mini.HEADER_TYPE] = 1
        mini.event_time(self, obj, obj.get("time"))

    def _install(self, version: int) -> None:
        if self.dialect == mini.DIALECT:
            mini.install(self, version)
        else:
            self._set_version(version)

    def _set_version(self, version: int) -> None:
        self.version = version
        self.version_le1 = version <= 1
        self.surface = SURFACE[version]
        self.handlers = {
            "turn/start": self._turn_start,
            "turn/end": self._turn_end,
            "step/start": self._step_start,
            "step/end": self._step_end,
            "tool/call": self._tool_call,
            "request/header": self._request_header,
            "request/context": self._request_context,
            "session/end-seed": self._end_seed,
        }
        if version >= 2:
            self.handlers["assistant/attempt"] = self._in_step
        if version >= 4:
            self.handlers["image/offload"] = self._image_offload
        if version <= 1:
            self.handlers["assistant/chunk"] = self._in_step
            self.handlers["todo/write"] = self._in_turn
        if version == 0:
            self.handlers["steering/message"] = self._steering
        for t in self.surface:
            self.handlers[t] = self._surface_event

    # -- records and envelope (§3) ------------------------------------------------------------

    def _seqless(self, obj: dict[str, Any]) -> None:
        """Records without a seq that are still legal rows: packed chunks (§9.3); a header
        record out of place is reported."""
        t = obj.get("type")
        if t == "session":
            self.seq = None
            self._bad_record("header-not-first", "a session header record after the first line", None)
            return
        self.seq = None
        if "seq0" not in obj:
            self._bad_record("packed-row", f"malformed {t} storage row: no seq0", None)
            return
        if self.version is not None and self.version >= 2:
            self.seq = None
            self.report("version-event-type", f"packed {t} rows do not exist in v{self.version} (§9.3)")
            return
        try:
            events = expand_row(obj)
        except RowError as err:
            self._bad_record("packed-row", str(err), None)
            return
        fixed, i = self._fixed, self._i
        self._fixed = self._position()  # every expanded event has the row's address
        try:
            self._run(events)
        finally:
            self._fixed, self._i = fixed, i
        first, last = events.seq0, events.last_seq
        if self.stopped and first < self.next_seq <= last:
            self.split_row = (first, last)  # --at fell inside the row

    def _event(self, obj: dict[str, Any]) -> None:
        """One decoded record through the envelope and dispatch (the careful loop's entry)."""
        i = self._i
        self._i -= 1
        self._run((obj,))
        self._i = i

    def _run(self, objs: Iterable[Any]) -> None:
        """Envelope (§3) and dispatch for decoded records; ``_i`` tracks the current line.

        The common well-formed case takes the fewest steps: the line index, expected seq and
        last time live in locals and are written to the instance only before calling out (a
        handler or an irregularity, which may report) and on the way out. Stops early when
        ``halt`` is raised.
        """
        i, nxt, last, at = self._i, self.next_seq, self.last_time, self.at
        counts: dict[Any, int] = self.counts
        handlers: dict[Any, Any] = self.handlers
        chunks_inline = self.version_le1
        chunks = 0
        open_turn, open_step = self.open_turn, self.open_step
        try:
            for obj in objs:
                i += 1
                if type(obj) is not dict:
                    self._i, self.seq = i, None
                    self._bad_record(
                        "not-an-object", f"record is a JSON {type(obj).__name__}, not an object", None
                    )
                    return
                try:  # subscripts are cheaper than .get; a missing key is rare
                    seq, t, time, data = obj["seq"], obj["type"], obj["time"], obj["data"]
                except KeyError:
                    seq, t = obj.get("seq"), obj.get("type")
                    time, data = obj.get("time"), obj.get("data")
                if seq != nxt or type(seq) is not int or seq > at:
                    self._i, self.next_seq, self.last_time = i, nxt, last
                    seq = self._irregular_seq(obj, seq)
                    nxt, last = self.next_seq, self.last_time  # a packed row advanced them
                    if seq is None:
                        if self.halt:
                            return
                        continue
                nxt = seq + 1
                # Exactly type/seq/time/data is the common shape; anything else gets the full
                # check. (Four keys with seq and data but a misspelt one shows as no type/time.)
                if len(obj) != 4 or "data" not in obj:
                    self._i, self.seq = i, seq
                    self._envelope_extras(obj, obj.keys(), t)
                if type(time) is int and last <= time <= MAX_SAFE:
                    last = time  # the maximum only changes at backward steps
                else:
                    self._i, self.seq, self.last_time = i, seq, last
                    self._irregular_time(obj, time)
                    last = self.last_time
                if t == "assistant/chunk" and chunks_inline:
                    # v0/v1 streams are mostly chunks: their one rule (name the open turn/step,
                    # §6.2) is checked inline to spare a call per chunk.
                    chunks += 1
                    try:
                        named_open = data["turn"] == open_turn and data["step"] == open_step
                    except (KeyError, TypeError, IndexError):
                        named_open = False
                    if not named_open or open_step is None:
                        self._i, self.seq = i, seq
                        self._in_step(obj, seq, t, data)
                    continue
                self._i, self.seq, self.next_seq, self.last_time = i, seq, nxt, last
                try:
                    handler = handlers.get(t)
                except TypeError:  # an unhashable "type"
                    handler = None
                if handler is not None:
                    counts[t] = counts.get(t, 0) + 1
                    handler(obj, seq, t, data)
                    open_turn, open_step = self.open_turn, self.open_step
                else:
                    self._other_event(obj, seq, t)
                if self.halt:
                    return
        finally:
            self._i, self.next_seq, self.last_time = i, nxt, last
            if chunks:
                counts["assistant/chunk"] = counts.get("assistant/chunk", 0) + chunks

    def _irregular_seq(self, obj: dict[str, Any], seq: Any) -> int | None:
        """Not the expected next seq: a packed row or late header, a fixture default, the --at
        stop, or the start of a §6.3 issue."""
        t = obj.get("type")
        if seq is None and isinstance(t, str) and t in _SEQLESS and "seq" not in obj:
            self._seqless(obj)
            return None
        if seq is None and self.opt.fixture:
            if self.next_seq <= self.at:
                return self.next_seq
            self._stop()
            return None
        if type(seq) is not int or not 0 <= seq <= MAX_SAFE:
            self.seq = None
            self._bad_record("envelope-seq", f"seq {seq!r} is not a non-negative safe integer", None)
            return None
        if seq != self.next_seq:
            self.seq = seq
            self._bad_record(
                "seq-gap", f"session event seq {seq} is not contiguous; expected {self.next_seq}", None
            )
            if obj.get("type") == "turn/end" and self.issue is not None and not self.issue.proven:
                # the out-of-place record is itself a turn/end: the region was committed
                self.issue.proven = True
                self.issue.proof = "the record is itself a committed turn/end"
            return None
        self._stop()  # seq > --at
        return None

    def _resumes(self, seq: int) -> None:
        """The first event that starts new work after the last completed turn (§8.3)."""
        if self.last_turn_end is not None and self.resume_seq is None:
            self.resume_seq = seq

    def _stop(self) -> None:
        """--at reached: the record being processed (seq at+1) is not consumed."""
        self.stopped = self.halt = True
        self.stop_offset = self._position()[0]

    def _envelope_extras(self, obj: dict[str, Any], keys: Any, t: Any) -> None:
        """Keys beyond type/seq/time/data: report what does not belong (§3)."""
        if self._envelope_checked == self.seq:
            return
        self._envelope_checked = self.seq
        if not keys <= _ENVELOPE:
            extra = sorted(keys - _ENVELOPE)
            self.report("envelope-key", f"event has keys that do not belong: {extra}")
        if "data" not in keys:
            self.report("envelope-data", "event has no data")
        ignorable = obj.get("ignorable")
        if ignorable is not None and ignorable is not True:
            self.report("envelope-ignorable", f"ignorable must be absent or true, got {ignorable!r}")
        if (
            ("surfaceOp" in keys or "sourceEventSeqs" in keys)
            and isinstance(t, str)
            and t not in self.surface
            and not (t == "steering/message" and self.version == 0)
            and self._known_here(t)
        ):
            self.report(
                "surface-meta-on-log-only", f"{t} is not a surface event but carries surface metadata"
            )

    def _known_here(self, t: Any) -> bool:
        """A type this log's own version (and dialect) knows; others get their own finding."""
        if not isinstance(t, str) or self.version is None:
            return False
        if self.dialect == mini.DIALECT:
            return t in mini.KNOWN
        return is_known(self.version, t)

    def _irregular_time(self, obj: dict[str, Any], time: Any) -> None:
        """The first event's time, a time that went backwards (legal, §3), or a bad time."""
        if self.dialect == mini.DIALECT:
            mini.event_time(self, obj, time)
            return
        if type(time) is int and -MAX_SAFE <= time <= MAX_SAFE:
            if self.first_time is None:
                self.first_time = self.min_time = self.max_time = time
            else:
                self.backwards += 1
                self.max_time = max(self.max_time, self.last_time)  # a peak ends here
                if time < self.min_time:  # type: ignore[operator]
                    self.min_time = time
            self.last_time = time
        elif not (time is None and self.opt.fixture):
            self._envelope_extras(obj, obj.keys(), obj.get("type"))
            self.report("envelope-time", f"time {time!r} is not a safe integer (epoch ms)")

    def _other_event(self, obj: dict[str, Any], seq: int, t: Any) -> None:
        """Types without a handler: known log-only types, ignorable unknowns, refusals (§1.4)."""
        if type(t) is not str:
            self._envelope_extras(obj, obj.keys(), t)
            self.report("envelope-type", f"event type {t!r} is not a string")
            return
        self.counts[t] = self.counts.get(t, 0) + 1
        ignorable = obj.get("ignorable")
        version = self.version
        assert version is not None
        if self.dialect == mini.DIALECT:
            if t in mini.KNOWN:
                return
        elif is_known(version, t):
            if t == "agent/inbox/spliced":
                self._resumes(seq)
            return
        if t in PACKED_TAGS and version <= 1:
            self.seq = None
            self._bad_record(
                "packed-row", f"malformed {t} storage row: keys must be exactly type, seq0, time0, data", None
            )
            return
        if ignorable is True:
            self.report_once(
                "unknown-ignorable-event", t, f'unknown event type "{t}" marked ignorable: kept opaque'
            )
            if ("surfaceOp" in obj or "sourceEventSeqs" in obj) and version < 4:
                self.report(
                    "surface-meta-on-log-only", f"ignorable {t} carries surface metadata (allowed only in v4)"
                )
            return
        if version == 0 and t in RETIRED_V0:
            self.report(
                "retired-event-type",
                f'retired event type "{t}" is refused by v0 readers and by the v0→v1 migration',
            )
        elif t in ALL_KNOWN:
            self.report("version-event-type", f'event type "{t}" does not exist in format v{version}')
        else:
            sid = self.header.id if self.header else None
            self.report(
                "unknown-event-type",
                f'session "{sid}" contains event type "{t}" (seq {seq}) unknown to this '
                "harness and not marked ignorable; refusing to interpret the log",
            )

    def _steering(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        """v0 legacy: a v0 reader turns steering/message into a user/message (§1.3)."""
        legacy = v0_reader_view(obj, self.header.id if self.header else None)
        if legacy is None:
            self.report(
                "event-data",
                "malformed steering/message: expected {turn, message} or {turn, content, source}",
            )
            return
        if "surfaceOp" not in obj:
            # like the v0 reader: the converted user/message must carry a surfaceOp of its own
            legacy = {k: v for k, v in legacy.items() if k != "surfaceOp"}
        self._surface_event(legacy, seq, "user/message", legacy["data"])

    def _image_offload(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        self.report(
            "message-projection-event",
            "image/offload edits projected messages through a plugin interpreter that "
            "sesstool does not have; the derived messages cannot be trusted",
        )

    # -- relational handlers (§6.2) -----------------------------------------------------------

    def _ts(self, data: Any) -> tuple[Any, Any]:
        if type(data) is dict:
            return data.get("turn"), data.get("step")
        self.report("event-data", "event data is not an object")
        return None, None

    def _turn_start(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        turn, _ = self._ts(data)
        if not is_safe_nonneg(turn) or turn < 1:
            self.report("event-data", f"turn/start turn {turn!r} is not a positive integer")
        if self.open_turn is not None:
            self.report("turn-open", f"turn/start {turn} while turn {self.open_turn} is open")
            self._close_step_calls()
        elif turn != self.last_turn + 1:
            self.report(
                "turn-number",
                f"turn/start {turn} after turn {self.last_turn} (expected {self.last_turn + 1})",
            )
        self.turns += 1
        self._resumes(seq)
        self.open_turn = turn if type(turn) is int else self.last_turn + 1
        self.open_turn_seq = seq
        self.last_turn = self.open_turn
        self.open_step = None
        self.next_step = 1
        self.advertised = {}
        self.started = {}
        if self.timeline is not None:
            self.timeline.append(TimelineEntry(seq, self.open_turn, None, t, ""))

    def _turn_end(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        if type(data) is not dict and self.version == 0:
            # The v0 reader takes a non-object turn/end payload as a legacy close of the open
            # turn (the published rc.8 packages accept it; docs/format.md).
            turn: Any = self.open_turn
            kind: Any = "legacy"
        else:
            turn, _ = self._ts(data)
            reason = data.get("reason") if type(data) is dict else None
            kind = reason.get("kind") if type(reason) is dict else None
            if not isinstance(kind, str) or not kind:
                self.report("event-data", "turn/end reason lacks a kind")
                kind = "?"
            else:
                problem = turn_end_members(data, kind, self.version or 0)
                if problem:
                    self.report(*problem)
        self.turn_ends[kind] = self.turn_ends.get(kind, 0) + 1
        if kind == "forked" and self.version is not None and self.version < 4:
            self.report("event-data", "turn/end reason 'forked' exists only in v4")
        if self.open_turn is None or turn != self.open_turn:
            self.report("turn-end-mismatch", f"turn/end {turn} but the open turn is {self.open_turn}")
        if self.open_step is not None:
            self.report("turn-end-step-open", f"turn/end {turn} while step {self.open_step} is open")
        self._close_step_calls()
        self.last_turn_end, self.resume_seq = seq, None
        self.open_turn = None
        self.open_turn_seq = None
        self.open_step = None
        if self.timeline is not None:
            self.timeline.append(TimelineEntry(seq, turn, None, t, kind))

    def _step_start(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        turn, step = self._ts(data)
        if self.open_turn is None or turn != self.open_turn:
            self.report(
                "step-outside-turn", f"step/start names turn {turn} but the open turn is {self.open_turn}"
            )
        if self.open_step is not None:
            self.report("step-open", f"step/start {step} while step {self.open_step} is open")
            self._close_step_calls()
        elif step != self.next_step:
            self.report("step-number", f"step/start {step} (expected {self.next_step})")
        self.steps += 1
        self.open_step = step if type(step) is int else self.next_step
        self.advertised = {}
        self.started = {}

    def _step_end(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        turn, step = self._ts(data)
        if self.open_step is None or turn != self.open_turn or step != self.open_step:
            self.report(
                "step-end-mismatch",
                f"step/end {turn}/{step} but the open step is {self.open_turn}/{self.open_step}",
            )
        self._close_step_calls()
        if type(step) is int:
            self.next_step = step + 1
        self.open_step = None

    def _close_step_calls(self) -> None:
        """A closing boundary: calls still pending stay unresolved (§7.1), counted and noted."""
        advertised, started = self.advertised, self.started
        if advertised or started:
            left = list(dict.fromkeys([*advertised, *started]))
            for cid in left:
                if cid in started:
                    self.dangling += 1
                else:
                    self.never_started += 1
            self.report(
                "unresolved-call",
                f"step closed with {len(left)} tool call(s) never answered: "
                + ", ".join(left[:5])
                + (" …" if len(left) > 5 else ""),
            )
            self.advertised = {}
            self.started = {}

    def _in_step(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        if (
            type(data) is not dict
            or data.get("turn") != self.open_turn
            or data.get("step") != self.open_step
            or self.open_step is None
        ):
            turn, step = self._ts(data)
            self.report(
                "event-outside-step",
                f"{t} names {turn}/{step} but the open step is {self.open_turn}/{self.open_step}",
            )
        elif t == "assistant/attempt":
            p = stream_records(data.get("stream"))
            if p:
                self.report(*p)

    def _in_turn(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        if self.open_turn is None:
            self.report("event-outside-turn", f"{t} outside an open turn")

    def _tool_call(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        self._in_step(obj, seq, t, data)
        cid = data.get("callId") if type(data) is dict else None
        if not isinstance(cid, str) or not cid or not isinstance(data.get("name"), str):
            self.report("event-data", "tool/call needs a non-empty callId and a name")
            return
        if not isinstance(data.get("arguments"), str):
            self.report("event-data", "tool/call arguments must be the raw JSON string")
        self.started_total += 1
        if cid in self.started:
            self.report("tool-call-duplicate", f"tool call {cid} started twice in one step")
        self.started[cid] = seq
        entry = self.advertised.get(cid)
        if entry is not None:
            entry[1] = seq
        if self.timeline is not None:
            self.timeline.append(
                TimelineEntry(seq, self.open_turn, self.open_step, t, f"{data.get('name')} {cid}")
            )

    def _request_header(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        self._in_turn(obj, seq, t, data)
        p = CHECKERS[t](data, self.version or 0)
        if p:
            self.report(*p)
        self.request_header, self.request_header_seq = data, seq

    def _request_context(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        self._in_turn(obj, seq, t, data)
        p = CHECKERS[t](data, self.version or 0)
        if p:
            self.report(*p)
        self.request_context, self.request_context_seq = data, seq

    def _end_seed(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        self.marker_count += 1
        self.last_end_seed = seq
        version = self.version or 0
        if type(data) is not dict:
            self.report("event-data", "session/end-seed data is not an object")
            return
        tagged = data.get("inherited") is True
        if version <= 1 and data:
            self.report("event-data", f"a v{version} session/end-seed carries data {{}}")
        elif version >= 2 and not (data.keys() <= {"inherited"} and data.get("inherited", True) is True):
            self.report("event-data", "session/end-seed data must be {} or {inherited: true}")
        if len(self.markers) < 64 or tagged:
            self.markers.append((seq, tagged))

    # -- surface events and the fold (§5) -----------------------------------------------------

    def _surface_event(self, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
        self.surface_events += 1
        version = self.version
        assert version is not None
        p = CHECKERS[t](data, version)
        if p and version == 0:
            # A v0 reader normalises pre-identity shapes in memory (§1.3); so does the scan.
            legacy = v0_reader_view(obj, self.header.id if self.header else None)
            if legacy is not None:
                obj, data = legacy, legacy["data"]
                p = CHECKERS[t](data, version)
        if p:
            self.report(*p)
        src = obj.get("sourceEventSeqs")
        cited: SeqSet | None = None
        if src is not None:
            if t == "assistant/message" and version >= 2:
                if version >= 3:
                    self.report(
                        "source-seqs-forbidden", "assistant/message must not carry sourceEventSeqs in v3+"
                    )
                else:
                    self.report(
                        "source-seqs-assistant-v2", "v2 assistant/message no longer carries sourceEventSeqs"
                    )
            try:
                cited = decode_seq_set(
                    src, seq, t == "assistant/message" and version <= 1, allow_ranges=version != 0
                )
            except SeqRangeError as err:
                self.report("source-seqs-shape", str(err))
        op = obj.get("surfaceOp")
        in_step = True
        if op == "append":
            self.nodes.append(seq)
            self.node_type[seq] = t
        elif type(op) is dict:
            in_step = False
            self._replace(op, seq, t, data, cited)
        else:
            in_step = op is None
            if op is None:
                self.report("surface-op-missing", f"{t} is surface-eligible and requires a surfaceOp marker")
            else:
                self.report("surface-op-shape", f"surfaceOp {op!r} is not 'append' or a replace")
            self.nodes.append(seq)
            self.node_type[seq] = t
        if type(data) is not dict:
            return
        if t == "user/message":
            message: Any = data
            if op == "append":
                self._resumes(seq)
        else:
            message = data.get("message")
            if in_step:
                self._check_open_step(t, data)
            elif t == "tool/result" and self.open_turn is None:
                self.report("event-outside-turn", f"{t} replacement outside an open turn")
        if t == "tool/result":
            self._tool_result(obj, seq, data, op == "append")
        elif t == "assistant/message":
            self._assistant(seq, data, message)
        if self.opt.collect_messages and seq in self.node_type:
            content = message.get("content") if type(message) is dict else None
            if t in ("assistant/message", "system/message", "developer/message") and not content:
                self.projected[seq] = None  # empty nodes keep position, project nothing
            else:
                self.projected[seq] = message
        if self.timeline is not None:
            self.timeline.append(
                TimelineEntry(
                    seq, self.open_turn, self.open_step, t, _preview(t, message, data), type(op) is dict
                )
            )

    def _check_open_step(self, t: str, data: dict[str, Any]) -> None:
        if t == "user/message":
            return  # unconstrained (§6.2)
        if self.open_step is None or data.get("turn") != self.open_turn or data.get("step") != self.open_step:
            self.report(
                "event-outside-step",
                f"{t} names {data.get('turn')}/{data.get('step')} but the open step is "
                f"{self.open_turn}/{self.open_step}",
            )

    def _assistant(self, seq: int, data: dict[str, Any], message: Any) -> None:
        version = self.version or 0
        if version >= 2:
            p = stream_records(data.get("stream"))
            if p:
                self.report(*p)
        usage = data.get("usage")
        if type(usage) is dict:
            totals = self.usage
            for i, key in enumerate(_USAGE_KEYS):
                value = usage.get(key)
                if type(value) is int:
                    totals[i] += value
        content = message.get("content") if type(message) is dict else None
        if type(content) is not list:
            return
        step = data.get("step")
        for block in content:
            if type(block) is dict and block.get("type") == "tool-call":
                cid = block.get("id")
                if not isinstance(cid, str) or not cid:
                    self.report("message-shape", "tool-call block without an id")
                    continue
                self.advertised_total += 1
                if cid in self.advertised:
                    self.report("tool-call-duplicate", f"tool call id {cid} advertised twice")
                self.advertised[cid] = [step, self.started.get(cid), block.get("name")]

    def _tool_result(self, obj: dict[str, Any], seq: int, data: dict[str, Any], appended: bool) -> None:
        message = data.get("message")
        source = message.get("source") if type(message) is dict else None
        cid = source.get("callId") if type(source) is dict else None
        if appended:
            self.tool_fp[seq] = _tool_fingerprint(data, self.version or 0)
            if not isinstance(cid, str):
                return
            error = data.get("error")
            code = error.get("code") if type(error) is dict else None
            if _is_error(message, self.version or 0):
                self.failed += 1
            if cid in self.started:
                del self.started[cid]
                self.answered += 1
            elif code == TOOL_NOT_STARTED:
                self.never_started += 1
            else:
                self.report(
                    "tool-result-unmatched",
                    f"tool/result for {cid} resolves no pending tool/call of this step",
                )
            self.advertised.pop(cid, None)

    def _replace(self, op: dict[str, Any], seq: int, t: str, data: Any, cited: SeqSet | None) -> None:
        version = self.version or 0
        dsh = self.dialect != mini.DIALECT
        old_keys = dsh and version <= 2
        keys = _REPLACE_V0 if old_keys else _REPLACE_V3
        start_key, end_key = ("start", "end") if old_keys else ("startSeq", "endSeq")
        if (
            op.keys() != keys
            or op.get("op") != "replace"
            or not is_safe_nonneg(op.get(start_key))
            or not is_safe_nonneg(op.get(end_key))
        ):
            self.report(
                "surface-op-shape",
                f"replace surfaceOp must be exactly "
                f"{{op:'replace', {start_key}, {end_key}}} in "
                f"v{version}, got {op!r}",
            )
            return
        start, end = op[start_key], op[end_key]
        if (version >= 3 or not dsh) and (start >= seq or end >= seq):
            self.report(
                "replace-not-earlier",
                f"replace endpoints {start}..{end} must precede the replacing event {seq}",
            )
            return
        nodes = self.nodes
        node_type = self.node_type
        if start not in node_type or end not in node_type:
            missing = start if start not in node_type else end
            self.report("replace-endpoint", f"replace endpoint {missing} is not a current surface node")
            return
        i, j = nodes.index(start), nodes.index(end)
        if i > j:
            self.report("replace-order", f"replace start {start} comes after end {end} in surface order")
            return
        removed = nodes[i : j + 1]
        if dsh and (cited is None or not all(s in cited for s in removed)):
            missing_seqs = sorted(s for s in removed if cited is None or s not in cited)
            self.report(
                "replace-uncited",
                f"sourceEventSeqs must cite every replaced node; missing {missing_seqs[:10]}",
            )
        if t == "tool/result" and dsh:
            shadow = removed[0]
            if len(removed) != 1 or node_type[shadow] != "tool/result":
                self.report(
                    "tool-result-replace",
                    "a tool/result replacement must shadow exactly one tool/result node",
                )
            elif self.tool_fp.get(shadow) != _tool_fingerprint(data, version):
                self.report(
                    "tool-result-replace",
                    f"replacement of tool/result {shadow} changes more than its content",
                )
        if (
            dsh
            and version >= 3
            and i == 0
            and node_type[nodes[0]] == "system/message"
            and (t != "system/message" or j != 0)
        ):
            self.report(
                "protected-head",
                "the system head may only be replaced by a system/message covering exactly that node",
            )
        nodes[i : j + 1] = [seq]
        for s in removed:
            del node_type[s]
            self.tool_fp.pop(s, None)
            self.projected.pop(s, None)
        node_type[seq] = t
        if t == "tool/result" and dsh:
            self.tool_fp[seq] = _tool_fingerprint(data, version)
        self.shadowed += len(removed)
        self.replacements += 1

    def continuation(self) -> Scanner:
        """A copy that accepts records appended after the committed point (a repair's closers,
        a fork's marker): the state continues, findings and the tail start afresh."""
        twin = copy.copy(self)
        for name in ("started", "node_type", "tool_fp", "projected", "counts", "turn_ends"):
            setattr(twin, name, copy.copy(getattr(self, name)))
        twin.advertised = {k: list(v) for k, v in self.advertised.items()}
        twin.nodes = list(self.nodes)
        twin.markers = list(self.markers)
        twin.usage = list(self.usage)
        twin.timeline = None
        twin.findings, twin.findings_dropped, twin._seen_once = [], 0, set()
        twin.issue, twin.halt, twin.stopped, twin.fatal = None, False, False, False
        twin.dropped_lines = 0
        twin._envelope_checked = None
        if self.version is not None:
            twin._install(self.version)  # the handler table binds methods to its owner
        return twin

    # -- end of input -------------------------------------------------------------------------

    def finish(self, summary: ReadSummary | None) -> ScanResult:
        last_seq = self.next_seq - 1 if self.next_seq else None
        last_time = self.last_time if self.first_time is not None else None
        max_time = max(self.max_time, self.last_time) if self.first_time is not None else None
        tail = self._tail(summary)
        version = self.version
        header = self.header
        # dsh publishes the header frame atomically (§10.3); the mini layout has no such frame
        torn0 = (
            summary is not None
            and summary.torn_frame is not None
            and summary.torn_frame.index == 0
            and self.dialect != mini.DIALECT
        )
        if torn0 or (not self.header_done and not self.stopped):
            # The header is published atomically with the first batch (§10.3): a file without
            # a complete header line (or header frame) is not a crash tail but corruption.
            if summary is None or (summary.plaintext_bytes == 0 and summary.file_bytes == 0):
                self.report(
                    "empty-file",
                    "file is empty: no header record",
                    Address(self.path, 0, 1, None, None, None),
                )
            else:
                where = "header frame" if torn0 else "header line"
                self.report(
                    "missing-header",
                    f"no complete {where}: the file is cut inside it",
                    Address(self.path, 0, 1, 0 if torn0 else None, 0 if torn0 else None, None),
                )
        # A header inside a torn header frame was never committed (§6.3, §10.3): rules relating
        # it to the body would judge a log that does not exist (the rc.8 reader refuses it whole).
        if header is not None and not torn0 and not self.unsupported_version and self.opt.at_seq is None:
            events = self.next_seq
            if version is not None and version <= 1 and header.seed_length is not None:
                sl = header.seed_length
                if sl > events:
                    self.report(
                        "header-seed-length",
                        f"Session inheritedEventCount {sl} exceeds its event count {events}",
                        Address(self.path, 0, 1, None, None, None),
                        # the v0 reader does not check it (rc.8 packages); later codecs refuse
                        Severity.WARNING if version == 0 else None,
                    )
                elif not any(s in (sl, sl - 1) for s, _ in self.markers):
                    self.report(
                        "seed-length-marker",
                        f"no session/end-seed at seq {sl} where the inherited seed ends",
                        Address(self.path, 0, 1, None, None, None),
                    )
            if version is not None and version >= 2 and header.is_seeded is not None:
                tagged = any(t for _, t in self.markers)
                if header.is_seeded and not tagged:
                    self.report(
                        "header-is-seeded",
                        "seeded session lacks an inherited end-seed marker",
                        Address(self.path, 0, 1, None, None, None),
                    )
                elif not header.is_seeded and tagged:
                    self.report(
                        "header-is-seeded",
                        "unseeded session contains an inherited end-seed marker",
                        Address(self.path, 0, 1, None, None, None),
                    )
        interpreted_to_end = not self.fatal and not (self.issue is not None and self.issue.proven)
        if self.open_turn is not None and self.opt.at_seq is None and interpreted_to_end:
            self.report(
                "open-turn",
                f"turn {self.open_turn} is open at the end of the log: the session was interrupted",
                Address(self.path, None, None, None, None, self.open_turn_seq),
            )
        # Pending calls: dsh — those of the open step (§7.1); mini-agent — every dangling call.
        pending: tuple[PendingCall, ...] = ()
        if self.open_turn is not None or self.dialect == mini.DIALECT:
            pending = tuple(
                PendingCall(cid, e[0], e[1], e[2] if isinstance(e[2], str) else None)
                for cid, e in self.advertised.items()
            )
        if self.dialect == mini.DIALECT and pending and interpreted_to_end and self.opt.at_seq is None:
            self.report(
                "unresolved-call",
                f"{len(pending)} tool call(s) never answered: " + ", ".join(p.call_id for p in pending[:5]),
                Address(self.path, None, None, None, None, pending[0].call_seq),
            )
        verdict, vaddr, reason = self._verdict(tail, pending)
        open_dangling = sum(1 for p in pending if p.call_seq is not None)
        open_never = len(pending) - open_dangling
        open_state = OpenState(
            self.open_turn,
            self.open_turn_seq,
            self.open_step,
            pending,
            last_seq,
            last_time,
            self.next_seq,
            self.last_time_text,
        )
        messages = None
        if self.opt.collect_messages:
            projected = self.projected
            messages = tuple(projected[s] for s in self.nodes if projected.get(s) is not None)
        inherited: int | None = None
        if header is not None:
            if (version or 0) <= 1:
                inherited = header.seed_length
            else:
                tagged_seqs = [s for s, t in self.markers if t]
                inherited = tagged_seqs[-1] if tagged_seqs else (0 if header.is_seeded else None)
        stats = Stats(
            events=self.next_seq,
            by_type=tuple(sorted(self.counts.items())),
            turns=self.turns,
            turn_ends=tuple(sorted(self.turn_ends.items())),
            steps=self.steps,
            tool_calls=ToolCallStats(
                self.advertised_total,
                self.started_total,
                self.answered,
                self.failed,
                self.dangling + open_dangling,
                self.never_started + open_never,
            ),
            surface=SurfaceStats(
                len(self.nodes), self.shadowed, self.next_seq - self.surface_events, self.replacements
            ),
            usage=Usage(*self.usage),
            time=TimeSpan(self.first_time, last_time, self.min_time, max_time, self.backwards),
            lineage=Lineage(
                header.parent_session if header else None,
                header.seeded if header else False,
                inherited,
                header.origin if header else None,
                header.delegation_depth if header else None,
                self.marker_count,
            ),
        )
        return ScanResult(
            path=self.path,
            header=header,
            version=version,
            findings=tuple(self.findings),
            findings_dropped=self.findings_dropped,
            stats=stats,
            open=open_state,
            tail=tail,
            verdict=verdict,
            verdict_address=vaddr,
            verdict_reason=reason,
            messages=messages,
            request=RequestEnvelope(
                self.request_header, self.request_header_seq, self.request_context, self.request_context_seq
            ),
            timeline=tuple(self.timeline) if isinstance(self.timeline, list) else None,
            stopped_at=last_seq if self.opt.at_seq is not None else None,
            stop_offset=self.stop_offset,
            body_offset=self.body_offset,
            dialect=self.dialect,
            boundaries=Boundaries(self.last_turn_end, self.resume_seq, self.last_end_seed, self.split_row),
        )

    def _tail(self, summary: ReadSummary | None) -> Tail:
        issue = self.issue
        kind: TailKind = "none"
        if self.fatal:
            # A defect stopped the read (§6.3 corruption): what follows is not a tail.
            return Tail("none", self.committed, 0, 0, 0, None)
        dropped_bytes = 0
        address: Address | None = None
        recovered = 0
        in_complete_frame = (
            issue is not None
            and summary is not None
            and summary.encoding == "zstd"
            and not (summary.torn_frame is not None and issue.address.frame == summary.torn_frame.index)
        )
        if issue is not None:
            if in_complete_frame and not issue.proven:
                # §6.3: only EOF inside the last frame is a tear; a bad record inside a complete,
                # checksummed frame was committed (the harness: "complete frame contains a torn
                # JSONL record").
                self.report(
                    issue.rule,
                    issue.message + " (inside a complete zstd frame: committed, so corruption)",
                    issue.address,
                    Severity.ERROR,
                )
            elif issue.proven:
                # §6.3: a later turn/end proves the region was committed -> corruption
                why = issue.proof or "a later turn/end proves this region was committed"
                self.report(issue.rule, f"{issue.message} ({why}: corruption)", issue.address, Severity.ERROR)
            else:
                kind = "uncommitted"
                address = issue.address
                self.report(
                    "uncommitted-tail",
                    f"{RULES[issue.rule].title}: {issue.message}; no later turn/end, so "
                    f"this record and the {self.dropped_lines - 1} after it are an "
                    "uncommitted tail",
                    issue.address,
                )
        end_plain = self.committed
        if summary is not None and not summary.stopped_early:
            end_plain = summary.plaintext_bytes
        if summary is not None and summary.torn_frame is not None:
            tf = summary.torn_frame
            recovered = tf.lines
            if kind == "none":
                kind = "torn-frame"
                address = Address(self.path, tf.plaintext_offset, None, tf.index, tf.file_offset, None)
            partial = summary.partial_line
            rest = f"; {partial.length} byte(s) of a torn record after them" if partial else ""
            self.report(
                "zstd-torn-frame",
                f"last zstd frame {tf.index} is cut by EOF after {tf.file_length} bytes; "
                f"{recovered} complete line(s) recovered from it{rest}",
                Address(self.path, tf.plaintext_offset, None, tf.index, tf.file_offset, None),
            )
        if summary is not None and summary.partial_line is not None and summary.torn_frame is None:
            pl = summary.partial_line
            if kind == "none":
                kind = "torn-line"
                address = Address(self.path, pl.offset, pl.line, None, None, None)
            self.report(
                "torn-tail",
                f"final record has no newline: {pl.length} byte(s) of a "
                "torn write, ignored (a repair drops them)",
                Address(self.path, pl.offset, pl.line, None, None, None),
            )
        if issue is not None:
            self.committed = issue.start
        if kind != "none":
            dropped_bytes = max(0, end_plain - self.committed)
        committed = self.committed if kind != "none" or issue is not None else end_plain
        if issue is not None:
            committed = issue.start
        return Tail(
            kind,
            committed,
            dropped_bytes,
            self.dropped_lines + (1 if summary and summary.partial_line else 0),
            recovered,
            address,
        )

    def _verdict(self, tail: Tail, pending: tuple[PendingCall, ...]) -> tuple[Verdict, Address | None, str]:
        # Damage outranks an unknown newer vocabulary: the harness scans and validates shapes
        # before it judges the vocabulary (docs/format.md "Verdicts").
        first_unsupported: Finding | None = None
        for f in self.findings:
            if f.severity is not Severity.ERROR:
                continue
            if RULES[f.rule].verdict == "unsupported":
                first_unsupported = first_unsupported or f
            else:
                return "corrupt", f.address, f.message
        if first_unsupported is not None:
            return "unsupported", first_unsupported.address, first_unsupported.message
        if tail.kind != "none":
            reasons = {
                "torn-line": "the last record is torn (no newline)",
                "torn-frame": "the last zstd frame is torn",
                "uncommitted": "a bad record with no later turn/end ends the log",
            }
            return "torn", tail.address, reasons[tail.kind]
        if self.open_turn is not None:
            return (
                "interrupted",
                Address(self.path, None, None, None, None, self.open_turn_seq),
                f"turn {self.open_turn} is open at the end of the log",
            )
        if self.dialect == mini.DIALECT and pending:
            return (
                "interrupted",
                Address(self.path, None, None, None, None, pending[0].call_seq),
                f"{len(pending)} tool call(s) have no result",
            )
        return "clean", None, "balanced: every turn is closed"


def _is_error(message: Any, version: int) -> bool:
    if type(message) is not dict:
        return False
    if version >= 4:
        return message.get("isError") is True
    content = message.get("content")
    if type(content) is list and content and type(content[0]) is dict:
        return content[0].get("isError") is True
    return False


def _tool_fingerprint(data: dict[str, Any], version: int) -> int | None:
    """Everything of a tool/result except its content (§5 item 5), hashed.

    The content is masked in place for the one dumps call (the decoded event is ours) rather
    than copying the payload.
    """
    try:
        holder = data["message"] if version >= 4 else data["message"]["content"][0]
        content = holder["content"]
    except (KeyError, IndexError, TypeError):
        return None
    holder["content"] = None
    try:
        return hash(orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
    except (TypeError, orjson.JSONEncodeError):
        return None
    finally:
        holder["content"] = content


def _preview(t: str, message: Any, data: Any) -> str:
    """A one-line summary of a surface event for the timeline (raw; escape before printing)."""
    if type(message) is not dict:
        return ""
    role = message.get("role", "?")
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            bt = block.get("type")
            if bt in ("text", "reasoning"):
                parts.append(str(block.get("text", "")))
            elif bt == "tool-call":
                parts.append(f"→ {block.get('name')}({block.get('id')})")
            elif bt == "tool-result":
                inner = block.get("content")
                if isinstance(inner, list):
                    parts.extend(str(b.get("text", "")) for b in inner if isinstance(b, dict))
    text = " ".join(p for p in parts if p).replace("\n", " ")
    if len(text) > 100:
        text = text[:99] + "…"
    return f"{role}: {text}"
