"""The history Codex rebuilds on resume, as the input items of its first model request.

agent-formats §3.4 (``reconstruct_history_from_rollout``, ``context_manager/normalize.rs``):
the newest ``compacted.replacement_history`` is the base history; response items after it are
replayed (a later ``session_meta`` line starts it afresh: observed with 0.171);
``thread_rolled_back{num_turns}`` drops the newest user turns; legacy
``ghost_snapshot`` items and items of unknown types are not sent; then the prompt is
normalised: a synthetic ``"aborted"`` output goes right after every call without one (its id is
a UUIDv5 of the call's id, as Codex derives it) and outputs without a call are dropped. Keys
Codex keeps only locally (``internal_chat_message_metadata_passthrough``) are not sent.

What this does NOT contain, because Codex builds it from configuration rather than from the
rollout (checked against 0.171's requests by the CLI lane): the developer message with the base
instructions Codex puts first in every request, and everything after the history (context
updates for settings that changed since the thread was recorded, the new user prompt).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sesstool.dialects.codex.vocabulary import (
    CALL_TYPES,
    DROPPED_ON_LOAD,
    LOCAL_ONLY_KEYS,
    OUTPUT_TYPES,
    RESPONSE_ITEM_TYPES,
)

# codex-rs/core/src/context_manager/normalize.rs: SYNTHETIC_OUTPUT_ID_NAMESPACE.
SYNTHETIC_OUTPUT_NAMESPACE = uuid.UUID("90d38d3e-6a5b-4d52-bfe2-2f1e634bfac4")
ABORTED = "aborted"
EXCLUDED = (
    "the developer message with the base instructions that Codex puts first in every request "
    "(built from session configuration, not replayed from the rollout)",
    "context updates Codex adds after the history when settings or the cwd changed since the "
    "thread was recorded",
    "the new user prompt of the resumed turn",
)


def synthetic_output_id(prefix: str, item_id: str | None) -> str | None:
    """``{prefix}_{uuid5(ns, "{prefix}:{call item id}")}``; None when the call has no id."""
    if not item_id:
        return None
    return f"{prefix}_{uuid.uuid5(SYNTHETIC_OUTPUT_NAMESPACE, f'{prefix}:{item_id}')}"


def aborted_output(call: dict[str, Any]) -> dict[str, Any]:
    """The output Codex synthesises in memory for a call without one (never persisted by it)."""
    custom = call.get("type") == "custom_tool_call"
    prefix = "ctco" if custom else "fco"
    item: dict[str, Any] = {"type": "custom_tool_call_output" if custom else "function_call_output"}
    item_id = synthetic_output_id(prefix, call.get("id") if isinstance(call.get("id"), str) else None)
    if item_id is not None:
        item["id"] = item_id
    item["call_id"] = call.get("call_id")
    item["output"] = ABORTED
    return item


# Codex decodes a local shell action into a struct and re-encodes it, so its optional fields
# are sent as null when the rollout omits them (observed with 0.171).
_EXEC_ACTION_DEFAULTS = {"timeout_ms": None, "working_directory": None, "env": None, "user": None}


def _sendable(payload: dict[str, Any]) -> dict[str, Any]:
    if any(key in payload for key in LOCAL_ONLY_KEYS):
        payload = {k: v for k, v in payload.items() if k not in LOCAL_ONLY_KEYS}
    action = payload.get("action")
    if (
        payload.get("type") == "local_shell_call"
        and isinstance(action, dict)
        and action.get("type") == "exec"
    ):
        payload = {**payload, "action": {**action, **{k: action.get(k) for k in _EXEC_ACTION_DEFAULTS}}}
    return payload


def _is_user_message(item: dict[str, Any]) -> bool:
    return item.get("type") == "message" and item.get("role") == "user"


@dataclass(frozen=True, slots=True)
class DerivedHistory:
    items: tuple[dict[str, Any], ...]
    synthetic_outputs: int  # "aborted" outputs inserted for calls without one
    dropped_orphans: int  # outputs without a call, dropped
    base_from_compaction: bool  # the history starts from a compacted replacement_history
    rollbacks_applied: int
    excluded: tuple[str, ...] = EXCLUDED


class HistoryBuilder:
    """Fed every decoded rollout line (in order); ``derive()`` returns what Codex would send."""

    def __init__(self) -> None:
        # (turn segment, item); segment -1 holds a compaction's base history
        self._items: list[tuple[int, dict[str, Any]]] = []
        self._segment = 0
        self._from_compaction = False
        self._rollbacks = 0
        self._metas = 0
        self.restarts = 0  # later session_meta lines that dropped the history before them

    def feed(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        payload = line.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "response_item":
            item_type = payload.get("type")
            if item_type in RESPONSE_ITEM_TYPES and item_type not in DROPPED_ON_LOAD:
                self._items.append((self._segment, _sendable(payload)))
        elif kind == "event_msg":
            event = payload.get("type")
            if event == "task_started":
                self._segment += 1
            elif event == "thread_rolled_back":
                turns = payload.get("num_turns")
                if type(turns) is int and turns > 0:
                    self._roll_back(turns)
        elif kind == "compacted":
            self._compacted(payload)
        elif kind == "session_meta":
            self._metas += 1
            if self._metas > 1:
                # Observed with 0.171: a later session_meta drops the history before it (the
                # resumed request starts after it and re-adds the permissions context).
                self._items = []
                self.restarts += 1

    def _compacted(self, payload: dict[str, Any]) -> None:
        history = payload.get("replacement_history")
        if isinstance(history, list):
            self._items = [(-1, _sendable(item)) for item in history if isinstance(item, dict)]
        else:
            # Legacy compaction: the user messages so far plus the summary as a user message.
            users = [(-1, item) for _, item in self._items if _is_user_message(item)]
            summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
            users.append(
                (
                    -1,
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]},
                )
            )
            self._items = users
        self._from_compaction = True

    def _roll_back(self, turns: int) -> None:
        """Drop the newest ``turns`` segments that hold a user message (ThreadRolledBack)."""
        self._rollbacks += 1
        segments = sorted({seg for seg, item in self._items if seg >= 0 and _is_user_message(item)})
        doomed = set(segments[-turns:])
        self._items = [(seg, item) for seg, item in self._items if seg not in doomed]

    def derive(self) -> DerivedHistory:
        items = [item for _, item in self._items]
        with_outputs = {i.get("call_id") for i in items if i.get("type") == "function_call_output"}
        with_custom = {i.get("call_id") for i in items if i.get("type") == "custom_tool_call_output"}
        out: list[dict[str, Any]] = []
        synthetic = 0
        for item in items:
            out.append(item)
            kind = item.get("type")
            if kind not in CALL_TYPES or item.get("call_id") is None:
                continue
            answered = with_custom if kind == "custom_tool_call" else with_outputs
            if item.get("call_id") not in answered:
                out.append(aborted_output(item))
                synthetic += 1
        calls = {kind: {i.get("call_id") for i in out if i.get("type") == kind} for kind in CALL_TYPES}
        function_calls = calls["function_call"] | calls["local_shell_call"]
        kept: list[dict[str, Any]] = []
        dropped = 0
        for item in out:
            kind = item.get("type")
            if kind in OUTPUT_TYPES:
                known = calls["custom_tool_call"] if kind == "custom_tool_call_output" else function_calls
                if item.get("call_id") not in known:
                    dropped += 1
                    continue
            kept.append(item)
        return DerivedHistory(tuple(kept), synthetic, dropped, self._from_compaction, self._rollbacks)
