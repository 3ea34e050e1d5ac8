"""The output positions the v1 → v2 step holds while a chunk attempt is undecided (spec §1.3
"v1 → v2": where an unclaimed attempt's ``assistant/attempt`` stands; §13.A: a migration streams).

An attempt nobody has claimed yet holds every later event of its step: whether it becomes a
message's stream or an ``assistant/attempt`` at its position is known only when its step
closes. ``SlotQueue`` keeps that queue in memory up to ``HELD_SLOTS`` slots and ``HELD_BYTES``
bytes, then moves what is behind the blocking slot, in order, to numbered rows of the run's
spill (``core.upgrade.UpgradeSpill.rows``, injected by the engine: issue 11 item 1), and reads
them back in order, a page at a time, when the queue drains. An attempt's placeholder is never
copied: a spilled row names it, and the slot itself (``attempt.slot``, which ``take`` and
``flush`` compare by identity) waits in ``_placeholders`` — only while its attempt is pending:
once the attempt is decided (``changed``), the row becomes what the slot resolves to (nothing,
or its ``assistant/attempt`` event), so nothing held grows with the attempts behind the block.
Without a spill the queue is a plain ``deque``: the same slots, in the same order.
"""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from sesstool.core.upgrade import NumberedRows

HELD_SLOTS = 1024  # slots in memory behind the blocking one; past them the rest spills
HELD_BYTES = 1 << 20  # their bytes (a source line's, else its event pickled); past them too
_SLOT_COST = 128  # what a slot object costs beyond its event's bytes


class Slot:
    """A pending output position: a source event (``old`` = its seq), a generated event
    (``old`` None, ``origin`` = the source position it stands at) or an attempt placeholder
    (``attempt``: v2's ``_Attempt``; no event). ``n``: its place in the queue."""

    __slots__ = ("attempt", "event", "n", "old", "origin", "raw", "size", "touched")

    def __init__(
        self,
        event: dict[str, Any] | None,
        origin: int,
        old: int | None = None,
        raw: bytes | None = None,
        touched: bool = False,
        attempt: Any = None,
    ) -> None:
        self.event = event
        self.origin = origin
        self.old = old
        self.raw = raw
        self.touched = touched
        self.attempt = attempt
        self.n = -1
        self.size = -1  # bytes counted against HELD_BYTES; -1: not measured yet


# What a placeholder stands for now: itself (its attempt is undecided), None (nothing: it was
# superseded or its attempt claimed) or the slot of the event it became.
Resolve = Callable[[Slot], "Slot | None"]


