"""The findings of one pass over a transcript: each rule's severity (rules.py), their order,
and the verdict they decide (clean | interrupted | torn | corrupt)."""

from __future__ import annotations

from sesstool.core import rule_ids as R
from sesstool.core.errors import Address
from sesstool.core.rules import Finding, Severity
from sesstool.dialects.claude.rules import RULES

_SEVERITY = {r.id: r.severity for r in RULES}
_PHYSICAL_SEVERITY = {R.TORN_TAIL: Severity.WARNING}
_VERDICT_OF = {r.id: r.verdict for r in RULES}


class Findings:
    """Collects findings at addresses in one file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[Finding] = []

    def add(
        self, rule: str, message: str, offset: int | None, line: int | None, severity: Severity | None = None
    ) -> None:
        sev = (
            severity
            if severity is not None
            else _SEVERITY.get(rule, _PHYSICAL_SEVERITY.get(rule, Severity.ERROR))
        )
        self.items.append(Finding(rule, sev, message, Address(self.path, offset, line)))

    def copy(self) -> Findings:
        twin = Findings(self.path)
        twin.items = list(self.items)
        return twin


def in_order(findings: list[Finding]) -> tuple[Finding, ...]:
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
