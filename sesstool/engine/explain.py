"""``sesstool rule ID``: what a rule means and what to do about a finding of it (every rule of
every dialect, from the one registry)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sesstool.core.errors import UsageError
from sesstool.core.rules import RULES, Rule, Severity, fix_for, stricter_in_v4, verdict_of_finding
from sesstool.dialects import registry


@dataclass(frozen=True, slots=True)
class RuleExplanation:
    rule: Rule
    verdict: str  # what one finding implies at the default severity: corrupt, torn, …, none
    fix: str
    v4_error: bool  # an error in a v4 log (the native v4 reader enforces the relation)


def all_rules() -> list[Rule]:
    """Every rule of every dialect (the registry registers each dialect's rules on import)."""
    assert registry.DIALECTS
    return sorted(RULES.values(), key=lambda r: r.id)


def explain(rule_id: str) -> RuleExplanation:
    """The explanation of ``rule_id``; an unknown id is a usage error naming the closest ids."""
    known = {r.id: r for r in all_rules()}
    rule = known.get(rule_id.strip().lower())
    if rule is None:
        close = difflib.get_close_matches(rule_id, known, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; `sesstool rule --all` lists them"
        raise UsageError(f"no rule {rule_id!r}{hint}")
    return RuleExplanation(
        rule, verdict_of_finding(rule, rule.severity), fix_for(rule), stricter_in_v4(rule.id)
    )


def v4_fix(explanation: RuleExplanation) -> str:
    return fix_for(explanation.rule, Severity.ERROR)
