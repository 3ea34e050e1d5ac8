"""An external sort and a line store in a spill file (store/spill.py), for derive's read-back
(engine/derive_read.py) when replacements moved many records out of file order (issue 11
item 1, second round): neither the sort nor the lines waiting for their turn grow in memory.

``SpilledOrder`` takes integers (the wanted line offsets, in surface order) and hands them back
sorted, each with its position: SQLite's sorter on a table of (value, position) rows, which
works in its bounded page cache and merges sorted runs from its temporary files. The lines that
arrive before their turn are rows keyed by their position in the same file. Generic: nothing
here knows what an offset or a surface is. ``SpilledRows`` sorts keyed blobs the same way
(inspect's timeline merged with a session's subagent files, engine/timeline_merge.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sesstool.store.spill import SpillFile

BATCH = 4096  # rows fetched at a time from the sort


class SpilledOrder:
    """``sorted_pairs(values)`` once, then ``put``/``take`` lines by position; ``close`` at the end."""

    def __init__(self, purpose: str) -> None:
        self._file = SpillFile(purpose)
        self._lines = self._file.table("position INTEGER PRIMARY KEY, line BLOB NOT NULL")
        self._held = 0

    def sorted_pairs(self, values: Iterable[int]) -> Iterator[tuple[int, int]]:
        """(value, position) of ``values`` by value, then position (a stable sort's order)."""
        store = self._file
        table = store.table("value INTEGER NOT NULL, position INTEGER NOT NULL")
        store.executemany(f"INSERT INTO {table} VALUES (?, ?)", ((v, i) for i, v in enumerate(values)))
        cursor = store.execute(f"SELECT value, position FROM {table} ORDER BY value, position")
        while rows := store.fetch(cursor, BATCH):
            for value, position in rows:
                yield int(value), int(position)

    def __len__(self) -> int:
        """Lines put and not yet taken."""
        return self._held

    def put(self, position: int, line: bytes) -> None:
        self._file.execute(f"INSERT INTO {self._lines} VALUES (?, ?)", (position, line))
        self._held += 1

    def take(self, position: int) -> bytes | None:
        """The line put at ``position`` (once), or None."""
        if not self._held:
            return None
        row = self._file.execute(f"SELECT line FROM {self._lines} WHERE position = ?", (position,)).fetchone()
        if row is None:
            return None
        self._file.execute(f"DELETE FROM {self._lines} WHERE position = ?", (position,))
        self._held -= 1
        return bytes(row[0])

    def close(self) -> None:
        self._file.close()


class SpilledRows:
    """Rows (an integer key, a blob) handed back by key, then in the order they were added,
    from a table in a spill file keyed by (key, position): a merge of many sorted runs
    (inspect's timeline of a session's subagent files, engine/timeline_merge.py) that holds none
    of them and needs no sorter (the table's own B-tree is the order). A row may be added
    without its key and given one later (``settle``): the key of a run's first rows can be known
    only after them; such rows wait in a table of their own."""

    def __init__(self, purpose: str) -> None:
        self._file = SpillFile(purpose)
        self._rows = self._file.table(
            "key INTEGER NOT NULL, position INTEGER NOT NULL, row BLOB NOT NULL, PRIMARY KEY (key, position)",
            "WITHOUT ROWID",
        )
        self._waiting = self._file.table("position INTEGER PRIMARY KEY, row BLOB NOT NULL")
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, key: int | None, row: bytes) -> None:
        if key is None:
            self._file.execute(f"INSERT INTO {self._waiting} VALUES (?, ?)", (self._count, row))
        else:
            self._file.execute(f"INSERT INTO {self._rows} VALUES (?, ?, ?)", (key, self._count, row))
        self._count += 1

    def settle(self, key: int) -> None:
        """Give ``key`` to the rows added without one."""
        self._file.execute(f"INSERT INTO {self._rows} SELECT ?, position, row FROM {self._waiting}", (key,))
        self._file.execute(f"DELETE FROM {self._waiting}")

    def drop(self, since: int) -> None:
        """Forget the rows added from position ``since`` on."""
        self._file.execute(f"DELETE FROM {self._rows} WHERE position >= ?", (since,))
        self._file.execute(f"DELETE FROM {self._waiting} WHERE position >= ?", (since,))
        self._count = since

    def sorted(self, batch: int = 64) -> Iterator[tuple[int, bytes]]:
        """(key, row) by key, then position; the rows still waiting for a key are not in it."""
        store = self._file
        cursor = store.execute(f"SELECT key, row FROM {self._rows} ORDER BY key, position")
        while rows := store.fetch(cursor, batch):
            for key, row in rows:
                yield int(key), bytes(row)

    def close(self) -> None:
        self._file.close()
