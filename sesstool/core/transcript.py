"""Derived messages as role + parts, the same shape for every dialect's message layout.

dsh messages carry typed content blocks (text, reasoning, tool-call, tool-result); mini-agent
messages are OpenAI-style (a string content, ``tool_calls``, ``tool_call_id``). Views (the HTML
report, the Markdown transcript) draw parts and never look at a dialect's layout.
"""

from __future__ import annotations

from typing import Any

from sesstool.core.jsonline import dumps
from sesstool.core.report_model import Message, Part


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return dumps(value).decode("utf-8", "replace")
    except (TypeError, ValueError):
        return repr(value)


def _content_parts(content: Any) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", content)]
    if not isinstance(content, list):
        return [Part("other", _text(content))]
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(Part("other", _text(block)))
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(Part("text", _text(block.get("text", ""))))
        elif kind == "reasoning":
            parts.append(Part("reasoning", _text(block.get("text", ""))))
        elif kind == "tool-call":
            parts.append(
                Part(
                    "tool-call",
                    _text(block.get("arguments", "")),
                    _opt(block.get("name")),
                    _opt(block.get("id")),
                )
            )
        elif kind == "tool-result":
            inner = _content_parts(block.get("content"))
            text = "\n".join(p.text for p in inner)
            parts.append(
                Part("tool-result", text, None, _opt(block.get("toolCallId")), block.get("isError") is True)
            )
        else:
            parts.append(Part("other", _text(block)))
    return parts


def _opt(value: Any) -> str | None:
    return None if value is None else _text(value)


def parts_of(message: Any) -> tuple[str, tuple[Part, ...]]:
    """The role and parts of one derived message (any dialect)."""
    if not isinstance(message, dict):
        return "?", (Part("other", _text(message)),)
    role = _text(message.get("role", "?"))
    parts = _content_parts(message.get("content"))
    call_id = message.get("toolCallId", message.get("tool_call_id"))
    if role == "tool" and call_id is not None:
        # a whole tool message (dsh v4, mini-agent): its content is the result
        text = "\n".join(p.text for p in parts)
        parts = [Part("tool-result", text, None, _text(call_id), message.get("isError") is True)]
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            assert isinstance(fn, dict)
            parts.append(
                Part("tool-call", _text(fn.get("arguments", "")), _opt(fn.get("name")), _opt(call.get("id")))
            )
    return role, tuple(parts)


def bounded(message: Any, limit: int | None) -> Message:
    """``parts_of`` with each part cut to ``limit`` characters (None: whole)."""
    role, parts = parts_of(message)
    if limit is None:
        return Message(role, parts, 0)
    cut = 0
    kept: list[Part] = []
    for p in parts:
        if len(p.text) > limit:
            cut += len(p.text) - limit
            p = Part(p.kind, p.text[:limit], p.name, p.call_id, p.error)
        kept.append(p)
    return Message(role, tuple(kept), cut)
