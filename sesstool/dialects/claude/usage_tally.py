"""Token usage of a transcript, counted once per reply (spec agent-formats §1.5): every entry
of a streamed reply repeats its ``message.usage``, the last one written counts. Kept in flat
memory: the usage of the last ``MESSAGE_WINDOW`` message ids is held by id (the blocks of one
reply are written together), older ones are added to the totals (docs/format.md)."""

from __future__ import annotations

from typing import Any

from sesstool.core.model import Usage
from sesstool.dialects.claude.entry_fields import as_int
from sesstool.dialects.claude.entry_graph import MESSAGE_WINDOW

_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class UsageTally:
    def __init__(self) -> None:
        self.recent: dict[str, tuple[int, ...]] = {}
        self.settled = [0, 0, 0, 0]

    def add(self, msg_id: str, usage: dict[str, Any]) -> None:
        self.recent.pop(msg_id, None)
        self.recent[msg_id] = tuple(as_int(usage.get(key)) for key in _KEYS)
        if len(self.recent) > MESSAGE_WINDOW:
            oldest = next(iter(self.recent))
            for i, value in enumerate(self.recent.pop(oldest)):
                self.settled[i] += value

    def total(self) -> Usage:
        sums = list(self.settled)
        for values in self.recent.values():
            for i, value in enumerate(values):
                sums[i] += value
        return Usage(sums[0], sums[1], sums[2], sums[3], 0)  # Claude Code logs no reasoning tokens

    def copy(self) -> UsageTally:
        twin = UsageTally()
        twin.recent, twin.settled = dict(self.recent), list(self.settled)
        return twin