class SlotQueue:
    """First in, first out: ``append``, ``last``, ``first``, ``released``; ``hold`` when the first
    slot blocks; ``changed`` when a placeholder's attempt was decided. ``rows``: makes the spill's
    rows at the first move (None: all in memory)."""

    __slots__ = (
        "_bytes",
        "_head",
        "_last",
        "_make",
        "_next",
        "_placeholders",
        "_read",
        "_resolve",
        "_rows",
        "_spilled",
        "_tail",
        "_unmeasured",
    )

    def __init__(self, resolve: Resolve, rows: Callable[[], NumberedRows] | None = None) -> None:
        self._resolve = resolve
        self._make = rows
        self._rows: NumberedRows | None = None
        self._head: deque[Slot] = deque()  # the front, in memory
        self._spilled = 0  # rows behind the front, on disk
        self._tail: deque[Slot] = deque()  # appended after the rows (empty when none are)
        self._read = -1  # the last row read back
        self._placeholders: dict[int, Slot] = {}  # spilled row → the placeholder it names
        self._next = 0
        self._last: Slot | None = None
        self._bytes = 0
        self._unmeasured: list[Slot] = []

    def __bool__(self) -> bool:
        return bool(self._head) or self._spilled > 0 or bool(self._tail)

    def __len__(self) -> int:
        return len(self._head) + self._spilled + len(self._tail)

    def last(self) -> Slot | None:
        """The slot appended last while any is queued (None when the queue is empty)."""
        return self._last

    def append(self, slot: Slot) -> None:
        slot.n = self._next
        self._next += 1
        self._last = slot
        if self._make is None:
            self._head.append(slot)
            return
        raw = slot.raw
        if raw is not None:
            slot.size = len(raw) + _SLOT_COST
            self._bytes += slot.size
        elif slot.event is None:
            slot.size = _SLOT_COST
            self._bytes += _SLOT_COST
        else:
            self._unmeasured.append(slot)  # measured by ``hold``, if it is still held then
        if self._spilled:
            self._tail.append(slot)
        else:
            self._head.append(slot)
        if len(self._head) + len(self._tail) > HELD_SLOTS:
            self._move_out()

    def first(self) -> Slot:
        if not self._head:
            self._read_back()
        return self._head[0]

    def released(self) -> Iterator[Slot]:
        """From the front, in order, each slot taken off the queue as it is answered: what it
        stands for (a placeholder ``resolve``d: nothing is answered for one that stands for
        nothing), until a placeholder that still stands for itself blocks (``hold``) or none is
        left. Walk it to its end."""
        resolve = self._resolve
        while True:
            head = self._head
            if not head:
                if not self._spilled and not self._tail:
                    self._last = None
                    self._unmeasured.clear()  # all released: none is left to measure
                    return
                self._read_back()
                continue
            slot = head[0]
            now: Slot | None = slot
            if slot.attempt is not None:
                now = resolve(slot)
                if now is slot:
                    self.hold()
                    return
            head.popleft()
            if slot.size > 0:
                self._bytes -= slot.size
            slot.size = 0  # no longer held: never counted again
            if now is not None:
                yield now

    def hold(self) -> None:
        """The first slot blocks: what is behind it waits, in memory up to the limits."""
        if self._make is None:
            return
        for slot in self._unmeasured:
            if slot.size == -1:
                slot.size = _SLOT_COST + _pickled_size(slot.event)
                self._bytes += slot.size
        self._unmeasured.clear()
        if self._bytes > HELD_BYTES or len(self._head) + len(self._tail) > HELD_SLOTS:
            self._move_out()

    def changed(self, slot: Slot) -> None:
        """``slot``'s attempt was decided, or superseded by a later slot: a spilled row naming
        it becomes what it resolves to."""
        if self._placeholders.pop(slot.n, None) is None:
            return
        assert self._rows is not None
        now = self._resolve(slot)
        if now is None:
            self._rows.drop(slot.n)
            self._spilled -= 1
            if not self._spilled:  # the tail follows the front directly
                self._head.extend(self._tail)
                self._tail = deque()
        else:
            self._put(slot.n, now)

    # -- the spill

    def _move_out(self) -> None:
        """Everything in memory behind the first slot, in order, to the rows."""
        if self._spilled:
            moving = self._tail
        else:  # the rows start again behind the first slot (those read back are gone)
            first = self._head.popleft()
            moving, self._head = self._head, deque([first])
            self._read = first.n
        if not moving:
            return
        if self._rows is None:
            assert self._make is not None
            self._rows = self._make()
        for slot in moving:
            if slot.size >= 0:
                self._bytes -= slot.size
            slot.size = 0
            now = self._resolve(slot) if slot.attempt is not None else slot
            if now is None:
                continue  # superseded or claimed: flush would pass it by
            self._put(slot.n, now)
            self._spilled += 1
        self._tail = deque()

    def _put(self, n: int, slot: Slot) -> None:
        assert self._rows is not None
        if slot.attempt is not None:  # undecided: the row names it, the slot stays itself
            self._placeholders[n] = slot
            self._rows.put(n, None)
        else:
            self._rows.put(n, (slot.event, slot.origin, slot.old, slot.raw, slot.touched))

    def _read_back(self) -> None:
        """The next page of rows to the front; the tail follows once none is left."""
        if self._spilled:
            assert self._rows is not None
            page = self._rows.after(self._read)
            assert page, "a spilled row was lost"
            for n, value in page:
                self._read = n
                self._spilled -= 1
                if value is None:
                    slot = self._placeholders.pop(n)
                    slot.size = _SLOT_COST
                else:
                    slot = Slot(*value)
                    slot.n = n
                    slot.size = (len(slot.raw) if slot.raw is not None else 0) + _SLOT_COST
                self._bytes += slot.size
                self._head.append(slot)
        if not self._spilled and self._tail:
            self._head.extend(self._tail)
            self._tail = deque()


def _pickled_size(event: Any) -> int:
    """The bytes an event stands for (as the spill would store it); one nested past Python's
    recursion limit counts as too many to hold."""
    try:
        return len(pickle.dumps(event, pickle.HIGHEST_PROTOCOL))
    except RecursionError:
        return HELD_BYTES + 1
