"""What derive collects between two assistant replies, held bounded (issue 11 item 1).

The user entries between two replies make ONE user message (spec agent-formats §1.7 C, §1.9):
the texts of ``user``-role rendered attachments, then the tool results of the pending calls in
the order they were written (§1.9), then what resume adds for the calls never answered (§0),
then the blocks of the user entries. A span of any number of user entries, attachments or
results of parallel calls is not held: each list is a ``held.HeldList`` moved to the
derivation's spill file past ``held.HELD_AT`` items, the results are put in file order by a
``held.HeldOrder`` (SQLite's sorter once spilled), and once any of them moved the message's
content is a ``core.closer_list.Closers`` that makes the blocks anew, one at a time, each time it
is walked — the writers, ``--redact`` and ``report`` stream it as they stream the run of
interrupted results (``interrupted.py``). Below the threshold the content is the tuple it always
was, made by the same walk: the bytes written are the same.

The ``system``-role attachment texts of the span are a ``HeldList`` too, joined by a blank line
into the text of the span's system message (§1.7 C): a ``str`` while they are in memory; once
they moved, a ``core.joined_text.JoinedText`` that reads them back each time it is walked, which
the writers, ``--redact`` and ``report`` write as the one string it stands for, a part at a
time (the same bytes).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.joined_text import JoinedText
from sesstool.dialects.claude.held import HeldList, HeldOrder, Store
from sesstool.dialects.claude.interrupted import interrupted_result

Json = dict[str, Any]
_RESULT = -1  # the source of a tool result (written or added): never a text block's
# (source, block, synthesized): source, a per-entry serial — the "\n" rule joins blocks of
# different entries; synthesized, what resume adds (§0)
Part = tuple[int, Json, bool]


class Results:
    """The results found for the pending calls, handed back in the order they were written
    (by (line, block index) in the file; found in call order: a stable sort)."""

    def __init__(self, store: Store) -> None:
        self._blocks: HeldList[Json] = HeldList(store)
        self._order = HeldOrder(store)

    def __len__(self) -> int:
        return len(self._blocks)

    def add(self, where: tuple[int, int], block: Json) -> None:
        self._order.add((*where, len(self._blocks)))
        self._blocks.append(block)

    @property
    def spilled(self) -> bool:
        return self._blocks.spilled

    def walk(self) -> Iterator[Json]:
        blocks = self._blocks
        for row in self._order.sorted():
            yield blocks[row[2]]


@dataclass(slots=True)
class Span:
    """The user entries and attachments met since the last reply (``derive._Builder``)."""

    store: Store
    atts: HeldList[str] = field(init=False)  # user-role attachment texts
    parts: HeldList[tuple[int, Json]] = field(init=False)  # (source, block) of the user entries
    systems: HeldList[str] = field(init=False)  # system-role attachment texts, unwrapped
    users: int = 0

    def __post_init__(self) -> None:
        self.atts, self.parts, self.systems = HeldList(self.store), HeldList(self.store), HeldList(self.store)

    def system_text(self) -> str | JoinedText:
        """The span's system message text: its texts joined by a blank line (§1.7 C); once they
        moved to the spill file, a ``JoinedText`` of them (never joined in memory)."""
        systems = self.systems
        if systems.spilled:
            return JoinedText(systems.walk, len(systems))
        return "\n\n".join(systems)


def user_content(
    span: Span, results: Results, added: HeldList[str]
) -> tuple[tuple[Json, ...] | Closers[Json], str]:
    """The content of the span's user message and its origin (file | resume | mixed): a text
    block followed by a block of another entry gets a ``\\n``; empty, it says ``(no content)``
    (§1.7 C). A tuple while everything is in memory; else made as it is walked."""
    total = len(span.atts) + len(results) + len(added) + len(span.parts)
    if not total:
        return ({"type": "text", "text": "(no content)"},), "file"
    synthesized = len(added)
    origin = "file" if not synthesized else ("resume" if synthesized == total else "mixed")

    def make() -> Iterator[Json]:
        return _joined(_parts(span, results, added))

    if span.atts.spilled or span.parts.spilled or results.spilled or added.spilled:
        return Closers(make, total), origin
    return tuple(make()), origin


def _parts(span: Span, results: Results, added: HeldList[str]) -> Iterator[Part]:
    for n, text in enumerate(span.atts):  # each attachment text a source of its own
        yield _RESULT - 1 - n, {"type": "text", "text": text}, False
    for block in results.walk():
        yield _RESULT, block, False
    for tool_id in added:
        yield _RESULT, interrupted_result(tool_id), True
    for source, block in span.parts:
        yield source, block, False


def _joined(parts: Iterator[Part]) -> Iterator[Json]:
    """The blocks of ``parts``, a text block followed by a block of another entry given a
    trailing ``\\n`` (one part looked ahead)."""
    held: Part | None = None
    for part in parts:
        if held is not None:
            source, block, _ = held
            if block.get("type") == "text" and part[0] != source:
                block = {**block, "text": f"{block.get('text', '')}\n"}
            yield block
        held = part
    if held is not None:
        yield held[1]
