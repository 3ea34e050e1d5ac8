"""The findings of one pass over a transcript: each rule's severity (rules.py), their order,
and the verdict they decide (clean | interrupted | torn | corrupt).

Only the first ``limit`` (``--max-findings``) in order are kept (hostile input makes one per
entry: a parent named by no entry, a call never answered; issue 11 item 1, third round); of
the others a ``Dropped`` record (their count, per severity, and the first of each rule and
severity in order) — which is all the verdict and its address need: the kept findings come
before every dropped one, so the first of a kind overall is the first kept or the first
dropped."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from sesstool.core import rule_ids as R
from sesstool.core.dropped import Dropped
from sesstool.core.errors import Address
from sesstool.core.rules import Finding, Severity
from sesstool.dialects.claude.rules import RULES
from sesstool.store.frame_runs import FrameRuns

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

_SEVERITY = {r.id: r.severity for r in RULES}
_PHYSICAL_SEVERITY = {R.TORN_TAIL: Severity.WARNING}
_VERDICT_OF = {r.id: r.verdict for r in RULES}


class Findings:
    """Collects findings at addresses in one file. In a zstd file an address also names the
    frame its line was decoded from (``at_frame``), as every dialect's zstd addresses do:
    ``decoded byte N, frame K`` (``core.errors.Address``)."""

    def __init__(
        self, path: str, limit: int | None = None, spill: Callable[[], SpillFile] | None = None
    ) -> None:
        """``limit``: how many findings to keep (the first in order); None: all. ``spill``: the
        spill file the frame map moves to when a hostile layout makes it long (store/frame_runs.py)."""
        self.path = path
        self.limit = limit
        self.items: list[Finding] = []  # at most 2 × limit: cut to the first ``limit`` in order
        self.dropped = Dropped()  # of those cut (``firsts``: the first of each kind in order)
        self.errors = 0  # ERROR findings, kept or not
        self._frames = FrameRuns(spill)  # the zstd frame of each line, as runs

    def at_frame(self, line: int, frame: int | None) -> None:
        """The lines from number ``line`` on were decoded from zstd frame ``frame`` (the
        reader's batch; None for raw input)."""
        self._frames.seen(line, frame)

    def frame_of(self, line: int | None) -> int | None:
        """The zstd frame line number ``line`` came from; None for raw input or no line."""
        return None if line is None else self._frames.frame_of(line)

    def add(
        self, rule: str, message: str, offset: int | None, line: int | None, severity: Severity | None = None
    ) -> None:
        sev = (
            severity
            if severity is not None
            else _SEVERITY.get(rule, _PHYSICAL_SEVERITY.get(rule, Severity.ERROR))
        )
        address = Address(self.path, offset, line, self.frame_of(line))
        self.add_finding(Finding(rule, sev, message, address))

    def add_finding(self, finding: Finding) -> None:
        self.items.append(finding)
        self.errors += finding.severity is Severity.ERROR
        if self.limit is not None and len(self.items) > 2 * self.limit + 16:
            self._cut()

    def _cut(self) -> None:
        """Keep the first ``limit`` in order (a stable sort: equal keys stay as added)."""
        assert self.limit is not None
        self.items.sort(key=_order)
        dropped = self.dropped
        for finding in self.items[self.limit :]:
            dropped.count += 1
            dropped.by_severity[finding.severity] += 1
            kind = (finding.rule, finding.severity)
            first = dropped.firsts.get(kind)
            if first is None or _order(finding) < _order(first):
                dropped.firsts[kind] = finding
        del self.items[self.limit :]

    def kept(self) -> tuple[Finding, ...]:
        """The findings kept, in order (the first ``limit``); call once, at the end."""
        if self.limit is not None:
            self._cut()
        return in_order(self.items)

    def absorb(self, other: Findings) -> None:
        """Add ``other``'s findings (the reader's, held apart while the scan ran). Exact without
        them all: every one ``other`` dropped follows ``limit`` it kept, so the first ``limit``
        of both are among these and ``other``'s kept; of its dropped, the counts and the first
        of each kind are all that is weighed."""
        for finding in other.kept():
            self.add_finding(finding)
        theirs, ours = other.dropped, self.dropped
        ours.count += theirs.count
        for severity, n in enumerate(theirs.by_severity):
            ours.by_severity[severity] += n
        self.errors += theirs.by_severity[Severity.ERROR]
        for kind, first in theirs.firsts.items():
            mine = ours.firsts.get(kind)
            if mine is None or _order(first) < _order(mine):
                ours.firsts[kind] = first

    def copy(self) -> Findings:
        twin = Findings(self.path, self.limit)
        twin._frames = self._frames.copy()
        twin.items, twin.errors = list(self.items), self.errors
        twin.dropped.count, twin.dropped.by_severity = self.dropped.count, list(self.dropped.by_severity)
        twin.dropped.firsts = dict(self.dropped.firsts)
        return twin


def in_order(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """By line, then offset, then rule id: the order every output lists them in."""
    return tuple(sorted(findings, key=_order))


def _order(f: Finding) -> tuple[int, int, str]:
    line = f.address.line if f.address.line is not None else 0
    return (line, f.address.offset or 0, f.rule)


def verdict(findings: tuple[Finding, ...]) -> tuple[str, str, str | None]:
    """(verdict, its reason, the rule of the finding that decided it)."""
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        return "corrupt", errors[0].message, errors[0].rule
    torn = [f for f in findings if f.rule in (R.TORN_TAIL, R.ZSTD_TORN_FRAME)]
    if torn:
        return "torn", torn[0].message, torn[0].rule
    open_ = [f for f in findings if _VERDICT_OF.get(f.rule) == "interrupted"]
    if open_:
        return "interrupted", open_[0].message, open_[0].rule
    return "clean", "the active chain ends with a reply and every call on it has a result", None
