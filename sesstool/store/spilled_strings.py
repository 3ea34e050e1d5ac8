"""A ``core.held_map.HeldMap``'s keys past ``HELD_AT``: a table of strings to strings in a private
spill file (``store.spill.SpillFile``: an unnamed SQLite database, its page cache bounded).
Keys and values are stored as UTF-8 with a lone surrogate (a JSON ``\\ud800``) kept as it is."""

from __future__ import annotations

from sesstool.store.paging import key_text, text_key
from sesstool.store.spill import SpillFile


class SpilledStrings:
    """``core.held_map.StringTable`` in its own spill file, or a table of ``spill`` (a run's:
    ``store.run_spill``)."""

    __slots__ = ("_size", "_spill", "_table")

    def __init__(self, purpose: str, spill: SpillFile | None = None) -> None:
        self._spill = spill if spill is not None else SpillFile(purpose)
        self._table = self._spill.table("key BLOB PRIMARY KEY, value BLOB NOT NULL", "WITHOUT ROWID")
        self._size = 0

    def get(self, key: str) -> str | None:
        row = self._spill.execute(
            f"SELECT value FROM {self._table} WHERE key = ?", (text_key(key),)
        ).fetchone()
        return None if row is None else key_text(row[0])

    def put(self, key: str, value: str) -> None:
        k = text_key(key)
        before = self._spill.execute(f"SELECT 1 FROM {self._table} WHERE key = ?", (k,)).fetchone()
        self._spill.execute(f"INSERT OR REPLACE INTO {self._table} VALUES (?, ?)", (k, text_key(value)))
        self._size += before is None

    def put_many(self, items: dict[str, str]) -> None:
        rows = ((text_key(k), text_key(v)) for k, v in items.items())
        self._spill.executemany(f"INSERT OR REPLACE INTO {self._table} VALUES (?, ?)", rows)
        self._size = self._spill.execute(f"SELECT count(*) FROM {self._table}").fetchone()[0]

    def clear(self) -> None:
        self._spill.execute(f"DELETE FROM {self._table}")
        self._size = 0

    def __len__(self) -> int:
        return int(self._size)
