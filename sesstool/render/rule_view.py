"""``sesstool rule``: one rule explained (like ``ruff rule``), or the list of every rule."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import SCHEMA_VERSION
from sesstool.core.rules import Rule
from sesstool.engine.explain import RuleExplanation, v4_fix

_VERDICT_TEXT = {
    "corrupt": "corrupt: one such error makes the log corrupt",
    "unsupported": "unsupported: the log is one this reader must not interpret (never corruption)",
    "torn": "torn: the log ends in an uncommitted tail a repair drops",
    "interrupted": "interrupted: a turn is left open; a repair closes it",
    "none": "— (the verdict stays clean)",
}


def rule_doc(ex: RuleExplanation) -> dict[str, Any]:
    r = ex.rule
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "rule",
        "rule": r.id,
        "title": r.title,
        "severity": r.severity.label,
        "severity_in_v4": "error" if ex.v4_error else r.severity.label,
        "spec": r.section,
        "verdict": ex.verdict,
        "fix": ex.fix,
        "docs": f"docs/rules.md#{r.id}",
    }


def render_rule(ex: RuleExplanation, console: Console) -> None:
    r = ex.rule
    console.print(Text(r.id, style="bold"))
    console.print(f"  {r.title}")
    console.print()
    severity = r.severity.label + (" (error in a v4 log: the v4 reader enforces it)" if ex.v4_error else "")
    console.print(f"severity  {severity}")
    console.print(f"spec      {r.section}")
    console.print(f"verdict   {_VERDICT_TEXT[ex.verdict]}")
    console.print()
    console.print(Text("What to do", style="bold"))
    console.print(f"  {ex.fix}")
    if ex.v4_error:
        console.print("  In a v4 log, where it is an error:")
        console.print(f"  {v4_fix(ex)}")
    console.print()
    console.print(f"Examples of a log that breaks it: docs/rules.md#{r.id}")


def render_rules(rules: list[Rule], console: Console) -> None:
    width = max(len(r.id) for r in rules)
    for r in rules:
        console.print(f"{r.id:<{width}}  {r.severity.label:<7}  {r.title}")
