"""What resume adds for the calls of the last run that were never answered (spec agent-formats
§0: an interrupted ``tool_result`` per call without result), held bounded (issue 11 item 1).

derive's builder keeps the tool ids of the calls met since the last user turn (``pending``): a
``held.HeldList``, moved to the derivation's own spill file past ``held.HELD_AT`` ids, so a run
of assistant entries with no user entry between them costs no memory per call. The last flush
closes those among the dangling calls (``closing_ids``: a set in memory, past the threshold a
table of the dangling ids in the same file) and writes one user message of their interrupted
results. When the ids it closes (or any list of the span: ``user_span.py``) were moved to the
file, that message's content is not built: it is a ``core.closer_list.Closers`` that makes the
blocks before the run, one interrupted result per id read back, and the blocks after it, anew
each time it is walked; the writers stream it (``render/json_stream.py``, ``render/derive_view.py``,
``render/derive_markdown.py``) and the redactor maps it as it is walked (``core/redact.py``).
Below the threshold the message is the tuple it always was: the bytes written are the same.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.held import HeldList, Store
from sesstool.dialects.claude.scan_facts import ToolCall
from sesstool.store.spilling import SpillingRows

Json = dict[str, Any]


def interrupted_result(tool_id: str) -> Json:
    """The block resume adds for a call without result; key order as the CLI writes the
    closer's block (spec agent-formats §0)."""
    return {
        "type": "tool_result",
        "content": vocab.INTERRUPTED_TOOL_TEXT,
        "is_error": True,
        "tool_use_id": tool_id,
    }


class _DanglingIds(SpillingRows):
    """The ids of the dangling calls as rows of the derivation's spill file (``in`` looks one
    up): a ``SpillingRows`` moved to the file at its first id. Asked only about pending ids, so
    it answers as the pending ones among them would."""

    __slots__ = ()

    def __init__(self, store: Store, dangling: Iterable[ToolCall]) -> None:
        super().__init__(store, _in_the_file)
        for call in dangling:
            self[call.id] = None

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.items())


def _in_the_file() -> tuple[int, None]:
    return -1, None  # no id held in memory: the pending ids they are asked about are in the file


def closing_ids(dangling: Iterable[ToolCall], pending: HeldList[str], store: Store) -> Collection[str]:
    """The ids among ``pending`` that resume closes (§0: the dangling calls of the active
    chain): a set of them while ``pending`` is in memory; once it moved to the spill file, the
    dangling ids in a table of that file (a pending id is among them exactly when it is among
    the pending ones among them; the last flush walks every pending id in both cases)."""
    if not pending.spilled:
        waiting = set(pending)
        return {call.id for call in dangling if call.id in waiting}
    return _DanglingIds(store, dangling)
