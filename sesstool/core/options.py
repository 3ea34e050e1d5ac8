"""What a scan collects and how strictly it reads (shared by every dialect's scanner)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sesstool.core.jsonline import ORJSON_MAX_DEPTH


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What to collect and how strictly to read."""

    fixture: bool = False  # seq/time may be omitted; header optional
    assume_version: int = 0  # fixture mode without a header
    at_seq: int | None = None  # fold only events with seq <= at_seq
    collect_messages: bool = False  # derive: keep the projected messages
    # derive, streamed (issue 14): an envelope dialect keeps each message's plaintext line offset
    # instead of the message itself, and derive reads the lines back by address
    message_addresses: bool = False
    collect_timeline: bool = False  # inspect --timeline
    # where timeline entries go instead of a list kept in the result: anything with ``append``
    # (inspect streams them to its output, issue 11 item 1c)
    timeline_sink: Any = None
    max_findings: int = 1000
    max_depth: int = ORJSON_MAX_DEPTH  # below orjson's own 1024, every line is depth-checked
    strict: bool = False  # also report duplicate object keys (every line takes the careful path)
    filename_version: int | None = None  # version implied by a canonical file name

    def new_timeline(self) -> Any:
        """Where a scan puts timeline entries: the sink, a new list, or None (not collected)."""
        if self.timeline_sink is not None:
            return self.timeline_sink
        return [] if self.collect_timeline else None
