"""A legacy pre-envelope rollout (agent-formats §3.3; docs/format.md "Legacy rollouts"): read as
Codex 0.171 reads it — nothing decodes, so it is refused — and reported once, at information
level, with what the file holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_sesstool
from tests.dialects.codex._support import rollout, scan, scan_bytes

LEGACY = rollout("legacy-pre-envelope")
THREAD = "c9657cb7-966f-42c9-aac6-a64ec620cf68"


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zst"])
def test_the_legacy_fixture_is_read_as_codex_0171_reads_it(zstd: bool) -> None:
    result = scan(rollout("legacy-pre-envelope", zstd))
    assert result.verdict == "unsupported"
    assert [(f.rule, f.severity.name, f.address.line) for f in result.findings] == [
        ("codex-legacy-rollout", "INFO", 1)
    ]
    facts = result.facts
    assert facts.thread_id == THREAD and facts.cli_version is None
    assert dict(facts.by_type) == {"legacy session meta": 1, "legacy state": 3, "legacy response item": 4}
    assert dict(facts.by_item) == {"message": 2, "function_call": 1, "function_call_output": 1}
    assert facts.skipped_lines == 0 and facts.calls == 0


def test_lines_that_are_not_json_are_counted_not_reported() -> None:
    lines = LEGACY.read_bytes().splitlines(keepends=True)
    result = scan_bytes(b"".join([*lines[:3], b"garbage\n", b"\n", *lines[3:]]))
    assert [f.rule for f in result.findings] == ["codex-legacy-rollout"]
    assert result.facts.skipped_lines == 1 and result.facts.blank_lines == 1


def test_a_bare_meta_is_legacy_only_as_the_first_line() -> None:
    text = rollout("text").read_bytes()
    bare = LEGACY.read_bytes().split(b"\n", 1)[0] + b"\n"
    first, rest = text.split(b"\n", 1)
    result = scan_bytes(first + b"\n" + bare + rest)
    assert "codex-legacy-rollout" not in {f.rule for f in result.findings}
    assert result.verdict == "corrupt" and result.findings[0].rule == "codex-undecodable-line"


@pytest.mark.parametrize("command", ["derive", "repair", "fork"])
def test_commands_that_need_the_history_refuse_it(command: str, tmp_path: Path) -> None:
    src = tmp_path / LEGACY.name
    src.write_bytes(LEGACY.read_bytes())
    out = ["-o", str(tmp_path / "out.jsonl")] if command != "derive" else []
    result = run_sesstool(command, str(src), *out)
    assert result.exit_code == 4, result.stderr
    assert "pre-envelope" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [LEGACY.name]


def test_validate_reports_it_without_failing() -> None:
    result = run_sesstool("validate", "--format", "json", str(LEGACY))
    assert result.exit_code == 0, result.stderr
    [doc] = json.loads(result.stdout)["files"]
    assert [f["rule"] for f in doc["findings"]] == ["codex-legacy-rollout"]
