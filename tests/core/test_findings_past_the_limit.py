"""Findings past ``--max-findings`` are not kept, but still weighed (docs/format.md "Findings
past --max-findings"): the verdict, its address and reason, whether ``validate`` fails, and the
severity totals are the same at any limit as with every finding kept — for every fixture log
of every dialect, raw and zstd. Before this, the dsh and mini-agent verdict was judged on the
kept findings only: a corrupt log whose first findings were warnings read ``interrupted`` and
passed ``validate --max-findings 1`` (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from sesstool.cli.main import cli
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.engine.scan import scan_source
from tests.conftest import FIXTURES


def _logs() -> list[Path]:
    logs = [p for p in FIXTURES.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zstd"))]
    return sorted(p for p in logs if "not-a-log" not in p.parts and "expected" not in p.parts)


LOGS = _logs()


def _outcome(path: Path, limit: int) -> tuple[object, ...]:
    s = scan_source(path, ScanOptions(max_findings=limit)).scan  # every fixture log scans
    errors = [f for f in s.weighed if f.severity is Severity.ERROR]
    return (
        s.verdict,
        s.verdict_address,
        s.verdict_reason,
        tuple(s.count(sev) for sev in Severity),
        errors[0] if errors else None,
        len(s.findings) + s.findings_dropped,
    )


def test_there_are_logs_of_every_dialect_with_several_findings() -> None:
    many = {p.relative_to(FIXTURES).parts[0] for p in LOGS if _outcome(p, 1)[-1] > 1}  # type: ignore[operator]
    assert {"dsh", "mini", "codex", "claude", "migrate"} <= many


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_limit_weighs_what_every_finding_weighs(path: Path) -> None:
    unlimited = _outcome(path, 1_000_000)
    for limit in (1, 2, 3):
        assert _outcome(path, limit) == unlimited, limit


def _warnings_then_an_error(where: Path) -> Path:
    """A clean log whose first two events carry an integer beyond 2^53 (two warnings), then a
    line that is not JSON, committed by the turn/end after it (an error)."""
    lines = (FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl").read_bytes().splitlines()
    out = [lines[0]]
    for i, line in enumerate(lines[1:], 1):
        event = orjson.loads(line)
        if i in (1, 2):
            event["data"]["x"] = 2**60
        out.append(orjson.dumps(event))
        if i == 3:
            out.append(b'{"garbage": ')
    log = where / "session.jsonl"
    log.write_bytes(b"\n".join(out) + b"\n")
    return log


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github"])
def test_validate_fails_on_an_error_past_the_limit(tmp_path: Path, fmt: str) -> None:
    log = _warnings_then_an_error(tmp_path)
    runner = CliRunner()
    full = runner.invoke(cli, ["validate", "--format", "json", str(log)])
    assert full.exit_code == 1, full.output
    doc = json.loads(full.output)
    assert doc["files"][0]["verdict"]["verdict"] == "corrupt"
    assert [f["severity"] for f in doc["files"][0]["findings"]] == ["warning", "warning", "error"]
    limited = runner.invoke(cli, ["validate", "--max-findings", "1", "--format", fmt, str(log)])
    assert limited.exit_code == 1, limited.output
    if fmt == "json":
        got = json.loads(limited.output)
        assert got["summary"] == doc["summary"] and got["failed"] is True
        assert got["files"][0]["verdict"] == doc["files"][0]["verdict"]
        assert got["files"][0]["findings_dropped"] == 2 and len(got["files"][0]["findings"]) == 1
    if fmt == "text":
        assert ": corrupt (v0" in limited.output
        assert "1 failing (--fail-on error): 1 error(s), 2 warning(s), 0 info" in limited.output
    if fmt == "junit":
        assert 'failures="1"' in limited.output and 'type="invalid-json"' in limited.output


def test_salvage_refuses_when_an_error_was_not_kept(tmp_path: Path) -> None:
    """A salvaging repair drops the lines its errors name, so it needs every error: one not
    kept is a refusal naming the option, never a salvage that keeps a damaged line."""
    from sesstool.core.errors import InputError
    from sesstool.engine.line_salvage import plan_line_salvage

    log = _warnings_then_an_error(tmp_path)
    report = scan_source(log, ScanOptions(max_findings=1))
    assert report.scan.dropped_by_severity[Severity.ERROR] == 1

    class Source:  # what plan_line_salvage reads first
        scan, dialect, path = report.scan, report.dialect, log

    Source.report = report  # type: ignore[attr-defined]

    with pytest.raises(InputError, match="--max-findings 3 or more"):
        plan_line_salvage(Source(), "raw", None)  # type: ignore[arg-type]
