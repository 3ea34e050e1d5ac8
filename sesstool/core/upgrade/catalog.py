"""The v3 → v4 step's completion of a parent's ``subagent/catalog`` (spec §13.A item 5): the
evidence of each subagent child (``ChildFact``), the data of the entry appended for a child the
log does not catalogue yet (``catalog_fact``), and what the step keeps of the entries the log
already has after its inherited cut (``Catalogued``) to check them against the children.

What is kept does not grow with the log's entries (issue 11 item 1: the step kept every entry's
payload to the end): the payloads of the given children only, the ids named (a
``core.held_map.HeldMap``: 4,096 in memory, then the run's spill) and the first reason an entry
refuses. The entries are judged in order as before: the first that is malformed or names an id
a second time refuses, once the last event has come (an inherited cut forgets what came before
it: those entries belong to the parent session).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sesstool.core.header import is_safe_nonneg
from sesstool.core.held_map import HeldMap
from sesstool.core.upgrade import Rec, UpgradeRefused, UpgradeSpill

Refuse = Callable[[str], UpgradeRefused]  # a refusal naming the event being converted

_MODES = frozenset({"continuable", "one-shot", "unknown"})
MALFORMED = "subagent/catalog requires a supported versioned catalog fact"


@dataclass(frozen=True, slots=True)
class ChildFact:
    """What the catalogue needs of one subagent child session (§13.A item 5)."""

    child_id: str
    created_at: int
    descriptors: tuple[Any, ...] = ()  # ``data`` of the child's own ``subagent/descriptor`` events


def catalog_fact(child: ChildFact, refuse: Refuse) -> dict[str, Any]:
    """The ``subagent/catalog`` data for a child the parent does not catalogue yet."""
    descriptor = child.descriptors[0] if len(child.descriptors) == 1 else None
    version = descriptor.get("version") if type(descriptor) is dict else None
    if type(version) is not int or version not in (1, 2, 3):
        return {
            "version": 1,
            "childId": child.child_id,
            "childCreatedAt": child.created_at,
            "mode": "unknown",
        }
    assert type(descriptor) is dict
    if not isinstance(descriptor.get("provider"), str):
        raise refuse(f"Session {child.child_id} has an invalid subagent descriptor provider")
    mode = "continuable" if version == 1 else descriptor.get("mode")
    if mode not in ("continuable", "one-shot"):
        raise refuse(f"Session {child.child_id} has an invalid subagent descriptor mode")
    fact: dict[str, Any] = {
        "version": 0,
        "childId": child.child_id,
        "childCreatedAt": child.created_at,
        "mode": mode,
    }
    if "label" in descriptor:
        fact["label"] = descriptor["label"]
    if (mode == "continuable" and not isinstance(fact.get("label"), str)) or (
        "label" in fact and not isinstance(fact["label"], str)
    ):
        raise refuse(f"Session {child.child_id} has a subagent descriptor without a usable label")
    return fact


def is_catalog_fact(data: Any) -> bool:
    """Whether an existing ``subagent/catalog`` payload is one the completion can judge."""
    return not (
        type(data) is not dict
        or data.get("version") not in (0, 1)
        or type(data.get("version")) is not int
        or not isinstance(data.get("childId"), str)
        or data.get("mode") not in _MODES
        or (data.get("version") == 0 and data.get("mode") == "unknown")
        or (data.get("mode") == "continuable" and not isinstance(data.get("label"), str))
        or ("label" in data and not isinstance(data["label"], str))
        or not is_safe_nonneg(data.get("childCreatedAt"))
    )


class Catalogued:
    """The log's own catalogue entries after its inherited cut, as far as the completion needs
    them: ``add`` each payload in log order, ``cut`` at an inherited ``session/end-seed``."""

    __slots__ = ("_children", "_ids", "_named", "kept", "refusal")

    def __init__(self, children: tuple[ChildFact, ...], spill: UpgradeSpill | None) -> None:
        self._children = children  # in the order their entries are appended
        self._ids = frozenset(c.child_id for c in children)
        self._named = HeldMap("the child ids a session's catalogue names", spill.strings if spill else None)
        self.kept: dict[str, dict[str, Any]] = {}  # the payloads naming a given child
        self.refusal: str | None = None  # why the first entry that refuses does

    def cut(self) -> None:
        """An inherited cut: the entries before it belong to the parent session."""
        self._named.clear()
        self.kept.clear()
        self.refusal = None

    def add(self, data: Any) -> None:
        if self.refusal is not None:
            return
        if not is_catalog_fact(data):
            self.refusal = MALFORMED
            return
        child_id = data["childId"]
        if child_id in self._named:
            self.refusal = f"duplicate catalog child {child_id}"
            return
        self._named.put(child_id, "")
        if child_id in self._ids:
            self.kept[child_id] = data

    def complete(self, next_seq: int, time: Any, refuse: Refuse) -> Iterator[Rec]:
        """After the last event (§13.A item 5): one ``subagent/catalog`` per child the log does
        not catalogue yet, or the refusal of the first entry that refuses."""
        if self.refusal is not None:
            raise refuse(self.refusal)
        existing = dict(self.kept)
        appended: list[dict[str, Any]] = []
        for child in self._children:
            fact = catalog_fact(child, refuse)
            known = existing.get(child.child_id)
            if known is not None:
                same_mode = fact["version"] == 1 or all(
                    known.get(k) == fact.get(k) for k in ("mode", "label")
                )
                if known.get("childCreatedAt") != child.created_at or not same_mode:
                    raise refuse(f"Session {child.child_id} conflicts with its parent catalog")
                continue
            existing[child.child_id] = fact
            appended.append({"type": "subagent/catalog", "seq": next_seq, "time": time, "data": fact})
            next_seq += 1
        if appended:
            yield Rec(appended, None)
