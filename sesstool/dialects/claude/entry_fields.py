"""Reading the fields of one decoded transcript entry (spec agent-formats §1.3–§1.6): content
blocks, what kind of user entry it is, the envelope resume copies. Pure functions of one entry."""

from __future__ import annotations

from typing import Any

from sesstool.core.jsonline import dumps
from sesstool.dialects.claude import vocabulary as vocab

Json = dict[str, Any]


def blocks(message: Any) -> list[Json]:
    """The content blocks of a ``message`` that are objects (a string content has none)."""
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def user_kind(entry: Json, message: Any, results: list[str]) -> str:
    """prompt | tool_result | local | summary | text: what a ``user`` entry is to a turn."""
    if entry.get("isCompactSummary") is True:
        return "summary"
    if results:
        return "tool_result"
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = next((t for t in texts if isinstance(t, str)), "")
    if text.startswith(vocab.LOCAL_COMMAND_PREFIXES):
        return "local"
    if (
        entry.get("isMeta") is True
        or entry.get("origin") is not None
        or text.startswith("[Request interrupted")
    ):
        return "text"
    return "prompt"


def envelope(entry: Json) -> tuple[tuple[str, Any], ...]:
    """The fields resume copies from the last entry into what it appends (§0), in order."""
    fields: list[tuple[str, Any]] = [("isSidechain", entry.get("isSidechain", False))]
    fields.extend((key, entry[key]) for key in vocab.ENVELOPE_TAIL if key in entry)
    if "slug" in entry:
        fields.append(("slug", entry["slug"]))
    return tuple(fields)


def as_dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def compact(value: Any) -> str:
    """A tool input as one screen line: compact JSON cut to 200 characters."""
    text = dumps(value).decode("utf-8", "replace")
    return text if len(text) <= 200 else text[:199] + "…"
