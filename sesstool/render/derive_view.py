"""derive output: the message list as JSON, JSONL, or a readable transcript."""

from __future__ import annotations

from typing import Any, BinaryIO

from rich.console import Console
from rich.text import Text

from sesstool.core.jsonline import dumps, dumps_pretty
from sesstool.engine.derive import DeriveReport
from sesstool.render.escape import safe
from sesstool.render.jsonout import derive_doc

ROLE_STYLE = {
    "user": "bold cyan",
    "assistant": "bold green",
    "tool": "bold yellow",
    "system": "bold magenta",
    "developer": "bold magenta",
}


def render_json(rep: DeriveReport, out: BinaryIO) -> None:
    out.write(dumps_pretty(derive_doc(rep)) + b"\n")


def render_jsonl(rep: DeriveReport, out: BinaryIO) -> None:
    for message in rep.messages:
        out.write(dumps(message) + b"\n")


def _blocks(content: Any) -> list[str]:
    parts: list[str] = []
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return [repr(content)]
    for block in content:
        if not isinstance(block, dict):
            parts.append(repr(block))
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text", "summary_text"):  # dsh / Responses API
            parts.append(str(block.get("text", "")))
        elif kind == "reasoning":
            parts.append(f"(reasoning) {block.get('text', '')}")
        elif kind == "tool-call":
            parts.append(f"→ call {block.get('name')} [{block.get('id')}] {block.get('arguments')}")
        elif kind == "tool_use":  # Anthropic Messages blocks (Claude Code transcripts)
            arguments = dumps(block.get("input")).decode()
            parts.append(f"→ call {block.get('name')} [{block.get('id')}] {arguments}")
        elif kind == "tool_result":
            flag = " (error)" if block.get("is_error") else ""
            parts.append(f"← result [{block.get('tool_use_id')}]{flag}")
            parts.extend(_blocks(block.get("content")))
        elif kind == "tool-result":
            flag = " (error)" if block.get("isError") else ""
            parts.append(f"← result [{block.get('toolCallId')}]{flag}")
            parts.extend(_blocks(block.get("content")))
        else:
            parts.append(f"[{kind} block]")
    return parts


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
        return "reasoning", _blocks(message.get("summary"))
    return kind, []


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
        parts = _blocks(message.get("content"))
        for call in message.get("tool_calls") or ():  # mini-agent (OpenAI) tool calls
            if isinstance(call, dict):
                fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
                parts.append(f"→ call {fn.get('name')} [{call.get('id')}] {fn.get('arguments')}")
        for part in parts:
            console.print(Text("  " + safe(part).replace("\n", "\n  ")))
        console.print()
    at = f" as of seq {rep.at}" if rep.at is not None else ""
    console.print(Text(f"{len(rep.messages)} message(s){at}", style="dim"))
    for note in rep.scan.dialect.derive_excludes():
        console.print(Text(f"not included: {safe(note)}", style="dim"))
    for note in rep.scan.dialect.derive_notes(rep.scan.scan):
        console.print(Text(safe(f"best effort: {note}"), style="yellow"))
