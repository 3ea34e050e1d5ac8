"""Re-point the broken ``parentUuid`` links of a Claude Code transcript: the opt-in edit of
``repair --relink`` (spec agent-formats §2.2: "re-linking a dangling parentUuid: record the old
and new values"; §4: any edit is an explicit opt-in recorded in a manifest).

The rule follows how the CLI builds its chain (§1.7; docs/format.md "Relink"): every entry it
writes names the entry it wrote before it (resume's own bridge, ``entry_graph.EntryGraph.bridge``,
goes by timestamps and usually lands there too). So an entry whose ``parentUuid`` names no
entry in the file is re-pointed to the nearest graph entry above it in file order — on the same
side of the sidechain line (a main-chain entry never into a sidechain) — or made a root
(``null``) when there is none. Only the ``parentUuid`` value changes, byte for byte in place
(``fork.top_level_key_value``); every other byte of the line is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sesstool.core.errors import UnsupportedError
from sesstool.core.jsonline import LineError, dumps, loads
from sesstool.core.line_edit import LineEdit
from sesstool.dialects.claude import rule_ids as CR
from sesstool.dialects.claude import vocabulary as vocab
from sesstool.dialects.claude.fork import top_level_key_value

RULE = CR.PARENT_MISSING
FIELD = "parentUuid"


class Relinker:
    """Fed every committed line in file order; re-points the lines named broken."""

    rule = RULE

    def __init__(self, broken: Iterable[int]) -> None:
        """``broken``: the line numbers of the entries whose parent is not in the file, ascending
        (walked once, beside the lines: never a set of them, issue 11 item 1)."""
        self._broken = iter(broken)
        self._next = next(self._broken, None)
        self.previous: dict[bool, tuple[str, int]] = {}  # by isSidechain: last graph entry (uuid, line)

    def _is_broken(self, lineno: int) -> bool:
        while self._next is not None and self._next < lineno:
            self._next = next(self._broken, None)
        return self._next == lineno

    def edit(self, line: bytes, lineno: int, offset: int) -> tuple[bytes, LineEdit | None]:
        entry = _entry(line)
        if entry is None:
            return line, None
        sidechain = entry.get("isSidechain") is True
        out, change = line, None
        if self._is_broken(lineno) and isinstance(entry.get(FIELD), str):
            out, change = self._relink(line, lineno, offset, entry, sidechain)
        if isinstance(entry.get("uuid"), str):
            self.previous[sidechain] = (entry["uuid"], lineno)
        return out, change

    def _relink(
        self, line: bytes, lineno: int, offset: int, entry: dict[str, Any], sidechain: bool
    ) -> tuple[bytes, LineEdit]:
        old: str = entry[FIELD]
        before = self.previous.get(sidechain)
        new = before[0] if before is not None else None
        old_text = dumps(old)[1:-1]
        at = top_level_key_value(line, FIELD.encode(), old_text)
        if at is None:
            raise UnsupportedError(
                f"cannot relink line {lineno}: its parentUuid is written with escapes or spacing "
                "this editor does not rewrite in place (nothing was written)"
            )
        start = at + len(FIELD) + 3  # past `"parentUuid":`
        out = line[:start] + dumps(new) + line[start + len(old_text) + 2 :]
        if before is not None:
            reason = (
                f"parentUuid names no entry in the file; re-pointed to the graph entry before it "
                f"in file order (line {before[1]}), as the CLI chains each entry to the one it "
                "wrote before"
            )
        else:
            reason = "parentUuid names no entry in the file and no graph entry comes before it: made a root"
        uuid = entry.get("uuid") if isinstance(entry.get("uuid"), str) else None
        return out, LineEdit(lineno, offset, uuid, FIELD, old, new, reason, RULE)


def _entry(line: bytes) -> dict[str, Any] | None:
    """The graph entry a line holds, else None (metadata, or a line that does not decode)."""
    try:
        value: Any = loads(line)
    except LineError:
        return None
    if isinstance(value, dict) and value.get("type") in vocab.CHAIN_TYPES:
        return value
    return None
