"""derive --format markdown: the transcript as Markdown, safe for any content.

Log text only ever appears inside fenced code blocks whose fence is longer than any backtick
run in the text (CommonMark §4.5: a closing fence must be at least as long as the opening
one), or as inline text with every Markdown and HTML metacharacter escaped. Terminal-unsafe
characters are made visible first, as in every human view. A streamed text (a Claude span's
system message, its parts spilled: ``core.joined_text.JoinedText``) is written a part at a time,
its fence found in a first walk (``_streamed``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, TextIO

from sesstool.core.joined_text import JoinedText
from sesstool.core.report_model import Part
from sesstool.core.transcript import StreamedPart, parts_of
from sesstool.engine.derive import DeriveReport
from sesstool.render.escape import safe, safe_line

_BACKTICKS = re.compile(r"`+")
_INLINE_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def fence_for(text: str) -> str:
    """A backtick fence no line of ``text`` can close: longer than its longest backtick run."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: str, info: str = "") -> str:
    fence = fence_for(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}\n"


def inline(text: str) -> str:
    """One line of log text as plain Markdown text: escaped, never markup."""
    one = safe_line(text)
    one = one.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _INLINE_SPECIAL.sub(r"\\\1", one)


def _pretty_arguments(text: str) -> tuple[str, str]:
    try:
        value = json.loads(text)
    except ValueError:
        return text, "text"
    return json.dumps(value, indent=2, ensure_ascii=False), "json"


def _part(p: Part) -> str:
    text = safe(p.text)
    if p.kind == "tool-call":
        args, info = _pretty_arguments(text)
        head = f"**tool call** {inline(p.name or '?')}" + (f" · id {inline(p.call_id)}" if p.call_id else "")
        return f"{head}\n\n{fenced(args, info)}"
    if p.kind == "tool-result":
        head = "**tool result**" + (f" · id {inline(p.call_id)}" if p.call_id else "")
        head += " · **error**" if p.error else ""
        return f"{head}\n\n{fenced(text, 'text')}"
    if p.kind == "reasoning":
        return f"*reasoning*\n\n{fenced(text, 'text')}"
    if p.kind == "other":
        return f"*other content*\n\n{fenced(text, 'json')}"
    return fenced(text, "text")


def render_markdown(rep: DeriveReport, out: TextIO) -> None:
    """Streamed like the other formats. With ``--redact`` the heading states the redaction
    counts, known once every message has been read: a first pass reads them all, one at a
    time, for the redactor only (``DerivedMessages.redact_ahead``), then they are written."""
    if rep.redacting:
        rep.messages.redact_ahead()
    messages: Iterable[Any] = rep.messages
    s = rep.scan.scan
    out.write(f"# Transcript · {inline(rep.scan.source.display)}\n\n")
    version = rep.as_version if rep.as_version is not None else s.version
    facts = [
        f"{inline(s.dialect)} v{version}"
        if version is not None
        else f"{inline(s.dialect)} {inline(s.version_label or '')}".rstrip(),
        f"verdict {inline(s.verdict)}",
        f"{len(rep.messages)} message(s)",
    ]
    if rep.at is not None:
        facts.append(f"as of seq {rep.at}")
    if rep.redactions:
        facts.append("redacted: " + ", ".join(f"{inline(k)} {n}" for k, n in rep.redactions))
    out.write(" · ".join(facts) + "\n")
    for n, message in enumerate(messages, 1):
        role, parts = parts_of(message)
        out.write(f"\n## {n} · {inline(role)}\n\n")
        if not parts:
            out.write("*(no content)*\n")
        for i, p in enumerate(parts):  # one at a time: parts made as walked are never held
            if isinstance(p, StreamedPart) and p.joined is not None:
                out.write("\n" if i else "")
                _streamed(p.joined, out)
            else:
                out.write(f"\n{_part(p)}" if i else _part(p))


def _streamed(text: JoinedText, out: TextIO) -> None:
    """``fenced(safe(text), "text")`` a piece at a time. ``safe`` escapes a character at a time
    and defuses a line at a time, and the separator is whole lines without a backtick: the
    escaped text is its escaped pieces one after the other, and its longest backtick run the
    longest of theirs."""
    longest = max((len(m.group(0)) for piece in text for m in _BACKTICKS.finditer(safe(piece))), default=0)
    fence = "`" * max(3, longest + 1)
    out.write(f"{fence}text\n")
    last = ""
    for piece in text.pieces():
        shown = safe(piece)
        out.write(shown)
        last = shown or last
    out.write(f"{fence}\n" if last.endswith("\n") or not last else f"\n{fence}\n")
