"""Derived messages as role + parts, the same shape for every dialect's message layout.

Read by shape, not by dialect: typed content blocks (dsh ``text``/``reasoning``/``tool-call``/
``tool-result``; Anthropic-style ``tool_use``/``tool_result``/``thinking``; Responses-style
``input_text``/``output_text``), OpenAI-style messages (a string content, ``tool_calls``,
``tool_call_id``), and Responses-style items that are a call or its output themselves
(``function_call``, ``function_call_output``, …). Views (the HTML report, the Markdown
transcript) draw parts and never look at a dialect's layout.

A text block whose text is a ``core.joined_text.JoinedText`` (a Claude span's system message,
its parts spilled) is a ``StreamedPart``: ``bounded`` gives the report its first ``limit``
characters and counts the rest as any cut part's (the page a text held in memory gets), the
Markdown transcript writes it a part at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.joined_text import JoinedText
from sesstool.core.jsonline import dumps
from sesstool.core.report_model import Message, Part


@dataclass(frozen=True, slots=True)
class StreamedPart(Part):
    """A text part whose text is streamed (``joined``); its ``text`` is empty."""

    joined: JoinedText | None = None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return dumps(value).decode("utf-8", "replace")
    except (TypeError, ValueError):
        return repr(value)


def _content_parts(content: Any) -> list[Part] | Closers[Part]:
    """A part per block; a content made as it is walked (``Closers``: a run of interrupted
    results) gives parts made as they are walked."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", content)]
    if isinstance(content, Closers):
        return content.mapped(_block_part)
    if not isinstance(content, list):
        return [Part("other", _text(content))]
    return [_block_part(block) for block in content]


def _block_part(block: Any) -> Part:
    if not isinstance(block, dict):
        return Part("other", _text(block))
    kind = block.get("type")
    if kind in _TEXT_BLOCKS:
        text = block.get("text", "")
        if isinstance(text, JoinedText):
            return StreamedPart("text", "", joined=text)
        return Part("text", _text(text))
    if kind in ("reasoning", "thinking"):
        return Part("reasoning", _text(block.get("text", block.get("thinking", ""))))
    if kind == "tool_use":
        return Part(
            "tool-call", _text(block.get("input", "")), _opt(block.get("name")), _opt(block.get("id"))
        )
    if kind == "tool_result":
        text = "\n".join(p.text for p in _content_parts(block.get("content")))
        return Part("tool-result", text, None, _opt(block.get("tool_use_id")), block.get("is_error") is True)
    if kind == "tool-call":
        return Part(
            "tool-call", _text(block.get("arguments", "")), _opt(block.get("name")), _opt(block.get("id"))
        )
    if kind == "tool-result":
        text = "\n".join(p.text for p in _content_parts(block.get("content")))
        return Part("tool-result", text, None, _opt(block.get("toolCallId")), block.get("isError") is True)
    return Part("other", _text(block))


_TEXT_BLOCKS = frozenset(("text", "input_text", "output_text"))
_CALL_ITEMS = frozenset(("function_call", "custom_tool_call", "local_shell_call"))
_OUTPUT_ITEMS = frozenset(("function_call_output", "custom_tool_call_output"))


def _item_parts(message: dict[str, Any]) -> tuple[str, tuple[Part, ...]] | None:
    """A Responses-style item that is a call, its output, or reasoning (no ``role``)."""
    kind = message.get("type")
    call_id = _opt(message.get("call_id"))
    if kind in _CALL_ITEMS:
        args = message.get("arguments", message.get("input", message.get("action", "")))
        name = message.get("name") or kind
        return "assistant", (Part("tool-call", _text(args), _text(name), call_id),)
    if kind in _OUTPUT_ITEMS:
        output = message.get("output")
        text = output if isinstance(output, str) else _text(output)
        error = isinstance(output, dict) and output.get("success") is False
        return "tool", (Part("tool-result", text, None, call_id, error),)
    if kind == "reasoning":
        summary = message.get("summary")
        texts = [b.get("text") for b in summary if isinstance(b, dict)] if isinstance(summary, list) else []
        return "assistant", (Part("reasoning", "\n".join(t for t in texts if isinstance(t, str))),)
    return None


def _opt(value: Any) -> str | None:
    return None if value is None else _text(value)


def parts_of(message: Any) -> tuple[str, Sequence[Part]]:
    """The role and parts of one derived message (any dialect): a tuple, or parts made as they
    are walked for a content made as it is walked (``Closers``)."""
    if not isinstance(message, dict) and hasattr(message, "role") and hasattr(message, "content"):
        content = message.content
        content = content if isinstance(content, Closers) else list(content)
        message = {"role": message.role, "content": content}  # a dialect's dataclass
    if not isinstance(message, dict):
        return "?", (Part("other", _text(message)),)
    if "role" not in message and (item := _item_parts(message)) is not None:
        return item
    role = _text(message.get("role", "?"))
    parts = _content_parts(message.get("content"))
    call_id = message.get("toolCallId", message.get("tool_call_id"))
    if role == "tool" and call_id is not None:
        # a whole tool message (dsh v4, mini-agent): its content is the result
        text = "\n".join(p.text for p in parts)
        parts = [Part("tool-result", text, None, _text(call_id), message.get("isError") is True)]
    calls = message.get("tool_calls") or ()
    if isinstance(parts, Closers):
        if not calls:
            return role, parts
        parts = list(parts)
    for call in calls:
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
        return Message(role, tuple(_whole(p) for p in parts) if isinstance(parts, tuple) else parts, 0)
    if isinstance(parts, Closers):  # made as walked: cut as walked, the cut counted in a walk
        cut = sum(len(p.text) - limit for p in parts if len(p.text) > limit)
        return Message(role, parts.mapped(lambda p: _cut(p, limit)), cut)
    cut = 0
    kept: list[Part] = []
    for p in parts:
        if isinstance(p, StreamedPart) and p.joined is not None:  # its first characters
            cut += max(0, p.joined.chars() - limit)
            p = Part(p.kind, p.joined.head(limit), p.name, p.call_id, p.error)
        elif len(p.text) > limit:
            cut += len(p.text) - limit
            p = Part(p.kind, p.text[:limit], p.name, p.call_id, p.error)
        kept.append(p)
    return Message(role, tuple(kept), cut)


def _cut(p: Part, limit: int) -> Part:
    return Part(p.kind, p.text[:limit], p.name, p.call_id, p.error) if len(p.text) > limit else p


def _whole(p: Part) -> Part:
    """A streamed text part as one text (``bounded`` without a limit: the whole text)."""
    if isinstance(p, StreamedPart) and p.joined is not None:
        return Part(p.kind, "".join(p.joined.pieces()), p.name, p.call_id, p.error)
    return p
