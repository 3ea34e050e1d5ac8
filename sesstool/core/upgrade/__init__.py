"""The upgrade chain v0→v1→v2→v3→v4 (spec §1.3): pure, streaming, one module per step.

A step turns a stream of ``Rec`` (a physical record's decoded events, with its original bytes
while it is untouched) at version N into one at N+1; it never writes files. Steps compose in
order; a missing edge or a refusal stops the chain with ``UpgradeRefused``.

What a run holds past a fixed amount (issue 11 item 1) goes to the ``UpgradeSpill`` the engine
gives the steps of that run (``Step.with_spill``): the core never touches files, and without a
spill (the core used alone) everything stays in memory.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from sesstool.core.held_map import StringTable


@dataclass(slots=True)
class Rec:
    """One physical record: a plain event (``events == [event]``) or a v0/v1 packed chunk row
    (its expanded ``assistant/chunk`` events). ``raw`` holds the record's original bytes (without
    the newline) for as long as no step changed it: unchanged records are copied byte for byte.
    A step that edits an event must set ``raw`` to None."""

    events: Sequence[dict[str, Any]]  # a packed row's events are built lazily (chunk_rows)
    raw: bytes | None


class UpgradeRefused(Exception):
    """A step refuses the session (§1.4 ``SessionFormatUnsupportedMigrationError``)."""

    def __init__(
        self, step: str, version: int, detail: str, seq: int | None = None, event_type: str | None = None
    ) -> None:
        where = ""
        if seq is not None:
            where = f" at seq {seq}" + (f" ({event_type})" if event_type else "")
        super().__init__(f"{step} refuses this format v{version} Session{where}: {detail}")
        self.step = step
        self.seq = seq
        self.event_type = event_type
        self.detail = detail


class NumberedRows(Protocol):
    """Values by number, read back in number order (``core.upgrade.slot_queue``: the events
    v1 → v2 holds behind an undecided attempt, §1.3)."""

    def put(self, n: int, value: Any) -> None:
        """Store ``value`` (JSON values, bytes, ints, None, in tuples) as row ``n`` (replacing it)."""
        ...

    def drop(self, n: int) -> None: ...

    def after(self, n: int) -> list[tuple[int, Any]]:
        """The next rows past ``n`` in number order, removed: a page of a bounded size (at
        least one row while any is left)."""
        ...


class SortedWords(Protocol):
    """An array of integers that only grows in value, on disk (``core.upgrade.remap``)."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> int: ...
    def __setitem__(self, i: int, value: int, /) -> None: ...
    def append(self, value: int, /) -> None: ...
    def bisect_left(self, value: int, /) -> int: ...


class UpgradeSpill(Protocol):
    """Where one run of the chain puts what outgrows memory (``store.run_spill.RunSpill``)."""

    def strings(self, purpose: str) -> StringTable:
        """A ``core.held_map.HeldMap``'s table (v0 → v1 retry chains, v2 → v3 message ids)."""
        ...

    def rows(self, purpose: str) -> NumberedRows:
        """Numbered rows (v1 → v2's held events)."""
        ...

    def sorted_words(self, purpose: str, items: Sequence[int]) -> SortedWords:
        """A growing array holding ``items`` first (``SeqRemap``'s change points, dropped runs)."""
        ...


class Step(Protocol):
    """One adjacent edge vN → vN+1."""

    name: str  # e.g. "session-format-v0-to-v1"
    source: int
    target: int

    def header(self, header: dict[str, Any]) -> dict[str, Any]:
        """The physical header at the target version (a new dict)."""
        ...

    def run(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        """Upgrade the events. ``header`` is the SOURCE header of this step."""
        ...

    def with_spill(self, spill: UpgradeSpill | None) -> Self:
        """This step, its runs putting what outgrows memory in ``spill``."""
        ...


class StepShell:
    """What every ``Step`` shares: its name and edge (``class X(StepShell, name=..., source=N)``:
    the target is N+1), the check of its source header (``check``, before both ``header`` and
    ``run``), and a header that changes by its version alone unless ``edit_header`` says more.
    A step writes ``events``; its run's state takes ``self.spill`` (``with_spill``)."""

    name: str
    source: int
    target: int
    spill: UpgradeSpill | None = None  # the steps of the dialects' chains: none (in memory)

    def __init_subclass__(cls, *, name: str, source: int, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name, cls.source, cls.target = name, source, source + 1

    def check(self, header: dict[str, Any]) -> None:
        """Refuse a source header this step cannot read (nothing by default)."""

    def edit_header(self, header: dict[str, Any]) -> dict[str, Any]:
        out = dict(header)
        out["version"] = self.target
        return out

    def header(self, header: dict[str, Any]) -> dict[str, Any]:
        self.check(header)
        return self.edit_header(header)

    def run(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        self.check(header)
        return self.events(header, recs)

    def events(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        raise NotImplementedError

    def with_spill(self, spill: UpgradeSpill | None) -> Self:
        """A copy of this step whose runs spill to ``spill`` (one per run: the engine's)."""
        made = copy.copy(self)
        made.spill = spill
        return made


def each_event(recs: Iterator[Rec]) -> Iterator[tuple[dict[str, Any], bytes | None, bool]]:
    """Every event of every record: (event, the record's bytes when it holds just this event,
    whether it is the record's last event)."""
    for rec in recs:
        events = rec.events
        last = len(events) - 1
        if last == 0:  # the common record: one event
            for event in events:
                yield event, rec.raw, True
            continue
        for i, event in enumerate(events):
            yield event, None, i == last


def check_header_keys(
    step: str,
    version: int,
    header: dict[str, Any],
    required: frozenset[str],
    optional: frozenset[str],
    refusal: str,
) -> None:
    """A step's source header: a session header of exactly ``version`` with the exact key set
    (§2.2 codecs); ``refusal`` words the extra-keys refusal ("the released v0 codec refuses")."""
    if (
        header.get("type") != "session"
        or header.get("version") != version
        or type(header.get("version")) is not int
    ):
        raise UpgradeRefused(step, version, f"the header is not a format v{version} session header")
    keys = header.keys()
    missing = sorted(required - keys)
    if missing:
        raise UpgradeRefused(step, version, f"the header lacks required keys {missing}")
    extra = sorted(keys - required - optional)
    if extra:
        raise UpgradeRefused(step, version, f"the header has keys {refusal}: {extra}")
