"""The entries a repair appends: exactly what Claude Code appends on resume (spec agent-formats §0, §4).

Per tool_use on the active chain without a result, a ``user`` entry carrying an interrupted
``tool_result`` (``is_error``, the CLI's text), parented to the entry that carried the call;
then, when the chain ends on a user turn, the ``assistant`` entry ``No response requested.``
with ``stop_reason: "stop_sequence"`` and model ``<synthetic>``. Keys in the CLI's order,
envelope fields copied from the last entry. uuids are derived from the session id and what
they close, timestamps are the file's latest: a repair is reproducible (§4).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.humanize import chosen
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.scan_facts import Closing

Json = dict[str, Any]
NAMESPACE = uuidlib.UUID("2f0c6f5e-55d1-4d8a-9d0e-7c1a5e551017")


def closer_uuid(session: str | None, *parts: str) -> str:
    return str(uuidlib.uuid5(NAMESPACE, "/".join((session or "", *parts))))


def closers_of(closing: Closing | None, session: str | None, rename: str | None = None) -> Closers[Json]:
    """The entries a repair (or, with ``rename``, a fork's child) appends, made as they are
    walked (never held: the dangling calls behind them are read back from the spill file past
    ``held.HELD_AT``, issue 11 item 1); sized without making them. ``closing`` None: nothing
    to append (a subagent's own file). ``rename``: every record carries that ``sessionId``."""
    if closing is None:
        return Closers(tuple, 0)
    kept = closing

    def make() -> Iterator[Json]:
        for record in closer_records(kept, session if rename is None else rename):
            if rename is not None:
                record["sessionId"] = rename
            yield record

    return Closers(make, len(kept.dangling) + kept.no_response)


def plan_closers(closing: Closing, session: str | None) -> list[Json]:
    """The entries to append after the committed prefix, in order (empty: nothing)."""
    return list(closer_records(closing, session))


def closer_records(closing: Closing, session: str | None) -> Iterator[Json]:
    """``plan_closers``, one record at a time."""
    envelope = dict(closing.envelope)
    head = {"isSidechain": envelope.pop("isSidechain", False)}
    tail = envelope
    parent = closing.parent
    for call in closing.dangling:
        entry: Json = {"parentUuid": call.entry, **head}
        if closing.prompt_id is not None:
            entry["promptId"] = closing.prompt_id
        entry.update(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "content": vocab.INTERRUPTED_TOOL_TEXT,
                            "is_error": True,
                            "tool_use_id": call.id,
                        }
                    ],
                },
                "uuid": closer_uuid(session, call.id, "interrupted"),
                "timestamp": closing.timestamp,
                "toolUseResult": vocab.INTERRUPTED_TOOL_TEXT,
                "toolDenialKind": "interrupted",
                "sourceToolAssistantUUID": call.entry,
                **tail,
            }
        )
        yield entry
        parent = entry["uuid"]
    if closing.no_response:
        yield (
            {
                "parentUuid": parent,
                **head,
                "type": "assistant",
                "uuid": closer_uuid(session, parent or "", "no-response"),
                "timestamp": closing.timestamp,
                "message": {
                    "diagnostics": None,
                    "id": closer_uuid(session, parent or "", "no-response", "message"),
                    "container": None,
                    "model": vocab.SYNTHETIC_MODEL,
                    "role": "assistant",
                    "stop_details": None,
                    "stop_reason": "stop_sequence",
                    "stop_sequence": "",
                    "type": "message",
                    "usage": {
                        "output_tokens_details": None,
                        "input_tokens": 0,
                        "output_tokens": 0,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                        "service_tier": None,
                        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
                        "inference_geo": None,
                        "iterations": None,
                        "speed": None,
                        "fallback_credit": None,
                    },
                    "content": [{"type": "text", "text": vocab.NO_RESPONSE_TEXT}],
                    "context_management": None,
                },
                "isApiErrorMessage": False,
                "madeBy": "other",
                **tail,
            }
        )


def describe(record: Json) -> str:
    """One line per appended entry (inspect, repair --dry-run)."""
    if record.get("type") == "user":
        block = record["message"]["content"][0]
        return (
            f"user       tool_result for {chosen(block['tool_use_id'])}: interrupted (is_error), "
            f"parent {chosen(record['parentUuid'])}"
        )
    return f"assistant  {vocab.NO_RESPONSE_TEXT!r} (stop_sequence), parent {chosen(record['parentUuid'])}"
