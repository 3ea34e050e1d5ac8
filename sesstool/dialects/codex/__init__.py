"""The Codex CLI rollout dialect (agent-formats §3, §4): reading a rollout as Codex 0.171 loads
it, deriving the history it rebuilds on resume, and planning repairs and forks.

One object, ``DIALECT``, listed once in ``dialects.registry``. Seq numbers are 0-based line
indexes (``--at N`` forks after line N+1); the format version is 1 (the ``{timestamp, type,
payload}`` envelope) and the writer's ``cli_version`` is shown as the version label.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, ClassVar

from sesstool.core.errors import UsageError
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Rule
from sesstool.dialects.base import Cause, Dialect, EntryDerivation, ForkInput, RootLayout, Row
from sesstool.dialects.codex.ending import FORMAT_VERSION
from sesstool.dialects.codex.history import EXCLUDED, HistoryAt, HistoryBuilder
from sesstool.dialects.codex.model import CodexFacts
from sesstool.dialects.codex.naming import (
    HOME_PATTERNS,
    SUFFIXES,
    fork_name,
    new_thread_id,
    parse_name,
    repaired_name,
)
from sesstool.dialects.codex.plans import describe_closer, encode_line, fork_session_meta, plan_closers
from sesstool.dialects.codex.report import inspect_document, inspect_lines
from sesstool.dialects.codex.salvage import readable_from
from sesstool.dialects.codex.scanner import CodexScanner
from sesstool.dialects.codex.timeline import CodexTimeline
from sesstool.dialects.codex.vocabulary import RULES, is_legacy_meta, is_rollout_line


class CodexDialect(Dialect):
    name: ClassVar[str] = "codex"
    title: ClassVar[str] = "Codex CLI rollout"
    layout: ClassVar[RootLayout] = RootLayout(HOME_PATTERNS, SUFFIXES)
    rules: ClassVar[tuple[Rule, ...]] = RULES

    def detect(self, first: Any) -> float:
        """A ``{timestamp, type, payload}`` line; certain when it is the ``session_meta``. A
        legacy pre-envelope first line (a bare session meta) is a Codex rollout too."""
        if is_legacy_meta(first):
            return 0.8  # read only to say why Codex 0.171 refuses it (codex-legacy-rollout)
        if not is_rollout_line(first):
            return 0.0
        return 1.0 if first["type"] == "session_meta" else 0.9

    def scanner(self, path: str, options: ScanOptions) -> CodexScanner:
        return CodexScanner(path, options)

    def timeline(self, head: int, tail: int) -> CodexTimeline:
        return CodexTimeline(head, tail)

    # -- repair ---------------------------------------------------------------------------------

    def closers(self, scan: ScanResult, cause: Cause = "interrupted") -> Collection[dict[str, Any]]:
        facts: CodexFacts = scan.facts
        return plan_closers(facts)

    def encode_record(self, record: dict[str, Any]) -> bytes:
        return encode_line(record)

    def describe_closer(self, record: dict[str, Any]) -> str:
        return describe_closer(record)

    def repaired_name(self, source_name: str, zstd: bool) -> str:
        return repaired_name(source_name, zstd)

    skips_bad_lines: ClassVar[bool] = True  # RolloutRecorder::load_rollout_items (§3.4)

    def salvage_readable_from(self, line: bytes) -> int | None:
        return readable_from(line)

    # -- fork -----------------------------------------------------------------------------------

    def new_child_id(self, created_at: int) -> str:
        return new_thread_id(created_at, uuid.uuid4().int)

    def claims_name(self, name: str) -> bool:
        return parse_name(name) is not None  # rollout-<time>-<thread id>.jsonl[.zst]

    def child_name(self, child_id: str, zstd: bool) -> str:
        return fork_name("", child_id, zstd)

    def root_child(
        self, source: Path, parent_id: str, child_id: str, version: int, zstd: bool
    ) -> tuple[Path, Path | None] | None:
        """A rollout keeps its Codex name: the child beside it as ``rollout-<time>-<child id>``."""
        if parse_name(source.name) is None:
            return None
        return source.parent / fork_name(source.name, child_id, zstd), None

    def plan_fork(self, request: ForkInput) -> ForkPlan:
        """The child: the source's session_meta with the new thread id and ``forked_from_id``,
        the source's lines after it up to the boundary, and the closers of what is open there."""
        try:
            uuid.UUID(request.child_id)
        except ValueError:
            raise UsageError(f"--id {request.child_id!r}: a Codex thread id is a UUID") from None
        source = request.source
        assert source.header is not None
        header = fork_session_meta(source.header.raw, request.child_id)
        closers = plan_closers(request.at.facts)
        return ForkPlan(
            version=FORMAT_VERSION,
            boundary=request.boundary,
            header=header,
            marker=None,
            closers=closers,
            open_turn=None,
            open_turn_seq=None,
            child_id=request.child_id,
        )

    def fork_child_problems(self, child: ScanResult, plan: ForkPlan) -> list[str]:
        facts: CodexFacts = child.facts
        problems = []
        if facts.thread_id != plan.child_id:
            problems.append(f"its thread id is {facts.thread_id}, expected {plan.child_id}")
        if facts.forked_from_id != plan.header["payload"].get("forked_from_id"):
            problems.append("it does not name the thread it was forked from")
        return problems

    def fork_marker_note(self, plan: ForkPlan) -> str:
        return f"none (session_meta forked_from_id {plan.header['payload'].get('forked_from_id')})"

    def derive_excludes(self) -> tuple[str, ...]:
        return EXCLUDED

    derives_by_entries = True

    def entry_derivation(self, scan: ScanResult, read: Callable[[int], bytes]) -> EntryDerivation:
        facts: CodexFacts = scan.facts
        assert isinstance(facts.history, HistoryBuilder), "scanned with message_addresses"
        return HistoryAt(facts.history, read)

    # -- presentation ---------------------------------------------------------------------------

    def inspect_rows(self, scan: ScanResult) -> Iterator[Row]:
        return (Row(label, text, style) for label, text, style in inspect_lines(scan.facts))

    def inspect_body(self, scan: ScanResult) -> dict[str, Any]:
        return {"codex": inspect_document(scan.facts)}

    def list_facts(self, scan: ScanResult) -> dict[str, str | None]:
        facts: CodexFacts = scan.facts
        return {"cwd": facts.cwd, "last_time": facts.last_time}


DIALECT = CodexDialect()
__all__ = ["DIALECT", "CodexDialect"]
