"""Make log text safe for a terminal: no control character or escape sequence passes raw.

C0 controls, DEL, C1 controls, bidi overrides/isolates, the Unicode line and paragraph
separators (U+2028/U+2029) and lone surrogates are shown as visible escapes (``\\x1b``,
``\\u202e``). CI logs are a terminal too: a one-line string that would begin a GitHub workflow
command (``::`` after blanks) or holds a legacy ``##[`` command prefix is defused the same way
(``\\x3a``, ``\\x23``). JSON output never goes through here (it is exact).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNSAFE_ONE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
# a workflow command starts a line (after blanks) with "::"; "##[" is the older command prefix
_COMMAND_START = re.compile(r"^([ \t]*):(?=:)", re.MULTILINE)


def _visible(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str) -> str:
    """Escape for multi-line display: newlines and tabs are kept (no line of it can begin a CI
    workflow command)."""
    return _defuse(_UNSAFE.sub(_visible, text))


def _defuse(text: str) -> str:
    if "::" in text:
        text = _COMMAND_START.sub(r"\1\\x3a", text)
    if "##[" in text:
        text = text.replace("##[", "#\\x23[")
    return text


def safe_line(text: str) -> str:
    """Escape for one-line display: newlines and tabs become visible too, and nothing in it can
    be read as a CI workflow command."""
    return _defuse(_UNSAFE_ONE_LINE.sub(_visible, text))
