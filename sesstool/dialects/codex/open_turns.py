"""A rollout's unfinished turns, in the order they started (issue 11 item 1, third round).

Per ``event_msg`` ``task_started`` not yet ended the scanner keeps an ``OpenTurn`` (its turn id,
root turn id, start time and where its line is: what a closer, ``inspect`` and the timeline show
of it). A hostile rollout of many task_started lines never ended holds one per line: past
``SPILL_AT`` turns, or ``SPILL_BYTES`` of their ids, the turns move to an ordered table of a
spill file (``store.spilling.SpillingRows``: store/spill.py is opened and imported only
then), keyed by the turn id (no turn id is a key of its own), in the order the turns started,
so that memory no longer grows with them. Python's dict semantics are kept exactly
(agent-formats §3: ``task_started`` and ``task_complete`` / ``turn_aborted`` paired as the
scanner pairs them): a turn id started again keeps its place and takes the later record; an
end removes its turn when it is open, else the turn started last (``dict.popitem``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, overload

from sesstool.core.sequences import ItemsEqual
from sesstool.dialects.codex.model import OpenTurn
from sesstool.store.spilling import SpillingRows

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

SPILL_AT = 1 << 14  # unfinished turns held in memory; past them the turns move to a spill file
SPILL_BYTES = 8 << 20  # ... or past this much text (turn ids, root turn ids) in them


def _size(turn: OpenTurn) -> int:
    """A turn's bytes but its turn id's: that is its key, which ``SpillingRows`` counts itself."""
    return 64 + (len(turn.root_turn_id) if turn.root_turn_id is not None else 0)


def _limits() -> tuple[int, int]:
    return SPILL_AT, SPILL_BYTES  # read when used (the tests lower them)


def _open_file() -> SpillFile:
    from sesstool.store.spill import SpillFile  # sqlite3: only many open turns

    return SpillFile("a rollout's unfinished turns")


def _key(turn_id: str | None) -> str:
    """The table's key: the turn id behind a mark, so that no turn id (None) is a key of its own."""
    return "-" if turn_id is None else "=" + turn_id


class OpenTurns:
    """turn id -> its ``OpenTurn``, in the order the turns started (dict semantics), on
    ``store.spilling.SpillingRows``."""

    def __init__(self) -> None:
        self._rows = SpillingRows(_open_file, _limits, _size)

    @property
    def spilled(self) -> bool:
        return self._rows.spilled

    def __len__(self) -> int:
        return len(self._rows)

    def start(self, turn: OpenTurn) -> None:
        """``turns[turn.turn_id] = turn``."""
        self._rows[_key(turn.turn_id)] = turn

    def end(self, turn_id: str | None) -> None:
        """``del turns[turn_id]`` when it is open, else ``turns.popitem()`` when any is."""
        rows = self._rows
        if rows.pop(_key(turn_id)) is None and rows:
            rows.popitem()

    def copy(self) -> OpenTurns:
        """An independent copy (a spilled table copied inside its spill file)."""
        twin = OpenTurns()
        twin._rows = self._rows.copy()
        return twin

    def turns(self) -> Iterator[OpenTurn]:
        """The open turns in the order they started (read back a slice at a time if spilled)."""
        return self._rows.values()

    def last(self) -> OpenTurn | None:
        """The turn started last (None when none is open)."""
        found = self._rows.last()
        return found[1] if found is not None else None

    def view(self) -> tuple[OpenTurn, ...] | SpilledTurns:
        """The open turns: a tuple while they are in memory, else a sequence that reads them back
        from the spill file whenever it is walked."""
        if not self._rows.spilled:
            return tuple(self._rows.values())
        return SpilledTurns(self)


class SpilledTurns(ItemsEqual[OpenTurn]):
    """Unfinished turns in the spill file, read back whenever walked (never all held). Equal to
    any sequence of the same turns (a tuple of them, as the turns held in memory)."""

    def __init__(self, turns: OpenTurns) -> None:
        self._turns = turns.copy()  # frozen: the scanner's table goes on changing

    def __len__(self) -> int:
        return len(self._turns)

    def __iter__(self) -> Iterator[OpenTurn]:
        return self._turns.turns()

    @overload
    def __getitem__(self, i: int) -> OpenTurn: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[OpenTurn]: ...
    def __getitem__(self, i: int | slice) -> OpenTurn | Sequence[OpenTurn]:
        size = len(self)
        if isinstance(i, slice):
            wanted = range(size)[i]
            if not wanted:
                return ()
            low = min(wanted)
            window = tuple(islice(self, low, max(wanted) + 1))  # what the slice spans, read once
            return tuple(window[k - low] for k in wanted)
        k = i + size if i < 0 else i
        if not 0 <= k < size:
            raise IndexError("open turn index out of range")
        last = self._turns.last() if k == size - 1 else None  # the open state's turn: read alone
        return last if last is not None else next(islice(self, k, None))

    def __repr__(self) -> str:
        return f"SpilledTurns({len(self)} turns)"
