"""What an envelope dialect installs into the shared scanner: a header codec and, per version, a
``Profile`` (event handlers, vocabulary, replace keys, time codec, pairing scope).

The scanner (``core.scanner``) knows the envelope ``{type, seq, time, data}``, contiguity, the
§6.3 suspect region and the tail; everything a dialect or a version decides differently is a
field here. Handlers are plain functions ``handler(state, obj, seq, type, data)`` that receive
the narrow ``core.scan_state.EventState`` — never the scanner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sesstool.core.errors import Address
from sesstool.core.header import Header
from sesstool.core.physical import FramingFact
from sesstool.core.rules import Severity
from sesstool.core.scan_state import EventState

Handler = Callable[[EventState, dict[str, Any], int, str, Any], None]
# (rule id, message, severity override or None)
HeaderProblem = tuple[str, str, "Severity | None"]


@dataclass(frozen=True, slots=True)
class ReplaceRules:
    """How a replace ``surfaceOp`` is spelt and checked (§5)."""

    start_key: str  # "start" (dsh v0–v2) or "startSeq"
    end_key: str
    earlier: bool  # both endpoints must precede the replacing event
    cite: bool  # sourceEventSeqs must cite every replaced node
    tool_fingerprint: Callable[[dict[str, Any]], int | None] | None  # a tool/result edit is content-only
    protected_head: bool  # only a system/message may replace the system head


@dataclass(frozen=True, slots=True)
class EndState:
    """What an end-of-log check sees (``Profile.end_checks``)."""

    header: Header
    events: int  # committed events
    markers: Sequence[tuple[int, bool]]  # (seq, tagged) session/end-seed markers
    report: Callable[..., None]
    where: Address  # the header line (its zstd frame in a zstd log): the rules' address


@dataclass(frozen=True, slots=True)
class Profile:
    """Everything version- or dialect-specific the shared scanner consults."""

    version: int
    handlers: Mapping[str, Handler]
    surface: frozenset[str]  # surface-eligible types (may carry surfaceOp/sourceEventSeqs)
    known: Callable[[str], bool]  # a type this version knows
    replace: ReplaceRules
    time_ms: Callable[[Any], int | None]  # epoch ms of an envelope ``time``, None: not a time
    time_problem: str  # "is not a safe integer (epoch ms)": completes "time X ..."
    pairing: Literal["step", "log"]  # pending calls: those of the open step, or every one
    all_known: frozenset[str] = frozenset()  # types of any version: "not in this version"
    retired: frozenset[str] = frozenset()  # refused outright (retired-event-type)
    seqless: frozenset[str] = frozenset()  # storage rows without a seq (§9.3 packed rows)
    packed_rows: bool = False  # packed rows are legal here (v0/v1)
    inline_chunks: bool = False  # the v0/v1 ``assistant/chunk`` fast path in the hot loop
    surface_meta_exempt: frozenset[str] = frozenset()  # log-only types allowed surface metadata
    ignorable_surface_meta: bool = False  # an ignorable unknown may carry surface metadata
    resumes_on: frozenset[str] = frozenset()  # log-only types that start new work (§8.3)
    keep_time_text: bool = False  # keep the last time verbatim (closers reuse it)
    strict_relations: bool = False  # §6.2 relational rules are errors (dsh v4)
    negative_zero_seq: bool = False  # the first event's seq may not be -0 (dsh v4 reader)
    # the published reader of this version is the Node v0 one (read-path mutations, dsh v0): a
    # non-string type is ``String(type)`` (an unknown type), it refuses unknown types before it
    # folds the surface, and it cannot close an open turn/step whose numbers are missing
    node_v0_reader: bool = False
    end_checks: Callable[[EndState], None] | None = None  # header/lineage rules at EOF
    extra: Mapping[str, Any] = field(default_factory=dict)  # for the dialect's own handlers


class EnvelopeCodec(Protocol):
    """The header side of an envelope dialect (the ``Dialect`` object implements it)."""

    @property
    def name(self) -> str:
        """The dialect's name (``ScanResult.dialect``)."""
        ...

    @property
    def header_frame(self) -> bool:
        """zstd: the first frame holds exactly the header line (§9.2)."""
        ...

    def framing_finding(self, fact: FramingFact, one_frame: bool) -> tuple[str, str] | None:
        """(rule, message) when the reader's fact on frame 0 breaks the dialect's layout, else None."""
        ...

    @property
    def header_is_event(self) -> bool:
        """The header is the event at seq 0 (counted and timed like one)."""
        ...

    def is_header(self, obj: Any) -> bool:
        """Is this decoded first record a header record (fixture mode makes one optional)?"""
        ...

    def read_header(
        self, obj: Any, raw: bytes, filename_version: int | None
    ) -> tuple[Header | None, list[HeaderProblem], bool]:
        """(header or None when unusable, problems to report, unsupported version)."""
        ...

    def profile(self, version: int) -> Profile:
        """The profile of a version this dialect reads (cached: called once per scan)."""
        ...
