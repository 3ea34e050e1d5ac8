"""What ``repair --salvage`` can still read in a rollout line Codex's loader skips
(docs/format.md "Salvage of a rollout").

Codex skips an undecodable line and goes on (agent-formats §3.4), so a salvage keeps every line
Codex reads and drops only the lines it skips. The one shape with a readable part is a write that
was cut short and followed, on the same physical line, by a complete one (openai/codex #24425,
agent-formats §3.5) — or NUL bytes before a complete line: the complete rollout line at the end
is recovered byte for byte, the bytes before it are dropped.
"""

from __future__ import annotations

import orjson

from sesstool.dialects.codex.vocabulary import LINE_START, is_rollout_line

MAX_TRIES = 64  # candidate starts tried in one line: bounds the work on a hostile line


def _rollout_line(data: bytes) -> bool:
    try:
        return is_rollout_line(orjson.loads(data))
    except orjson.JSONDecodeError:
        return False


def readable_from(line: bytes) -> int | None:
    """Where the part of ``line`` Codex would read begins: 0 for a line Codex reads (or skips
    as blank), ``n > 0`` when only the complete rollout line from byte ``n`` on is readable,
    None when nothing in it is."""
    if not line.strip() or _rollout_line(line):
        return 0
    start = line.find(LINE_START, 1)
    tries = 0
    while start > 0 and tries < MAX_TRIES:
        if _rollout_line(line[start:]):
            return start
        start = line.find(LINE_START, start + 1)
        tries += 1
    return None
