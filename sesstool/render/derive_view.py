"""derive output: the message list as JSON, JSONL, or a readable transcript."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any, BinaryIO

from rich.console import Console
from rich.text import Text

from sesstool.core.closer_list import Closers
from sesstool.core.joined_text import JoinedText
from sesstool.core.jsonline import dumps, dumps_pretty, dumps_pretty_ascii, encodable
from sesstool.core.request import envelope_document
from sesstool.engine.derive import DeriveReport
from sesstool.render.escape import safe
from sesstool.render.json_stream import compact_pieces, pretty_pieces
from sesstool.render.jsonout import derive_doc

ROLE_STYLE = {
    "user": "bold cyan",
    "assistant": "bold green",
    "tool": "bold yellow",
    "system": "bold magenta",
    "developer": "bold magenta",
}


_MESSAGES = b'"messages": "@@sesstool:messages@@"'
_REQUEST = b'"request": "@@sesstool:request@@"'
_SYSTEM = b'"system_messages": "@@sesstool:system@@"'


def render_json(rep: DeriveReport, out: BinaryIO) -> None:
    """The derive document, byte for byte what ``dumps_pretty`` makes of it whole, written as
    it is produced: the members around the messages from the document with two placeholders,
    each message pretty-printed at its depth as it is read back (issue 14); the system messages
    the request envelope cites after them are written the same way from the spool that kept
    them (issue 17: a Claude session has one per turn)."""
    doc = derive_doc(rep, _MESSAGES[13:-1].decode(), _REQUEST[12:-1].decode())
    ascii_only = rep.messages.ascii_only or not encodable(doc) or not rep.envelope_encodable()
    pretty = dumps_pretty_ascii if ascii_only else dumps_pretty
    skeleton = pretty(doc)
    head, rest = skeleton.split(_MESSAGES, 1)
    middle, tail = rest.split(_REQUEST, 1)
    out.write(head + b'"messages": ')
    rep.messages.keep_system = True  # the request envelope cites them
    first = True
    for message in rep.messages:
        out.write(b"[\n    " if first else b",\n    ")
        for piece in pretty_pieces(message, ascii_only):  # a streamed content in pieces
            out.write(piece.replace(b"\n", b"\n    "))
        first = False
    out.write(b"[]" if first else b"\n  ]")
    cited = rep.messages.system_count > 0
    request = envelope_document(rep.request, [])
    if cited:  # where ``envelope_document`` puts them: last
        request["system_messages"] = _SYSTEM[20:-1].decode()
    envelope = pretty(request).replace(b"\n", b"\n  ")
    if not cited:
        out.write(middle + b'"request": ' + envelope + tail + b"\n")
        return
    before, after = envelope.split(_SYSTEM, 1)
    out.write(middle + b'"request": ' + before + b'"system_messages": ')
    first = True
    for message in rep.messages.systems():
        out.write(b"[\n      " if first else b",\n      ")
        for piece in pretty_pieces(message, ascii_only):  # a streamed text in pieces
            out.write(piece.replace(b"\n", b"\n      "))
        first = False
    out.write(b"\n    ]" + after + tail + b"\n")


def render_jsonl(rep: DeriveReport, out: BinaryIO) -> None:
    """One line per message; a streamed content (a run of interrupted results) written in
    pieces, the bytes of one dump of the line (``json_stream.compact_pieces``)."""
    for message in rep.messages:
        for piece in compact_pieces(message):
            out.write(piece)
        out.write(b"\n")


def _blocks(content: Any) -> Iterator[str]:
    """The lines of a content, made as they are walked (a ``Closers`` content too)."""
    if content is None:
        return
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list | Closers):
        yield repr(content)
        return
    for block in content:
        if not isinstance(block, dict):
            yield repr(block)
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text", "summary_text"):  # dsh / Responses API
            text = block.get("text", "")
            if isinstance(text, JoinedText):  # printed a part at a time: the same lines
                yield from _joined_lines(text)
            else:
                yield str(text)
        elif kind == "reasoning":
            yield f"(reasoning) {block.get('text', '')}"
        elif kind == "tool-call":
            yield f"→ call {block.get('name')} [{block.get('id')}] {block.get('arguments')}"
        elif kind == "tool_use":  # Anthropic Messages blocks (Claude Code transcripts)
            arguments = dumps(block.get("input")).decode()
            yield f"→ call {block.get('name')} [{block.get('id')}] {arguments}"
        elif kind == "tool_result":
            flag = " (error)" if block.get("is_error") else ""
            yield f"← result [{block.get('tool_use_id')}]{flag}"
            yield from _blocks(block.get("content"))
        elif kind == "tool-result":
            flag = " (error)" if block.get("isError") else ""
            yield f"← result [{block.get('toolCallId')}]{flag}"
            yield from _blocks(block.get("content"))
        else:
            yield f"[{kind} block]"


def _joined_lines(text: JoinedText) -> Iterator[str]:
    """A streamed text as ``render_text`` prints it: its parts, and the lines the separator puts
    between them (each printed on lines of its own, as the whole text's lines would be)."""
    between = text.between()
    for n, part in enumerate(text):
        if n:
            yield from between
        yield part


def _item(message: dict[str, Any]) -> tuple[str, list[str]]:
    """A Responses API input item without a role (a call, an output, reasoning)."""
    kind = str(message.get("type"))
    call = f"[{message.get('call_id')}]"
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        detail = message.get("arguments", message.get("input", message.get("action")))
        return "call", [f"→ {message.get('name') or kind} {call} {detail}"]
    if kind.endswith("_output"):
        output = message.get("output")
        return "output", [f"← {call}", *(_blocks(output) if not isinstance(output, str) else [output])]
    if kind == "reasoning":
        return "reasoning", list(_blocks(message.get("summary")))
    return kind, []


def _calls(message: dict[str, Any]) -> Iterator[str]:
    for call in message.get("tool_calls") or ():  # mini-agent (OpenAI) tool calls
        if isinstance(call, dict):
            fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
            yield f"→ call {fn.get('name')} [{call.get('id')}] {fn.get('arguments')}"


def render_text(rep: DeriveReport, console: Console) -> None:
    for message in rep.messages:
        if not isinstance(message, dict):
            continue
        if "role" not in message and "type" in message:
            label, lines = _item(message)
            console.print(Text(safe(label), style="bold yellow"))
            for part in lines:
                console.print(Text("  " + safe(part).replace("\n", "\n  ")))
            console.print()
            continue
        role = str(message.get("role", "?"))
        label = role
        if role == "tool":
            flag = " error" if message.get("isError") else ""
            call_id = message.get("toolCallId", message.get("tool_call_id"))  # dsh v4 / mini-agent
            label = f"tool [{call_id}]{flag}"
        elif (
            role == "user"
            and isinstance(message.get("source"), dict)
            and message["source"].get("kind") == "tool"
        ):
            label = f"tool result [{message['source'].get('callId')}]"
        console.print(Text(safe(label), style=ROLE_STYLE.get(role, "bold")))
        for part in chain(_blocks(message.get("content")), _calls(message)):
            console.print(Text("  " + safe(part).replace("\n", "\n  ")))
        console.print()
    at = f" as of seq {rep.at}" if rep.at is not None else ""
    console.print(Text(f"{len(rep.messages)} message(s){at}", style="dim"))
    for note in rep.scan.dialect.derive_excludes():
        console.print(Text(f"not included: {safe(note)}", style="dim"))
    for note in rep.notes:
        console.print(Text(safe(f"best effort: {note}"), style="yellow"))
