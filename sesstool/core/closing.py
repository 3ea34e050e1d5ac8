"""What every dialect's closers share (spec §7.1 for dsh): one record per pending call, in
registration order, with consecutive seqs; a call that started cites its ``tool/call``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sesstool.core.model import PendingCall

# (pending call, the seq its closer takes) -> the closer record, without ``sourceEventSeqs``
CloserFor = Callable[[PendingCall, int], dict[str, Any]]


def answer_calls(pending: Sequence[PendingCall], seq: int, closer_for: CloserFor) -> Iterator[dict[str, Any]]:
    """The closers of ``pending`` from ``seq`` on, made as they are walked (the next seq after
    them is ``seq + len(pending)``)."""
    for call in pending:
        record = closer_for(call, seq)
        if call.call_seq is not None:
            record["sourceEventSeqs"] = [call.call_seq]
        yield record
        seq += 1
