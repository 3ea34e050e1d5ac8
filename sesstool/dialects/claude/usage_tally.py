"""Token usage of a transcript, counted once per reply (spec agent-formats §1.5): every entry
of a streamed reply repeats its ``message.usage``, the last one written counts. Kept in flat
memory: the usage of the last ``MESSAGE_WINDOW`` message ids (and at most ``MESSAGE_BYTES`` of
them: an id is as long as the log chose it) is held by id (the blocks of one reply are written
together), older ones are added to the totals (docs/format.md)."""

from __future__ import annotations

from typing import Any

from sesstool.core.model import Usage
from sesstool.dialects.claude import entry_graph
from sesstool.dialects.claude.entry_fields import as_int

_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class UsageTally:
    def __init__(self) -> None:
        self.recent: dict[str, tuple[int, ...]] = {}
        self.settled = [0, 0, 0, 0]
        self.recent_bytes = 0  # the characters of the ids in ``recent``

    def add(self, msg_id: str, usage: dict[str, Any]) -> None:
        if self.recent.pop(msg_id, None) is None:
            self.recent_bytes += len(msg_id)
        self.recent[msg_id] = tuple(as_int(usage.get(key)) for key in _KEYS)
        most = entry_graph.MESSAGE_BYTES
        while len(self.recent) > entry_graph.MESSAGE_WINDOW or (
            self.recent_bytes > most and len(self.recent) > 1
        ):
            oldest = next(iter(self.recent))
            for i, value in enumerate(self.recent.pop(oldest)):
                self.settled[i] += value
            self.recent_bytes -= len(oldest)

    def total(self) -> Usage:
        sums = list(self.settled)
        for values in self.recent.values():
            for i, value in enumerate(values):
                sums[i] += value
        return Usage(sums[0], sums[1], sums[2], sums[3], 0)  # Claude Code logs no reasoning tokens

    def copy(self) -> UsageTally:
        twin = UsageTally()
        twin.recent, twin.settled, twin.recent_bytes = (
            dict(self.recent),
            list(self.settled),
            self.recent_bytes,
        )
        return twin
