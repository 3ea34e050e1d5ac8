"""Every rule id has a minimal violating example that yields it (with its severity, address and
verdict), the clean base logs of every version yield nothing, and docs/rules.md is rendered from
the same registry and examples (spec §1.4, §2–§6, §9).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.rules import RULES, Finding
from sesstool.engine.scan import scan_source
from sesstool.store.source import ReadLimits
from tests.conftest import ROOT, UPDATE_GOLDENS
from tests.rules.examples import (
    EXAMPLES,
    LIMIT_OPTIONS,
    VERSIONS,
    Example,
    base_log,
    example_id,
    render_rules_doc,
    severity_in,
    to_zstd,
    tool_log,
)

RULES_DOC = ROOT / "docs" / "rules.md"


def scan(directory: Path, name: str, data: bytes, options: dict[str, int] | None = None) -> ScanResult:
    path = directory / name
    path.write_bytes(data)
    options = options or {}
    limit_values: dict[str, Any] = {k: v for k, v in options.items() if k in LIMIT_OPTIONS}
    limits = ReadLimits(**limit_values)
    scan_options = ScanOptions(
        **{
            k: v
            for k, v in options.items()  # type: ignore[arg-type]
            if k not in LIMIT_OPTIONS
        }
    )
    return scan_source(str(path), scan_options, limits).scan


def describe(findings: tuple[Finding, ...]) -> str:
    if not findings:
        return "  (no findings)"
    return "\n".join(
        f"  {f.rule} [{f.severity.label}] at {f.address.describe()}: {f.message}" for f in findings
    )


def matches(finding: Finding, ex: Example) -> bool:
    address = finding.address
    return (
        finding.rule == ex.rule
        and finding.severity is ex.expect_severity
        and all(getattr(address, k) == v for k, v in ex.expect_address.items())
    )


@pytest.mark.parametrize("ex", EXAMPLES, ids=example_id)
def test_example_reports_its_rule(ex: Example, tmp_path: Path) -> None:
    result = scan(tmp_path, ex.file_name, ex.data, ex.options)
    want = ", ".join(f"{k} {v}" for k, v in ex.expect_address.items())
    assert any(matches(f, ex) for f in result.findings), (
        f"{ex.description}: expected {ex.rule} [{ex.expect_severity.label}] at {want}; got\n"
        + describe(result.findings)
    )


@pytest.mark.parametrize("ex", EXAMPLES, ids=example_id)
def test_example_verdict(ex: Example, tmp_path: Path) -> None:
    result = scan(tmp_path, ex.file_name, ex.data, ex.options)
    assert result.verdict == ex.expect_verdict, (
        f"{ex.description}: verdict {result.verdict} ({result.verdict_reason}), expected "
        f"{ex.expect_verdict}; findings:\n" + describe(result.findings)
    )


def test_every_rule_has_an_example() -> None:
    covered = {ex.rule for ex in EXAMPLES}
    assert sorted(set(RULES) - covered) == []
    assert sorted(covered - set(RULES)) == []


def test_examples_are_well_formed() -> None:
    ids = [example_id(ex) for ex in EXAMPLES]
    assert len(set(ids)) == len(ids)
    for ex in EXAMPLES:
        assert ex.version in VERSIONS, ex
        assert ex.description and "\n" not in ex.description, ex.rule
        assert {"line", "seq", "frame"} & ex.expect_address.keys(), ex.rule
        # the severity the example expects is the one docs/rules.md states for its version
        assert ex.expect_severity is severity_in(ex.rule, ex.version), example_id(ex)
        assert ex.encoding == "raw" or ex.data.startswith(b"\x28\xb5\x2f\xfd"), example_id(ex)


def test_version_dependent_rules_have_an_example_per_meaning() -> None:
    """Where a rule's severity differs by version, each distinct severity is exemplified."""
    by_rule: dict[str, set[str]] = {}
    for ex in EXAMPLES:
        by_rule.setdefault(ex.rule, set()).add(ex.expect_severity.label)
    for rule in RULES:
        severities = {severity_in(rule, v).label for v in VERSIONS}
        if len(severities) > 1:
            assert severities <= by_rule[rule], rule


CLEAN_LOGS = [
    (kind, version, encoding)
    for kind in ("base", "tool")
    for version in VERSIONS
    for encoding in ("raw", "zstd")
]


@pytest.mark.parametrize(
    ("kind", "version", "encoding"), CLEAN_LOGS, ids=[f"{k}-v{v}-{e}" for k, v, e in CLEAN_LOGS]
)
def test_clean_logs_have_no_findings(kind: str, version: int, encoding: str, tmp_path: Path) -> None:
    raw = base_log(version) if kind == "base" else tool_log(version)
    name = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    if encoding == "zstd":
        raw, name = to_zstd(raw), name + ".zstd"
    result = scan(tmp_path, name, raw)
    assert result.findings == (), describe(result.findings)
    assert result.verdict == "clean"
    assert result.version == version


def test_rules_doc_is_current() -> None:
    text = render_rules_doc()
    if UPDATE_GOLDENS:
        RULES_DOC.parent.mkdir(parents=True, exist_ok=True)
        RULES_DOC.write_text(text, encoding="utf-8")
        return
    assert RULES_DOC.exists(), "docs/rules.md is missing: run with SESSTOOL_UPDATE_GOLDENS=1"
    assert RULES_DOC.read_text(encoding="utf-8") == text, (
        "docs/rules.md is stale: run `SESSTOOL_UPDATE_GOLDENS=1 .venv/bin/pytest tests/rules`"
    )


def test_rules_doc_covers_every_rule() -> None:
    text = render_rules_doc()
    for rule in RULES.values():
        assert f"\n### {rule.id}\n" in text
        assert rule.section in text
