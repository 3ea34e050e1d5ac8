"""The uuids a Claude Code transcript's compactions preserve, each with the first line derive can
read its entry from (issue 11 item 1).

A ``compact_boundary`` names the entries it keeps (``compactMetadata.preservedMessages.uuids``,
spec agent-formats §1.6 "Compaction"); resume sends them after the compact summary (§1.7 C).
Nothing limits how many a log writes, so derive no longer holds a set of them all: ``Preserved``
maps each distinct preserved uuid to the first wanted line (on the chain or reattached) whose
entry carries it, in a dict up to ``held.HELD_AT`` uuids or ``held.HELD_BYTES`` of their text
(a uuid is as long as a log makes it) and past them as rows of the derivation's spill file
(store/spill.py; keyed by the exact uuid, so a look-up is one B-tree search and nothing is
sorted or held in memory). ``missing_reason`` bounds what derive says of
the uuids not in the file: the first ``FIRST_SEEN`` each named once, then one note that there
were more (``core/first_seen.py``; docs/format.md, "Memory").
"""

from __future__ import annotations

from collections.abc import Iterable

from sesstool.core.first_seen import FIRST_SEEN, FirstSeen, said_once
from sesstool.core.humanize import chosen
from sesstool.dialects.claude import held
from sesstool.dialects.claude.compactions import Compaction
from sesstool.dialects.claude.held import Store
from sesstool.store.spill import SpillFile, text_key

NOT_SEEN = -1  # a preserved uuid no wanted line has carried (yet)
MORE_MISSING = f"compactions preserved more uuids that are not in the file (the first {FIRST_SEEN} shown)"


class Preserved:
    """The distinct uuids ``compactions`` preserve -> the first line ``note``d for each: a dict
    up to ``held.HELD_AT`` uuids and ``held.HELD_BYTES`` of them (read when used: the tests
    lower them), then a table in ``store()`` (the derivation's spill file, shared with its
    index)."""

    def __init__(self, compactions: Iterable[Compaction], store: Store) -> None:
        self._store = store
        self._held: dict[str, int] = {}
        self._bytes = 0  # the length of the uuids held: a log's uuid can be as long as its line
        self._file: SpillFile | None = None
        self._name = ""
        for compaction in compactions:  # one compaction's uuids at a time (its line's worth)
            self._add(compaction.preserved)

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def _add(self, uuids: tuple[str, ...]) -> None:
        if self._file is not None:
            rows = ((text_key(uuid), NOT_SEEN) for uuid in uuids)
            self._file.executemany(f"INSERT OR IGNORE INTO {self._name} VALUES (?, ?)", rows)
            return
        for uuid in uuids:
            if uuid not in self._held:
                self._held[uuid] = NOT_SEEN
                self._bytes += len(uuid)
        if len(self._held) > held.HELD_AT or self._bytes > held.HELD_BYTES:
            self._move(self._store())

    def _move(self, file: SpillFile) -> None:
        self._file = file
        self._name = file.table("key BLOB PRIMARY KEY, line INTEGER NOT NULL", "WITHOUT ROWID")
        rows = ((text_key(uuid), line) for uuid, line in self._held.items())
        file.executemany(f"INSERT INTO {self._name} VALUES (?, ?)", rows)
        self._held = {}

    def __bool__(self) -> bool:
        return self._file is not None or bool(self._held)

    def __contains__(self, uuid: object) -> bool:
        """Whether a compaction preserves ``uuid`` (in the file or not)."""
        if not isinstance(uuid, str):
            return False
        if self._file is None:
            return uuid in self._held
        found = self._file.execute(f"SELECT 1 FROM {self._name} WHERE key = ?", (text_key(uuid),))
        return found.fetchone() is not None

    def note(self, uuid: object, line: int) -> None:
        """An entry with ``uuid`` is at ``line``: kept for a preserved uuid when it is the first
        such line (lines may come in any order: the chain, then the reattached ones)."""
        if not isinstance(uuid, str):
            return
        if self._file is None:
            first = self._held.get(uuid)
            if first is not None and (first == NOT_SEEN or line < first):
                self._held[uuid] = line
            return
        self._file.execute(
            f"UPDATE {self._name} SET line = ? WHERE key = ? AND (line = ? OR line > ?)",
            (line, text_key(uuid), NOT_SEEN, line),
        )

    def line(self, uuid: str) -> int | None:
        """The first line noted for ``uuid``, or None (not preserved, or on no wanted line)."""
        if self._file is None:
            found = self._held.get(uuid, NOT_SEEN)
        else:
            cursor = self._file.execute(f"SELECT line FROM {self._name} WHERE key = ?", (text_key(uuid),))
            row = cursor.fetchone()
            found = NOT_SEEN if row is None else int(row[0])
        return None if found == NOT_SEEN else found


def missing_reason(seen: FirstSeen[None], uuid: str) -> str | None:
    """The best-effort reason derive gives for a preserved ``uuid`` not in the file: its own for
    the first ``FIRST_SEEN`` distinct ones (``seen``: those of one pass), then ``MORE_MISSING``;
    None for one already named."""
    return said_once(
        seen, uuid, f"compaction preserved {chosen(uuid)}, which is not in the file", MORE_MISSING
    )
