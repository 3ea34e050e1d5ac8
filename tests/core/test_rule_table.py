"""``core.rules.rule_table``: the one text shape every dialect's rule table is written in."""

from __future__ import annotations

import pytest

from sesstool.core.rules import Rule, Severity, rule_table


def test_rows_become_rules_in_order() -> None:
    rules = rule_table(
        "toy-spec",
        """
        toy-first      error    corrupt      §1, §2
            the first rule's title
        toy-second     warning  interrupted  §3 (#12); observed
            a title that runs over
            two lines
        """,
    )
    assert rules == (
        Rule("toy-first", Severity.ERROR, "toy-spec §1, §2", "the first rule's title", "corrupt"),
        Rule(
            "toy-second",
            Severity.WARNING,
            "toy-spec §3 (#12); observed",
            "a title that runs over two lines",
            "interrupted",
        ),
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("toy-a error corrupt §1\n", "no title"),
        ("toy-a error maybe §1\n    title\n", "not a verdict class"),
        ("toy-a loud corrupt §1\n    title\n", "not a severity"),
        ("toy-a error corrupt\n    title\n", "needs id, severity, verdict and sections"),
        ("    title first\ntoy-a error corrupt §1\n", "before any rule"),
        ("toy-a error none §1\n    t\ntoy-a error none §2\n    t\n", "listed twice"),
    ],
)
def test_a_malformed_table_fails_loudly(table: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rule_table("toy-spec", table)
