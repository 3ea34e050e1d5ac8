"""The end of a Codex scan: the tail (torn line, torn zstd frame), the verdict, and the generic
``ScanResult`` built from the scanner's state (header = the first session_meta line, seq =
0-based line index, default fork boundary = the last committed line)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any, Protocol

from sesstool.core import rule_ids as R
from sesstool.core.dropped import Dropped
from sesstool.core.errors import Address
from sesstool.core.header import Header
from sesstool.core.model import NO_STATS, Boundaries, OpenState, PendingCall, ScanResult, Tail, Verdict
from sesstool.core.options import ScanOptions
from sesstool.core.physical import ReadSummary
from sesstool.core.rules import RULES, Finding, Severity
from sesstool.dialects.codex import rule_ids as CX
from sesstool.dialects.codex.history import HistoryBuilder
from sesstool.dialects.codex.model import CodexFacts
from sesstool.dialects.codex.vocabulary import RULES as CODEX_RULE_LIST
from sesstool.dialects.codex.waiting import mapped


class ScannerState(Protocol):
    """What ``scan_result`` reads of ``CodexScanner`` (kept apart to avoid an import cycle)."""

    path: str
    options: ScanOptions
    stopped: bool
    findings: list[Finding]
    dropped: Dropped
    _meta_line: bytes | None
    _first_time: str | None
    _last_seq: int | None
    _stop_offset: int | None
    _body_offset: int | None
    _history: HistoryBuilder | None


DIALECT_NAME = "codex"
# Rollouts carry no format version: the {timestamp, type, payload} envelope is reported as v1
# (the pre-envelope legacy layout, which Codex 0.171 refuses, gets no version: codex-legacy-rollout).
FORMAT_VERSION = 1
_CODEX_RULES = {r.id: r for r in CODEX_RULE_LIST}

# The scanner state a continuation (repair's closer check) carries over.
CONTINUED = (
    "_lines", "_blank", "_first_seen", "_nonblank", "_meta", "_meta_line", "_body_offset", "_turn_id",
    "_started", "_completed", "_aborted", "_calls", "_answered", "_orphans", "_compactions", "_rollbacks",
    "_usage_total", "_model", "_first_time", "_last_time", "_last_ordinal", "_last_seq", "_last_turn_end",
    "committed",
)  # fmt: skip


def epoch_ms(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _finding(rule_id: str, message: str, address: Address) -> Finding:
    rule = _CODEX_RULES.get(rule_id) or RULES[rule_id]
    return Finding(rule_id, rule.severity, message, address)


def tail_of(path: str, committed: int, summary: ReadSummary | None) -> tuple[Tail, Finding | None]:
    """What follows the last complete line: nothing, a torn zstd frame, or a torn line."""
    if summary is None:
        return Tail("none", committed, 0, 0, 0, None), None
    if summary.torn_frame is not None:
        torn = summary.torn_frame
        address = Address(path, torn.plaintext_offset, None, torn.index, torn.file_offset)
        dropped = summary.plaintext_bytes - committed
        finding = _finding(
            R.ZSTD_TORN_FRAME,
            f"last zstd frame {torn.index} is cut by EOF after {torn.file_length} bytes; {torn.lines} "
            f"complete line(s) recovered from it; {dropped} byte(s) of a torn line after them",
            address,
        )
        return Tail("torn-frame", committed, dropped, 1 if dropped else 0, torn.lines, address), finding
    partial = summary.partial_line
    if partial is not None:
        address = partial.address(path)
        finding = _finding(
            CX.TORN_TAIL,
            f"the last {partial.length} byte(s) have no newline: a torn write; Codex skips them, a "
            "repair drops them",
            address,
        )
        return Tail("torn-line", committed, partial.length, 1, 0, address), finding
    return Tail("none", committed, 0, 0, 0, None), None


def verdict_of(findings: list[Finding]) -> tuple[Verdict, str, Address | None]:
    """unsupported > corrupt (any other error) > torn > interrupted > clean."""
    worst: dict[str, Finding] = {}
    for finding in findings:
        rule = _CODEX_RULES.get(finding.rule) or RULES[finding.rule]
        if rule.verdict == "unsupported":  # a hard load error, or the legacy layout (info)
            worst.setdefault("unsupported", finding)
        elif finding.severity is Severity.ERROR:
            worst.setdefault("corrupt", finding)
        elif rule.verdict in ("torn", "interrupted"):
            worst.setdefault(rule.verdict, finding)
    order: tuple[Verdict, ...] = ("unsupported", "corrupt", "torn", "interrupted")
    for verdict in order:
        if verdict in worst:
            return verdict, worst[verdict].message, worst[verdict].address
    return "clean", "every call has its output and every turn ended", None


def scan_result(
    sc: ScannerState, facts: CodexFacts, tail: Tail, verdict: tuple[Verdict, str, Address | None]
) -> ScanResult:
    header = None
    meta_line = sc._meta_line
    if meta_line is not None and facts.thread_id is not None:
        header = Header(
            FORMAT_VERSION,
            meta_line,
            id=facts.thread_id,
            created_at=epoch_ms(sc._first_time),  # the meta line is the first line
            cwd=facts.cwd,
            parent_session=facts.forked_from_id,
        )
    pending = mapped(facts.dangling, lambda c: PendingCall(c.call_id, 0, c.line - 1, c.name))
    open_turn = facts.open_turns[-1] if facts.open_turns else None
    state = OpenState(
        len(facts.open_turns) if facts.open_turns else None,
        open_turn.line - 1 if open_turn is not None else None,
        None,
        pending,
        sc._last_seq,
        epoch_ms(facts.last_time),
        facts.lines,
        facts.last_time,
    )
    history = sc._history
    return ScanResult(
        path=sc.path,
        findings=tuple(sc.findings),
        **sc.dropped.fields(),
        tail=tail,
        verdict=verdict[0],
        verdict_address=verdict[2],
        verdict_reason=verdict[1],
        dialect=DIALECT_NAME,
        version=FORMAT_VERSION if header is not None else None,
        header=header,
        stats=replace(NO_STATS, events=facts.lines),
        open=state,
        messages=_messages(history),
        stopped_at=sc.options.at_seq if sc.stopped else None,
        stop_offset=sc._stop_offset,
        body_offset=sc._body_offset,
        boundaries=Boundaries(sc._last_seq, None, None, None),
        session_id=facts.thread_id,
        version_label=facts.cli_version,
        facts=replace(facts, history=history) if history is not None and history.by_address else facts,
    )


def _messages(history: HistoryBuilder | None) -> tuple[Any, ...] | None:
    """The derived history, or () when derive reads it back by address (``HistoryAt``)."""
    if history is None:
        return None
    return () if history.by_address else tuple(history.derive().items)
