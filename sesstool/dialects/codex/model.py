"""Frozen results of the Codex rollout scanner: the facts ``inspect`` shows and repair plans use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sesstool.core.model import Usage


@dataclass(frozen=True, slots=True)
class CodexCall:
    """A tool call item (function_call / custom_tool_call / local_shell_call)."""

    call_id: str
    kind: str  # the response item type
    name: str | None
    arguments: str | None  # function_call arguments (a JSON string), custom input, or the action
    item_id: str | None  # the item's own ``id`` (synthetic output ids derive from it)
    line: int
    offset: int
    turn_id: str | None


@dataclass(frozen=True, slots=True)
class OpenTurn:
    """A task_started without task_complete / turn_aborted."""

    turn_id: str | None
    root_turn_id: str | None
    started_at: int | None  # epoch seconds, as task_started says
    line: int
    offset: int


@dataclass(frozen=True, slots=True)
class CodexFacts:
    thread_id: str | None
    forked_from_id: str | None
    cli_version: str | None
    originator: str | None
    source: str | None
    model_provider: str | None
    model: str | None  # the newest turn_context's model
    cwd: str | None
    history_mode: str | None
    lines: int  # complete lines read
    blank_lines: int
    skipped_lines: int  # lines Codex's loader skips (undecodable or not a rollout line)
    by_type: tuple[tuple[str, int], ...]
    by_item: tuple[tuple[str, int], ...]  # response_item payload types
    turns_started: int
    turns_completed: int
    turns_aborted: int
    open_turns: Sequence[OpenTurn]  # a tuple, or past open_turns.SPILL_AT read back from a spill file
    calls: int
    answered: int
    dangling: Sequence[CodexCall]  # a tuple, or past waiting.SPILL_AT read back from a spill file
    orphan_outputs: int
    usage: Usage | None  # the last token_count event's total_token_usage
    compactions: int
    rollbacks: int
    first_time: str | None
    last_time: str | None  # the last decodable line's timestamp (repair closers reuse it)
    last_ordinal: int | None  # the last line's ordinal (closers continue it), None if unused
    # derive streamed (``ScanOptions.message_addresses``): the history's addresses
    # (``history.HistoryBuilder``), read back by ``CodexDialect.entry_derivation``
    history: Any = field(default=None, compare=False, repr=False)
    # the lists above cut at ``first_seen.FIRST_SEEN`` types, by their --json names (issue 11 item 1)
    more: tuple[str, ...] = ()
