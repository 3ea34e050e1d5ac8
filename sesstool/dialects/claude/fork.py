"""Fork a Claude Code transcript: a new session id in every entry, recording where it came from.

Like the SDK's fork (spec agent-formats §1.7 B) the child gets a fresh ``sessionId`` and each
graph entry a ``forkedFrom: {sessionId, messageUuid}`` stamp; unlike it, uuids are kept (the
child is a copy, so a uuid still names the same message) and nothing is dropped: every line is
carried over with only those two byte-level edits — the top-level ``sessionId`` value replaced
and the stamp inserted first — so no other byte of an entry is re-serialized.
Lines that do not decode (a torn tail excepted, which is never copied) are carried verbatim.
"""

from __future__ import annotations

import re
from typing import Any

from sesstool.core.jsonline import JSON_STRING, LineError, dumps, loads
from sesstool.dialects.claude import vocabulary as vocab

# a string (the possessive form of core.jsonline.JSON_STRING: nothing held per character) or a
# bracket
_TOKEN = re.compile(JSON_STRING.pattern + rb"|[{}\[\]]")
_QUOTE, _OPEN = ord('"'), frozenset(b"{[")


def top_level_key_value(line: bytes, key: bytes, value: bytes) -> int | None:
    """Offset of ``"key":"value"`` where it is a key of the outermost object, else None.
    One pass over the line's strings and brackets, whatever the pair's copies nested deeper
    (a copy inside a string is part of that string's token, never a token's start)."""
    needle = b'"' + key + b'":"' + value + b'"'
    if needle not in line:
        return None
    depth = 0
    for token in _TOKEN.finditer(line):
        at = token.start()
        first = line[at]
        if first == _QUOTE:
            if depth == 1 and line.startswith(needle, at):
                return at
        elif first in _OPEN:
            depth += 1
        else:
            depth -= 1
    return None


def fork_line(line: bytes, old: str, new: str) -> tuple[bytes, bool]:
    """The child's copy of one line and whether it was changed."""
    try:
        entry: Any = loads(line)
    except LineError:
        return line, False
    if not isinstance(entry, dict) or entry.get("sessionId") != old:
        return line, False
    old_text, new_text = dumps(old)[1:-1], dumps(new)[1:-1]
    at = top_level_key_value(line, b"sessionId", old_text)
    if at is None:
        return line, False  # written with escapes or spacing this copier does not rewrite
    start = at + len(b'"sessionId":"')
    out = line[:start] + new_text + line[start + len(old_text) :]
    if entry.get("type") in vocab.CHAIN_TYPES and isinstance(entry.get("uuid"), str) and out.startswith(b"{"):
        stamp = dumps({"sessionId": old, "messageUuid": entry["uuid"]})
        out = b'{"forkedFrom":' + stamp + b"," + out[1:]
    return out, True
