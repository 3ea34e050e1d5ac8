"""One streamed reply of any number of members, held bounded (issue 11 item 1).

The API streams a reply into many assistant entries that share one ``message.id``: one entry
per content block (spec agent-formats §1.5), N parallel calls N entries, some of them on side
branches (§1.6 "Parallel tool calls", §1.9). Resume sends them as ONE assistant message of all
their blocks in file order (derive.py). A hostile transcript can make that one reply as long as
the file, so nothing here holds its members: derive's index hands them over one at a time
(``derive.Index.members``: a walk of the index's lines, each decoded and its id compared in
full as it is reached; a spilled index read back ``PAGE`` lines a statement, keyed on the line),
and ``reply_content`` walks them once — marking each member's line emitted, noting each block,
appending each call's id to the pending calls — and keeps the blocks in a ``held.HeldList``,
moved to the derivation's spill file past ``held.HELD_AT`` blocks, as a span of user entries
keeps its own (``user_span.py``). Below the threshold the content is the tuple it always was;
past it, it is a ``core.closer_list.Closers`` reading the blocks back each time it is walked:
the writers, ``--redact`` and ``report`` stream it as they stream a span's user message and a
run of interrupted results (``interrupted.py``). The bytes written are the same either way.

Why the blocks, and not the members read again: a walk of the content then never goes back to
the log (a zstd log would be decoded again from its first frame at each walk, and ``report``
walks the messages it keeps after the derivation has released the log), and the members are
decoded once a pass, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.dialects.claude.held import HeldList, Store
from sesstool.store.spill import IntArray, SpillFile
from sesstool.store.spilling_list import paged

Json = dict[str, Any]
# the reply's members as (line, entry), in file order, decoded as they are walked
Members = Callable[[], Iterator[tuple[int, Json]]]
PAGE = 1024  # lines of a spilled index read back per statement


def reply_content(
    members: Members,
    blocks_of: Callable[[Json], list[Json]],
    emitted: IntArray | None,
    note: Callable[[Json], None],
    pending: HeldList[str],
    store: Store,
) -> tuple[Json, ...] | Closers[Json]:
    """The content of the reply whose members ``members()`` walks: its blocks (``blocks_of`` a
    member), in file order. One walk marks each member's line in ``emitted`` (None: the reply
    has no id, nothing to mark), hands each block to ``note`` and appends the id of each
    ``tool_use`` to ``pending``, and keeps the blocks in a ``HeldList`` of ``store``:
    a tuple of them up to ``held.HELD_AT`` blocks, else read back from the spill file as walked."""
    blocks: HeldList[Json] = HeldList(store)
    for line, member in members():
        if emitted is not None:
            emitted[line >> 3] |= 1 << (line & 7)
        for block in blocks_of(member):
            note(block)
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                pending.append(block["id"])
            blocks.append(block)
    return Closers.of(blocks) if blocks.spilled else tuple(blocks)


def or_itself(found: Members | None, line: int, entry: Json) -> Members:
    """``found``'s members, or the entry itself when it finds none (or there is no ``found``)."""

    def walk() -> Iterator[tuple[int, Json]]:
        empty = True
        for member in found() if found is not None else ():
            empty = False
            yield member
        if empty:
            yield line, entry

    return walk


def paged_lines(store: SpillFile, table: str, kind: int, key: bytes) -> Iterator[int]:
    """The lines of ``table``'s rows (kind, key, line) of ``kind`` and ``key``, in order: read
    back ``PAGE`` at a time past the last line (``store.spilling_list.paged``: no cursor is left
    open while the caller runs others on the same file)."""

    def page(last: int) -> list[Any]:
        return store.execute(
            f"SELECT line FROM {table} WHERE kind = ? AND key = ? AND line > ? ORDER BY line LIMIT ?",
            (kind, key, last, PAGE),
        ).fetchall()

    return (int(row[0]) for row in paged(page, -1, full=PAGE))
