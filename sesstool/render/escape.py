"""Make log text safe for a terminal: no control character or escape sequence passes raw.

C0 controls, DEL, C1 controls, bidi overrides/isolates and lone surrogates are shown as
visible escapes (``\\x1b``, ``\\u202e``); JSON output never goes through here (it is exact).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


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
    """Escape for multi-line display: newlines and tabs are kept."""
    return _UNSAFE.sub(_visible, text)


def safe_line(text: str) -> str:
    """Escape for one-line display: newlines and tabs become visible too."""
    return _UNSAFE_ONE_LINE.sub(_visible, text)
