"""Findings past ``max_findings``: not kept, still weighed (docs/format.md "Findings past
--max-findings"). A scan keeps the first dropped finding of each rule and severity, in the
order they were reported, and counts each severity: what ``ScanResult.dropped_firsts`` and
``dropped_by_severity`` carry to the verdict, ``--fail-on`` and the totals."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sesstool.core.rules import Finding, Severity


class Dropped:
    __slots__ = ("by_severity", "count", "firsts")

    def __init__(self) -> None:
        self.count = 0
        self.firsts: dict[tuple[str, Severity], Finding] = {}
        self.by_severity = [0, 0, 0]  # indexed by Severity

    def add(self, rule: str, severity: Severity, finding: Callable[[], Finding]) -> None:
        """One finding not kept; ``finding`` builds it (its address) only when it is the first
        of its rule and severity."""
        self.count += 1
        self.by_severity[severity] += 1
        if (rule, severity) not in self.firsts:
            self.firsts[rule, severity] = finding()

    def add_finding(self, finding: Finding) -> None:
        """One finding not kept, already built."""
        self.add(finding.rule, finding.severity, lambda: finding)

    def fields(self) -> dict[str, Any]:
        """The ``ScanResult`` fields."""
        s = self.by_severity
        return {"findings_dropped": self.count, "dropped_firsts": tuple(self.firsts.values()),
                "dropped_by_severity": (s[0], s[1], s[2])}  # fmt: skip


def dropped_of(findings: Iterable[Finding]) -> Dropped:
    """The record of ``findings``, every one of them dropped (a scan that cuts its list at the
    end, as the Claude scan does)."""
    out = Dropped()
    for f in findings:
        out.add_finding(f)
    return out
