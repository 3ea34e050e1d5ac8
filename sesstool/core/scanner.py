"""The one streaming pass of the envelope dialects: envelope, contiguity, §6.3, dispatch (§3–§6).

A ``Scanner`` is fed the reader's batches in order and keeps only the open state (in ``core.scan_state``),
never the file. It knows the ``{type, seq, time, data}`` envelope and nothing of a dialect's events or
layout: it asks the dialect's header codec (``core.profile.EnvelopeCodec``) to read the first record,
installs the ``Profile`` of the log's version, dispatches every event to the profile's handlers with the
narrow ``EventState``, and leaves the reader's facts on the zstd frame layout to the dialect
(``framing_finding``). ``finish()`` classifies the tail (``core.classify``) and returns a frozen
``ScanResult``."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from functools import partial
from itertools import islice
from typing import Any

import orjson

from sesstool.core import node_reader
from sesstool.core import rule_ids as R
from sesstool.core.chunk_rows import RowError, expand_row
from sesstool.core.classify import (
    ReadEnd,
    SuspectRecord,
    classify_tail,
    interruption,
    missing_header,
    open_work,
    verdict_of,
)
from sesstool.core.dropped import Dropped
from sesstool.core.envelope import count_only, envelope_problems, plain_surface, refusal
from sesstool.core.errors import Address
from sesstool.core.first_seen import FirstSeen
from sesstool.core.header import MAX_SAFE
from sesstool.core.humanize import chosen, chosen_repr
from sesstool.core.jsonline import ORJSON_MAX_DEPTH, LineError, duplicate_keys, negative_zero_keys
from sesstool.core.jsonline import loads as loads_checked
from sesstool.core.model import Boundaries, PendingCall, ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch, FramingFact, PhysicalIssue, ReadSummary
from sesstool.core.profile import EndState, EnvelopeCodec, Profile
from sesstool.core.rules import Finding, Severity, severity_for
from sesstool.core.scan_state import EventState
from sesstool.core.scan_summary import open_state, report_unsafe_integers, statistics

_NO_TIME = MAX_SAFE + 1
_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError


class Scanner:
    __slots__ = (
        "_base", "_base_line", "_envelope_checked", "_fixed", "_framing", "_i", "_lines", "_pos",
        "_seen_once", "at", "body_offset", "codec", "committed", "dropped", "dropped_lines", "fast_ok",
        "fatal", "findings", "frame", "halt", "handlers", "header_at", "header_done", "issue", "last_time",
        "next_seq", "opt", "path", "profile", "seq", "split_row", "state", "stop_offset", "stopped",
        "unsupported_version"
    )  # fmt: skip

    def __init__(self, path: str, options: ScanOptions | None, codec: EnvelopeCodec) -> None:
        self.path = path
        self.opt = options or ScanOptions()
        self.codec = codec
        self.profile: Profile | None = None
        self.at = self.opt.at_seq if self.opt.at_seq is not None else MAX_SAFE + 1
        self.stopped = self.fatal = self.header_done = self.unsupported_version = False
        self.header_at = Address(path, 0, 1, None, None, None)  # the header line, once read
        self.findings: list[Finding] = []
        self.dropped = Dropped()  # past max_findings: not kept, still weighed
        self._seen_once: FirstSeen[None] = FirstSeen()  # rule + key: the first FIRST_SEEN (first_seen.py)
        self._framing: list[FramingFact] = []  # the reader's facts on frame 0, judged on leaving it
        # position of the record being processed
        self._lines: list[bytes] = []
        self._base, self._base_line, self._i = 0, 1, 0
        self._pos = (0, 0)  # (index, offset) last computed in this batch: _position walks on
        self._fixed: tuple[int, int] | None = None
        self.halt = False  # stop the fast loop: an issue began or the scan stopped
        self.fast_ok = self.opt.max_depth >= ORJSON_MAX_DEPTH and not self.opt.strict
        self.stop_offset: int | None = None  # --at: where the first unconsumed record starts
        self.split_row: tuple[int, int] | None = None
        self.body_offset: int | None = None  # plaintext offset after the header line
        self.frame: int | None = None
        self.seq: int | None = None
        # envelope / contiguity
        self.next_seq = 0
        self.last_time = _NO_TIME  # sentinel above every safe integer: first time is irregular
        self._envelope_checked: int | None = None
        self.committed = 0
        self.issue: SuspectRecord | None = None
        self.dropped_lines = 0
        timeline: Any = self.opt.new_timeline()  # a list, an inspect sink (streamed), or None
        self.state = EventState(self.report, self.report_once, self.opt.collect_messages, timeline)
        self.handlers: dict[str, Any] = {}

    def address(self, seq: int | None = None) -> Address:
        offset, line = self._position()
        return Address(self.path, offset, line, self.frame, None, seq if seq is not None else self.seq)

    def report(
        self, rule: str, message: str, address: Address | None = None, severity: Severity | None = None
    ) -> None:
        strict = self.profile is not None and self.profile.strict_relations
        kind = severity if severity is not None else severity_for(rule, None, strict)
        if len(self.findings) < self.opt.max_findings:
            self.findings.append(Finding(rule, kind, message, address or self.address()))
        else:  # not kept, still weighed
            self.dropped.add(rule, kind, lambda: Finding(rule, kind, message, address or self.address()))

    def report_once(self, rule: str, key: str, message: str) -> None:
        if self._seen_once.fresh(f"{rule}\0{key}", None):  # past FIRST_SEEN keys: said again
            self.report(rule, message)

    def clean_so_far(self) -> bool:
        return self.issue is None and not self.fatal

    def feed(self, item: Batch | PhysicalIssue) -> None:
        if type(item) is tuple:
            self.feed_lines(*item)
        else:
            assert isinstance(item, PhysicalIssue)
            self.physical(item)

    def physical(self, issue: PhysicalIssue) -> None:
        if type(issue) is FramingFact:
            self._framing.append(issue)
            return
        if self._framing and issue.fatal:
            self._judge_framing(one_frame=False)  # nothing follows a fatal issue
        address = Address(self.path, issue.offset, issue.line, issue.frame, issue.frame_offset, None)
        if issue.fatal or issue.rule.startswith("zstd-"):
            # A defect inside a complete frame is corruption wherever it is (§6.3).
            self.report(issue.rule, issue.message, address)
            if issue.fatal:
                self.fatal = True  # the reader stopped: nothing after this was read
            return
        self._fixed = (issue.offset or 0, issue.line or 0)
        self.frame = issue.frame
        self._bad_record(issue.rule, issue.message, address)
        self.dropped_lines += issue.lines - 1  # line too long, filler run: §6.3 suspect region
        self._fixed = None

    def _judge_framing(self, *, one_frame: bool) -> None:
        """The reading left frame 0 (a later frame, a fatal issue, the end): the dialect judges it."""
        for f in self._framing:
            for rule, message in filter(None, [self.codec.framing_finding(f, one_frame)]):
                self.report(rule, message, Address(self.path, f.offset, f.line, f.frame, f.frame_offset))
        self._framing = []

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        if self.stopped:
            return
        if self._framing and frame:
            self._judge_framing(one_frame=False)
        self.frame = frame
        self._lines, self._base, self._base_line, self._i, self._pos = lines, offset, lineno, 0, (0, offset)
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
        report_unsafe_integers(self, lines, offset, lineno, frame)
        self._position()  # a later address is the last record's: its offset now, the batch let go
        self._lines = []  # (a write command keeps its scanner: up to a read's 1 MiB, issue 11 item 1)

    def _fast(self, lines: list[bytes], start: int) -> int:
        """The hot path for well-formed records; returns the index of the first line it did not
        consume. Decoding runs inside ``map``, addresses are computed lazily from the line index
        (``_position``): a clean record costs one decode and one dispatch. A line orjson refuses
        is left to the careful loop, which classifies it (or decodes it by fallback)."""
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
                    self.report(R.DUPLICATE_KEY, f'key "{key}" occurs twice in one object')
            if not self.header_done:
                self._header(obj, raw)
            else:
                first = self.next_seq == 0
                self._event(obj)
                if (
                    first
                    and self.profile is not None
                    and self.profile.negative_zero_seq
                    and ("seq" in negative_zero_keys(raw))
                ):
                    self.report(R.ENVELOPE_SEQ, "seq is -0, which a v4 reader rejects")
            if self.stopped:
                return stop
            if self.header_done and self.issue is None and self.next_seq > 0:
                return i + 1
        return stop

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

    def _bad_record(self, rule: str, message: str, address: Address | None, obj: Any = None) -> None:
        """§6.3: a record that fails to decode starts the suspect region (unless one exists); an
        out-of-place record that is itself a turn/end proves it committed, whatever its bad seq."""
        if self.issue is None:
            self.issue = SuspectRecord(rule, message, address or self.address(None), self._position()[0])
            self.halt = True
        if type(obj) is dict and obj.get("type") == "turn/end" and not self.issue.proven:
            self.issue.proven, self.issue.proof = True, "the record is itself a committed turn/end"
        self.dropped_lines += 1

    def _header(self, obj: Any, raw: bytes) -> None:
        self.header_done = True
        self.seq = None
        self.header_at = self.address()  # where the end checks address the header (§2.2)
        codec = self.codec
        if self.opt.fixture and not codec.is_header(obj):
            self.install(codec.profile(self.opt.assume_version))
            self._event(obj)
            return
        self.body_offset = self._position()[0] + len(raw) + 1
        header, problems, unsupported = codec.read_header(obj, raw, self.opt.filename_version)
        for rule, message, severity in problems:
            self.report(rule, message, severity=severity)
        if header is None:
            self.unsupported_version = unsupported
            self.stopped = self.halt = True  # nothing after an unusable/newer header is read
            return
        self.state.header = header
        self.install(codec.profile(header.version))
        if codec.header_is_event:
            # the header is the event at seq 0: counted and timed like one
            self.next_seq = 1
            self.state.stats.count(obj["type"])
            self._irregular_time(obj, obj.get("time"))

    def install(self, profile: Profile) -> None:
        """Use ``profile`` from now on: its handlers bound to the narrow state."""
        self.profile = profile
        self.state.version = profile.version
        self.state.profile = profile
        state = self.state
        self.handlers = {t: partial(fn, state) for t, fn in profile.handlers.items()}

    # -- records and envelope (§3) ------------------------------------------------------------

    def _seqless(self, obj: dict[str, Any]) -> None:
        """Records without a seq that are legal rows (packed chunks, §9.3); a late header is reported."""
        t = obj.get("type")
        self.seq = None
        if t == "session":
            self._bad_record(R.HEADER_NOT_FIRST, "a session header record after the first line", None)
            return
        if "seq0" not in obj:
            self._bad_record(R.PACKED_ROW, f"malformed {t} storage row: no seq0", None)
            return
        profile = self.profile
        assert profile is not None
        if not profile.packed_rows:
            self.report(R.VERSION_EVENT_TYPE, f"packed {t} rows do not exist in v{profile.version} (§9.3)")
            return
        try:
            events = expand_row(obj)
        except RowError as err:
            self._bad_record(R.PACKED_ROW, str(err), None)
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

        THE HOT LOOP (documented exception to the function-size budget). The common well-formed
        case takes the fewest steps: the line index, expected seq and last time live in locals
        and are written to the instance only before calling out (a handler or an irregularity,
        which may report) and on the way out. Stops early when ``halt`` is raised.
        """
        i, nxt, last, at = self._i, self.next_seq, self.last_time, self.at
        state = self.state
        counts: dict[Any, int] = state.stats.counts.kept  # handled types: the vocabulary's
        handlers: dict[Any, Any] = self.handlers
        rel = state.rel
        profile = self.profile
        chunks_inline = profile is not None and profile.inline_chunks
        surface = profile.surface if profile is not None else frozenset()
        chunks = 0
        open_turn, open_step = rel.open_turn, rel.open_step
        try:
            for obj in objs:
                i += 1
                if type(obj) is not dict:
                    self._i, self.seq = i, None
                    self._bad_record(
                        R.NOT_AN_OBJECT, f"record is a JSON {type(obj).__name__}, not an object", None
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
                if (len(obj) != 4 or "data" not in obj) and not plain_surface(obj, t, surface):
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
                        handlers[t](obj, seq, t, data)
                    continue
                self._i, self.seq, self.next_seq, self.last_time = i, seq, nxt, last
                try:
                    handler = handlers.get(t)
                except TypeError:  # an unhashable "type"
                    handler = None
                if handler is not None:
                    counts[t] = counts.get(t, 0) + 1
                    handler(obj, seq, t, data)
                    open_turn, open_step = rel.open_turn, rel.open_step
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
        profile = self.profile
        seqless = profile.seqless if profile is not None else frozenset()
        if seq is None and isinstance(t, str) and (t in seqless or t == "session") and "seq" not in obj:
            self._seqless(obj)
            return None
        if seq is None and self.opt.fixture:
            if self.next_seq <= self.at:
                return self.next_seq
            self._stop()
            return None
        if type(seq) is not int or not 0 <= seq <= MAX_SAFE:
            self.seq = None
            said = chosen_repr(seq)
            self._bad_record(R.ENVELOPE_SEQ, f"seq {said} is not a non-negative safe integer", None, obj)
            return None
        if seq != self.next_seq:
            self.seq = seq
            self._bad_record(
                R.SEQ_GAP, f"session event seq {seq} is not contiguous; expected {self.next_seq}", None, obj
            )
            return None
        self._stop()  # seq > --at
        return None

    def _stop(self) -> None:
        """--at reached: the record being processed (seq at+1) is not consumed."""
        self.stopped = self.halt = True
        self.stop_offset = self._position()[0]

    def _envelope_extras(self, obj: dict[str, Any], keys: Any, t: Any) -> None:
        """Keys beyond type/seq/time/data: report what does not belong (§3)."""
        if self._envelope_checked == self.seq:
            return
        self._envelope_checked = self.seq
        for rule, message in envelope_problems(obj, keys, t, self.profile):
            self.report(rule, message)

    def _irregular_time(self, obj: dict[str, Any], time: Any) -> None:
        """The first event's time, a time that went backwards (legal, §3), or a bad time."""
        profile = self.profile
        assert profile is not None
        ms = profile.time_ms(time)
        if ms is None:
            if time is None and self.opt.fixture:
                return
            self._envelope_extras(obj, obj.keys(), obj.get("type"))
            self.report(R.ENVELOPE_TIME, f"time {chosen_repr(time)} {profile.time_problem}")
            return
        if profile.keep_time_text:
            self.state.stats.last_time_text = time
        self.state.stats.irregular_time(ms, self.last_time)
        self.last_time = ms

    def _other_event(self, obj: dict[str, Any], seq: int, t: Any) -> None:
        """Types without a handler: known log-only types, ignorable unknowns, refusals (§1.4)."""
        profile = self.profile
        assert profile is not None
        if type(t) is not str:
            self._envelope_extras(obj, obj.keys(), t)
            if (t := node_reader.type_name(obj, profile)) is None:
                self.report(R.ENVELOPE_TYPE, f"event type {chosen_repr(obj.get('type'))} is not a string")
                return
        self.state.stats.count(t)
        if profile.known(t):
            if t in profile.resumes_on:
                self.state.rel.resumes(seq)
            else:
                self.handlers[t] = count_only  # the next ones are counted in the hot loop
            return
        if t in profile.seqless and profile.packed_rows:
            self.seq = None
            self._bad_record(
                R.PACKED_ROW, f"malformed {t} storage row: keys must be exactly type, seq0, time0, data", None
            )
            return
        if obj.get("ignorable") is True:
            said = f'unknown event type "{chosen(t)}"'  # told apart whole, quoted cut (first_seen.py)
            self.report_once(R.UNKNOWN_IGNORABLE_EVENT, t, f"{said} marked ignorable: kept opaque")
            if ("surfaceOp" in obj or "sourceEventSeqs" in obj) and not profile.ignorable_surface_meta:
                meta = f"ignorable {chosen(t)} carries surface metadata (allowed only in v4)"
                self.report(R.SURFACE_META_ON_LOG_ONLY, meta)
            return
        self.report(*refusal(profile, t, seq, self.state.session_id()))

    def continuation(self) -> Scanner:
        """A copy that accepts records appended after the committed point (a repair's closers,
        a fork's marker): the state continues (``EventState.copy``: each part's own ``copy()``),
        findings, the suspect region and the timeline start afresh."""
        twin = copy.copy(self)
        twin.findings, twin.dropped, twin._seen_once, twin._framing = [], Dropped(), FirstSeen(), []
        twin.issue, twin.halt, twin.stopped, twin.fatal = None, False, False, False
        twin.dropped_lines, twin._envelope_checked = 0, None
        twin.state = self.state.copy(twin.report, twin.report_once)
        if self.profile is not None:
            twin.install(self.profile)  # handlers are bound to the twin's state
        return twin

    # -- end of input -------------------------------------------------------------------------

    def finish(self, summary: ReadSummary | None) -> ScanResult:
        if self._framing and not self.stopped:  # a scan stopped early judges no layout it left
            self._judge_framing(one_frame=summary is not None and summary.one_frame)
        state, rel = self.state, self.state.rel
        tail, notes = classify_tail(
            ReadEnd(self.path, self.issue, self.fatal, self.committed, self.dropped_lines, summary)
        )
        if self.issue is not None:
            self.committed = self.issue.start
        header_notes, torn_header = missing_header(
            self.path, summary, self.header_done or self.stopped, self.codec.header_frame
        )
        for rule, message, address, severity in (*notes, *header_notes):
            self.report(rule, message, address, severity)
        header, profile = state.header, self.profile
        # A header inside a torn header frame was never committed (§6.3, §10.3): rules relating
        # it to the body would judge a log that does not exist (the rc.8 reader refuses it whole).
        if (
            header is not None
            and not torn_header
            and profile is not None
            and profile.end_checks is not None
            and not self.unsupported_version
            and self.opt.at_seq is None
        ):
            markers = state.stats.markers
            profile.end_checks(EndState(header, self.next_seq, markers, self.report, self.header_at))
        to_end = self.opt.at_seq is None and not self.fatal and not (self.issue and self.issue.proven)
        by_log = profile is not None and profile.pairing == "log"
        pending = rel.pending(by_log)
        for rule, message, address, severity in open_work(self.path, profile, rel, pending, by_log, to_end):
            self.report(rule, message, address, severity)
        interrupted = interruption(self.path, rel.open_turn, rel.open_turn_seq, pending, by_log)
        weighed = [*self.findings, *self.dropped.firsts.values()]
        verdict, vaddr, reason = verdict_of(node_reader.judged(profile, weighed), tail, interrupted)
        return self._result(summary, tail, pending, (verdict, vaddr, reason))

    def _result(
        self,
        summary: ReadSummary | None,
        tail: Any,
        pending: Sequence[PendingCall],
        verdict: tuple[Any, Address | None, str],
    ) -> ScanResult:
        state, fold, rel = self.state, self.state.fold, self.state.rel
        last_seq = self.next_seq - 1 if self.next_seq else None
        header = state.header
        return ScanResult(
            path=self.path,
            header=header,
            version=self.profile.version if self.profile is not None else None,
            findings=tuple(self.findings),
            **self.dropped.fields(),
            stats=statistics(state, self.next_seq, self.last_time, pending),
            open=open_state(state, self.next_seq, self.last_time, pending),
            tail=tail,
            verdict=verdict[0],
            verdict_address=verdict[1],
            verdict_reason=verdict[2],
            messages=fold.messages() if self.opt.collect_messages else None,
            request=fold.request(),
            timeline=tuple(state.timeline) if isinstance(state.timeline, list) else None,
            stopped_at=last_seq if self.opt.at_seq is not None else None,
            stop_offset=self.stop_offset,
            body_offset=self.body_offset,
            dialect=self.codec.name,
            boundaries=Boundaries(rel.last_turn_end, rel.resume_seq, rel.last_end_seed, self.split_row),
            session_id=header.id if header is not None else None,
        )
