"""The Codex scanner on the fixtures the real CLI wrote (and the byte-level mutations of them):
verdicts, rule ids with line addresses, dangling calls, facts — raw and zstd alike."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.codex.scanner import CODEX_RULES
from sesstool.dialects.codex.vocabulary import RULES
from tests.dialects.codex._support import fixture_dirs, rollout, scan, scan_bytes

# fixture -> (verdict, [(rule, line)], dangling call ids)
EXPECTED: dict[str, tuple[str, list[tuple[str, int]], list[str]]] = {
    "text": ("clean", [], []),
    "tool-call": ("clean", [], []),
    "parallel-calls": ("clean", [], []),
    "two-turns": ("clean", [], []),
    "auto-compaction": ("clean", [], []),
    "compressed": ("clean", [], []),
    "multi-frame": ("clean", [], []),
    "rollback": ("clean", [], []),
    "sigint-during-command": ("clean", [], []),
    "kill-during-command": (
        "interrupted",
        [("codex-call-without-output", 10), ("codex-unfinished-turn", 2)],
        ["call_slow"],
    ),
    "sigterm-during-command": (
        "interrupted",
        [("codex-call-without-output", 10), ("codex-unfinished-turn", 2)],
        ["call_slow"],
    ),
    "kill-parallel-half": (
        "interrupted",
        [("codex-call-without-output", 11), ("codex-unfinished-turn", 2)],
        ["call_slow"],
    ),
    "kill-mid-stream": ("interrupted", [("codex-unfinished-turn", 2)], []),
    "custom-tool-dangling": (
        "interrupted",
        [("codex-call-without-output", 10), ("codex-unfinished-turn", 2)],
        ["call_slow"],
    ),
    "local-shell-dangling": (
        "interrupted",
        [("codex-call-without-output", 10), ("codex-unfinished-turn", 2)],
        ["call_slow"],
    ),
    "torn-tail": ("torn", [("codex-torn-tail", 19), ("codex-unfinished-turn", 2)], []),
    # Codex resumed the torn rollout: it wrote "\n" first, so the fragment is now mid-file, and
    # the first turn (whose task_complete was torn) stays unfinished.
    "torn-tail-resumed": (
        "corrupt",
        [("codex-undecodable-line", 19), ("codex-unfinished-turn", 2)],
        [],
    ),
    "interleaved-half-line": ("corrupt", [("codex-interleaved-line", 9)], []),
    "nul-run": ("corrupt", [("codex-nul-run", 9)], []),
    "undecodable-line": ("corrupt", [("codex-undecodable-line", 9)], []),
    "missing-session-meta": ("corrupt", [("codex-missing-session-meta", 1)], []),
    "session-meta-invalid": ("corrupt", [("codex-session-meta-invalid", 1)], []),
    "unknown-history-mode": ("unsupported", [("codex-unknown-history-mode", 1)], []),
    "empty": ("corrupt", [("codex-empty-file", 1)], []),
    "legacy-pre-envelope": ("unsupported", [("codex-legacy-rollout", 1)], []),
    "orphan-output": ("clean", [("codex-output-without-call", 12)], []),
    "newer-version-unknown-item": (
        "clean",
        [("codex-newer-cli-version", 1), ("codex-unknown-item-type", 15)],
        [],
    ),
    "session-meta-repeated": ("clean", [("codex-session-meta-repeated", 4)], []),
}


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(d.name for d in fixture_dirs()) == sorted(EXPECTED)


def test_every_rule_has_a_triggering_fixture() -> None:
    triggered = {rule for _, rules, _ in EXPECTED.values() for rule, _ in rules}
    assert {r.id for r in RULES} - {"zstd-torn-frame"} <= triggered | {"zstd-torn-frame"}
    assert {r.id for r in RULES} <= triggered


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture(name: str, zstd: bool) -> None:
    verdict, rules, dangling = EXPECTED[name]
    result = scan(rollout(name, zstd))
    assert result.verdict == verdict, result.findings
    assert [(f.rule, f.address.line) for f in result.findings] == rules
    assert [c.call_id for c in result.facts.dangling] == dangling
    for finding in result.findings:
        assert finding.severity is CODEX_RULES[finding.rule].severity


def test_facts_of_a_killed_parallel_batch() -> None:
    facts = scan(rollout("kill-parallel-half")).facts
    assert facts.cli_version == "0.171.0"
    assert facts.originator == "codex_exec"
    assert facts.model == "mock-model"
    assert facts.model_provider == "mock"
    assert facts.calls == 2 and facts.answered == 1
    (call,) = facts.dangling
    assert (call.kind, call.name, call.arguments) == (
        "function_call",
        "exec_command",
        '{"cmd":"touch started && sleep 30 && echo finished"}',
    )
    assert facts.turns_started == 1 and facts.turns_completed == 0 and len(facts.open_turns) == 1
    assert facts.thread_id is not None and facts.thread_id in rollout("kill-parallel-half").name


def test_facts_of_compaction_and_rollback() -> None:
    compacted = scan(rollout("auto-compaction")).facts
    assert compacted.compactions == 1 and compacted.turns_completed == 2
    assert compacted.usage is not None and compacted.usage.total_tokens > 0
    assert scan(rollout("rollback")).facts.rollbacks == 1


def test_sigint_is_closed_by_codex_itself() -> None:
    facts = scan(rollout("sigint-during-command")).facts
    assert facts.turns_aborted == 1 and not facts.open_turns and not facts.dangling


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_cut_keeps_the_complete_lines(data: st.DataObject) -> None:
    """Cutting a rollout anywhere never crashes; the committed prefix is up to the last newline
    and a cut inside a line is a torn tail."""
    source = rollout("kill-parallel-half").read_bytes()
    cut = data.draw(st.integers(min_value=0, max_value=len(source)))
    prefix = source[:cut]
    result = scan_bytes(prefix)
    last_newline = prefix.rfind(b"\n") + 1
    assert result.tail.committed_bytes == last_newline
    if cut > last_newline:
        assert result.tail.kind == "torn-line"
        assert result.tail.dropped_bytes == cut - last_newline
    if cut == 0:
        assert result.verdict == "corrupt"
