"""A Claude scan keeps its first ``--max-findings`` findings (findings.Findings: at most twice as
many while it runs, cut in order) and a record of the others (issue 11 item 1, third round:
hostile input makes a finding per entry). What it keeps and records is what cutting the full,
ordered list gives — the kept findings, the count, the count per severity and the first of each
rule and severity — and the verdict, its reason and its address are those of every finding:
for findings added in any order, and for scans of hostile transcripts with thousands of them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.dropped import dropped_of
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.dialects.claude.findings import Findings, in_order, verdict
from sesstool.engine.scan import scan_source
from tests.adversarial.claude_hostile import SESSION, write

_RULES = ["claude-parent-missing", "claude-dangling-tool-use", "torn-tail", "claude-fragment"]
_FINDING = st.tuples(
    st.sampled_from(_RULES),
    st.sampled_from(list(Severity)),
    st.one_of(st.none(), st.integers(0, 30)),
    st.one_of(st.none(), st.integers(0, 30)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FINDING, max_size=120), st.integers(0, 6))
def test_kept_and_dropped_are_the_full_list_cut(
    added: list[tuple[str, Severity, int | None, int | None]], limit: int
) -> None:
    every, bounded = Findings("t"), Findings("t", limit)
    for n, (rule, severity, line, offset) in enumerate(added):
        for found in (every, bounded):
            found.add(rule, f"m{n}", offset, line, severity)
        assert len(bounded.items) <= 2 * limit + 16
    full = in_order(every.items)
    kept = bounded.kept()
    assert kept == full[:limit]
    expected = dropped_of(full[limit:])
    got = bounded.dropped
    assert (got.count, got.by_severity) == (expected.count, expected.by_severity)
    assert in_order(got.firsts.values()) == in_order(expected.firsts.values())
    firsts = in_order((*kept, *got.firsts.values()))
    assert verdict(firsts) == verdict(full)
    assert bounded.errors == sum(f.severity is Severity.ERROR for f in full)


def test_a_scan_with_thousands_of_findings_keeps_the_first(tmp_path: Path) -> None:
    """3,000 missing parents and 3,000 dangling calls, at limits 1, 5 and 1,000: the kept findings
    are the first of every finding's, the counts and verdict those of all of them."""
    for pattern in ("missing-parents", "never-answered"):
        log = write(tmp_path / f"{pattern}-{SESSION}.jsonl", pattern, 3000)
        every = scan_source(log, ScanOptions(max_findings=1 << 30)).scan
        assert len(every.findings) >= 3000
        for limit in (1, 5, 1000):
            cut = scan_source(log, ScanOptions(max_findings=limit)).scan
            expected = dropped_of(every.findings[limit:])
            assert cut.findings == every.findings[:limit]
            assert (cut.findings_dropped, cut.dropped_by_severity) == (
                expected.count,
                tuple(expected.by_severity),
            )
            assert cut.dropped_firsts == tuple(expected.firsts.values())
            assert (cut.verdict, cut.verdict_reason, cut.verdict_address) == (
                every.verdict,
                every.verdict_reason,
                every.verdict_address,
            )
