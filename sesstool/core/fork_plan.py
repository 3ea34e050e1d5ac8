"""What every fork shares (spec §8): the boundary facts of a scan, the default boundary, the
``--at`` checks, and the ``ForkPlan`` a dialect returns (``Dialect.plan_fork``).

* ``boundary_facts`` reads what a fork needs from a scan: where the last completed turn
  ends, the last ``session/end-seed``, and whether ``--at`` cuts a packed chunk row.
* each dialect's planner (``dialects.dsh.fork``, ``dialects.mini.fork``) turns the open state
  *at* the boundary into the child's header and appended records, or refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.errors import UsageError
from sesstool.core.model import ScanResult


@dataclass(frozen=True, slots=True)
class BoundaryFacts:
    """What a fork needs to know about the folded events besides the open state."""

    last_seq: int | None  # last folded (committed) event
    last_turn_end: int | None  # seq of the last turn/end
    completed_until: int | None  # the "latest completed prefix" (default boundary), if any
    last_end_seed: int | None  # seq of the last session/end-seed
    split_row: tuple[int, int] | None  # (seq0, last seq) of a packed row that --at cuts


def boundary_facts(scan: ScanResult) -> BoundaryFacts:
    """The boundary facts of a scan (see ``core.model.Boundaries``)."""
    b = scan.boundaries
    last = scan.open.last_seq
    completed: int | None = None
    if b.last_turn_end is not None:
        completed = b.resume_seq - 1 if b.resume_seq is not None else last
    return BoundaryFacts(last, b.last_turn_end, completed, b.last_end_seed, b.split_row)


def default_boundary(facts: BoundaryFacts) -> int:
    """The end of the last completed turn, extended over the events after its turn/end up to
    (excluding) the next ``turn/start``, appended ``user/message`` or ``agent/inbox/spliced``
    (spec §8.3, last bullet). Raises UsageError when no turn was completed."""
    if facts.last_seq is None:
        raise UsageError("the log has no committed events: there is nothing to fork")
    if facts.completed_until is None:
        raise UsageError(
            f"the log has no completed turn (no turn/end in seq 0–{facts.last_seq}): "
            "pass --at SEQ to choose the fork boundary"
        )
    return facts.completed_until


def check_at(at: int, last_seq: int | None) -> None:
    """--at must name a committed event."""
    if last_seq is None:
        raise UsageError(f"--at {at}: the log has no committed events")
    if at > last_seq:
        raise UsageError(f"--at {at} is past the end: the last committed event is seq {last_seq}")


def check_split_row(facts: BoundaryFacts, boundary: int) -> None:
    """A fork copies whole records: a boundary inside a packed chunk row (§9.3) is refused."""
    if facts.split_row is not None:
        first, last = facts.split_row
        before = f"at most {first - 1} or " if first > 0 else ""
        raise UsageError(
            f"--at {boundary} falls inside a packed chunk row holding seqs {first}–{last}; a "
            f"fork copies whole records byte for byte: choose a boundary of {before}at least {last}"
        )


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """Everything the child gets besides the copied seed records."""

    version: int
    boundary: int  # inclusive: the seed is seq 0..boundary
    header: dict[str, Any]  # the child's first record (dsh: its §2.1 header); {}: no header line
    marker: dict[str, Any] | None  # session/end-seed (None: v0/v1 seed already ends with one)
    closers: Collection[dict[str, Any]]  # v4: forked closers of the open turn (re-iterable, lazy)
    open_turn: int | None  # the turn open at the boundary (closed by the closers in v4)
    open_turn_seq: int | None
    # every seed line (without its newline) through this function (a dialect that repeats the
    # session id in every record); None copies the seed byte for byte
    rewrite: Callable[[bytes], bytes] | None = None
    child_id: str | None = None  # the child's session id (shown by fork)

    @property
    def inherited(self) -> int:
        """Inherited event count: seedLength (v0/v1) and the tagged marker's seq (v2+)."""
        return self.boundary + 1

    @property
    def appended(self) -> Closers[dict[str, Any]]:
        """The marker (if any), then the closers: walked, never held (issue 11 item 1)."""
        return Closers.joined((self.marker,) if self.marker is not None else (), self.closers)

    @property
    def events(self) -> int:
        """Events in the child."""
        return self.inherited + len(self.appended)
