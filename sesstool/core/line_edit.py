"""One edit of a committed line, as an opt-in repair records it in its manifest
(``repair --relink``; spec agent-formats §2.2: "record the old and new values")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LineEdit:
    line: int  # 1-based line number in the source
    offset: int  # plaintext offset of the line in the source
    uuid: str | None  # the id of the entry the line holds
    field: str  # the field whose value changed (``parentUuid``)
    old: Any
    new: Any
    reason: str
    rule: str  # the finding the edit answers: the output must have none of it left
