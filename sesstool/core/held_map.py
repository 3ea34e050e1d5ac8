"""A map of strings to strings whose keys a log chooses (issue 11 item 1): a dict up to
``HELD_AT`` keys and ``HELD_BYTES`` of keys and values (a key is as long as the log chose it: a
count alone held 4,096 values of any length), then a table in a spill file, so that a log that
names a fresh key on every line (a credential value to redact, a legacy retry chain, a prefixed
message id) costs memory up to a fixed amount, never a few hundred bytes per line.

The core never touches files: the table past the threshold comes from the maker each map is
given (``HeldMap(purpose, spill)``: the engine passes one per run of the upgrade chain and per
redactor; ``store.spilled_strings.SpilledStrings`` implements it). Without one (the core used
alone) the map stays a dict. A structure that needs every key it was ever given
(the same secret → the same token, a chain → its first id, a source id → whether a generated id
collides with it) keeps them all, past the threshold on disk; ``clear`` empties it (a new turn's
retry chains).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

HELD_AT = 4096  # keys in memory; past them every key moves to the spill file ...
HELD_BYTES = 8 << 20  # ... or past this many characters of keys and values


class StringTable(Protocol):
    """Where a ``HeldMap``'s keys go past ``HELD_AT`` or ``HELD_BYTES`` (``store.spilled_strings``)."""

    def get(self, key: str) -> str | None: ...
    def put(self, key: str, value: str) -> None: ...
    def put_many(self, items: dict[str, str]) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...


# what makes the table past the limits (``purpose``: named if it cannot be made)
TableMaker = Callable[[str], StringTable]


class HeldMap:
    """``str`` → ``str``: ``get``, ``put``, ``__contains__``, ``__len__``, ``clear``."""

    __slots__ = ("_bytes", "_held", "_maker", "_purpose", "_table")

    def __init__(self, purpose: str, spill: TableMaker | None = None) -> None:
        """``spill``: what makes the table past the limits (None: a dict whatever its size)."""
        self._held: dict[str, str] = {}
        self._bytes = 0  # the characters of the keys and values held
        self._purpose = purpose
        self._maker = spill
        self._table: StringTable | None = None

    def get(self, key: str) -> str | None:
        return self._held.get(key) if self._table is None else self._table.get(key)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self._held) if self._table is None else len(self._table)

    def put(self, key: str, value: str) -> None:
        """Map ``key`` to ``value`` (replacing what it mapped to)."""
        if self._table is not None:
            self._table.put(key, value)
            return
        before = self._held.get(key)
        self._bytes += len(value) + (len(key) if before is None else -len(before))
        self._held[key] = value
        if (len(self._held) > HELD_AT or self._bytes > HELD_BYTES) and self._maker is not None:
            self._table = self._maker(self._purpose)
            self._table.put_many(self._held)
            self._held, self._bytes = {}, 0

    def clear(self) -> None:
        self._held.clear()
        self._bytes = 0
        if self._table is not None:
            self._table.clear()
