"""A rollout's unfinished turns, in the order they started (issue 11 item 1, third round).

Per ``event_msg`` ``task_started`` not yet ended the scanner keeps an ``OpenTurn`` (its turn id,
root turn id, start time and where its line is: what a closer, ``inspect`` and the timeline show
of it). A hostile rollout of many task_started lines never ended holds one per line: past
``SPILL_AT`` turns, or ``SPILL_BYTES`` of their ids, the records move to a table of a spill file
(store/spill.py, opened and imported only then), keyed by the turn id's exact bytes (no turn id
is a key of its own), numbered in the order the turns started, so that memory no longer grows
with them. Python's dict semantics are kept exactly (agent-formats §3, Codex's own
``task_started`` / ``task_complete`` / ``turn_aborted`` pairing as the scanner reads it): a turn
id started again keeps its place and takes the later record; an end removes its turn when it is
open, else the turn started last (``dict.popitem``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

import orjson

from sesstool.core.sequences import ItemsEqual
from sesstool.dialects.codex.model import OpenTurn

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

SPILL_AT = 1 << 14  # unfinished turns held in memory; past them the records move to a spill file
SPILL_BYTES = 8 << 20  # ... or past this much text (turn ids, root turn ids) in them
_SLICE = 1024  # records read back per statement


def _size(turn: OpenTurn) -> int:
    return 64 + sum(len(x) for x in (turn.turn_id, turn.root_turn_id) if x is not None)


def _key(turn_id: str | None) -> bytes:
    """The turn id's exact bytes behind a mark, so that no turn id (None) is a key of its own."""
    return b"-" if turn_id is None else b"=" + turn_id.encode("utf-8", "surrogatepass")


def _row(turn: OpenTurn) -> bytes:
    return orjson.dumps((turn.turn_id, turn.root_turn_id, turn.started_at, turn.line, turn.offset))


def _turn(row: bytes) -> OpenTurn:
    turn_id, root, started_at, line, offset = orjson.loads(row)
    return OpenTurn(turn_id, root, started_at, line, offset)


class OpenTurns:
    """turn id -> its ``OpenTurn``, in the order the turns started (dict semantics)."""

    def __init__(self) -> None:
        self._held: dict[str | None, OpenTurn] = {}
        self._bytes = 0
        self._file: SpillFile | None = None
        self._table = ""
        self._next = 0  # the number the next spilled turn takes
        self._count = 0

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def __len__(self) -> int:
        return self._count if self._file is not None else len(self._held)

    def start(self, turn: OpenTurn) -> None:
        """``turns[turn.turn_id] = turn``."""
        if self._file is None:
            old = self._held.get(turn.turn_id)
            if old is not None:
                self._bytes -= _size(old)
            self._held[turn.turn_id] = turn
            self._bytes += _size(turn)
            if len(self._held) > SPILL_AT or self._bytes > SPILL_BYTES:
                self._move()
            return
        key, row = _key(turn.turn_id), _row(turn)
        cursor = self._file.execute(
            f"INSERT OR IGNORE INTO {self._table} VALUES (?, ?, ?)", (self._next, key, row)
        )
        if cursor.rowcount:
            self._next += 1
            self._count += 1
        else:  # started again: keeps its place, takes the later record
            self._file.execute(f"UPDATE {self._table} SET row = ? WHERE id = ?", (row, key))

    def end(self, turn_id: str | None) -> None:
        """``del turns[turn_id]`` when it is open, else ``turns.popitem()`` when any is."""
        if self._file is None:
            held = self._held
            if turn_id in held:
                self._bytes -= _size(held.pop(turn_id))
            elif held:
                self._bytes -= _size(held.popitem()[1])
            return
        cursor = self._file.execute(f"DELETE FROM {self._table} WHERE id = ?", (_key(turn_id),))
        if not cursor.rowcount:
            cursor = self._file.execute(
                f"DELETE FROM {self._table} WHERE n = (SELECT max(n) FROM {self._table})"
            )
        self._count -= cursor.rowcount

    def _open(self, spill: SpillFile) -> None:
        self._file = spill
        self._table = spill.table("n INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, row BLOB NOT NULL")

    def _move(self) -> None:
        from sesstool.store.spill import SpillFile  # sqlite3: only a rollout of many open turns needs it

        self._open(SpillFile("a rollout's unfinished turns"))
        assert self._file is not None
        rows = ((n, _key(tid), _row(turn)) for n, (tid, turn) in enumerate(self._held.items()))
        self._file.executemany(f"INSERT INTO {self._table} VALUES (?, ?, ?)", rows)
        self._next = self._count = len(self._held)
        self._held, self._bytes = {}, 0

    def copy(self) -> OpenTurns:
        twin = OpenTurns()
        if self._file is None:
            twin._held, twin._bytes = dict(self._held), self._bytes
            return twin
        twin._open(self._file)
        self._file.execute(f"INSERT INTO {twin._table} SELECT * FROM {self._table}")
        twin._next, twin._count = self._next, self._count
        return twin

    def turns(self) -> Iterator[OpenTurn]:
        """The open turns in the order they started (read back a slice at a time if spilled)."""
        if self._file is None:
            yield from list(self._held.values())
            return
        last = -1
        while True:
            rows = self._file.execute(
                f"SELECT n, row FROM {self._table} WHERE n > ? ORDER BY n LIMIT {_SLICE}", (last,)
            ).fetchall()
            if not rows:
                return
            for _, row in rows:
                yield _turn(row)
            last = rows[-1][0]

    def last(self) -> OpenTurn | None:
        """The turn started last (None when none is open)."""
        if self._file is None:
            return next(reversed(self._held.values()), None)
        row = self._file.execute(f"SELECT row FROM {self._table} ORDER BY n DESC LIMIT 1").fetchone()
        return _turn(row[0]) if row is not None else None

    def view(self) -> tuple[OpenTurn, ...] | SpilledTurns:
        """The open turns: a tuple while they are in memory, else a sequence that reads them back
        from the spill file whenever it is walked."""
        if self._file is None:
            return tuple(self._held.values())
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
        if isinstance(i, slice):
            wanted = range(len(self))[i]
            return tuple(x for n, x in enumerate(self) if n in wanted)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("open turn index out of range")
        if i == len(self) - 1:
            last = self._turns.last()
            assert last is not None
            return last
        for n, x in enumerate(self):
            if n == i:
                return x
        raise IndexError("open turn index out of range")  # pragma: no cover - len says so

    def __repr__(self) -> str:
        return f"SpilledTurns({len(self)} turns)"
