"""The scanner on every transcript the real CLI wrote (fixtures/claude, recorded by the lane)."""

from __future__ import annotations

import pytest

from sesstool.dialects.claude.rules import RULES
from sesstool.dialects.claude.vocabulary import MEASURED_VERSION
from tests.claude._support import LANE, SCENARIOS, Scenario, scan_bytes, scan_file

# scenario -> (verdict, dangling tool_use ids, rules found besides claude-writer-version)
EXPECTED: dict[str, tuple[str, tuple[str, ...], set[str]]] = {
    "text": ("clean", (), set()),
    "tool-one": ("clean", (), set()),
    "tool-parallel": ("clean", (), set()),
    "kill-tool": ("interrupted", ("toolu_lane_slow_0",), {"claude-dangling-tool-use"}),
    "kill-parallel-one-answered": ("interrupted", ("toolu_lane_mix_slow",), {"claude-dangling-tool-use"}),
    "kill-mid-stream": ("interrupted", (), {"claude-unanswered-turn"}),
    "sigint-tool": ("interrupted", (), {"claude-unanswered-turn"}),
    "sigterm-tool": ("interrupted", (), {"claude-unanswered-turn"}),
    "compact": ("clean", (), set()),
    "subagent": ("clean", (), set()),
    "kill-subagent": ("interrupted", ("toolu_lane_agent_slow",), {"claude-dangling-tool-use"}),
    "concurrent-writers": ("clean", (), {"claude-concurrent-writers"}),
    "damaged-torn-tail": ("torn", (), {"torn-tail"}),
    "damaged-nul-run": ("corrupt", (), {"nul-bytes"}),
    "damaged-orphan-result": ("clean", (), {"claude-orphan-tool-result", "claude-parent-missing"}),
    "damaged-broken-parent": ("clean", (), {"claude-parent-missing"}),
    "damaged-duplicate-uuid": ("clean", (), {"claude-duplicate-uuid"}),
    "damaged-unknown-type": ("clean", (), {"claude-unknown-type"}),
    "damaged-two-sessions": ("clean", (), {"claude-several-sessions"}),
    "damaged-entry-shape": ("clean", (), {"claude-entry-shape"}),
    "damaged-sidechain-result": ("clean", (), set()),
    "damaged-sidechain-orphan": ("clean", (), {"claude-orphan-tool-result"}),
}


def test_every_recorded_scenario_has_an_expectation() -> None:
    assert sorted(EXPECTED) == SCENARIOS


@pytest.mark.parametrize("name", SCENARIOS)
def test_verdict_dangling_and_rules(name: str) -> None:
    verdict, dangling, rules = EXPECTED[name]
    scan = scan_file(Scenario(name).transcript)
    assert scan.verdict == verdict, scan.verdict_reason
    assert tuple(call.id for call in scan.dangling) == dangling
    assert {f.rule for f in scan.findings} - {"claude-writer-version"} == rules
    assert scan.session_id == Scenario(name).session_id
    assert scan.versions == ((MEASURED_VERSION, scan.versions[0][1]),)


def test_every_rule_has_a_triggering_fixture() -> None:
    seen: set[str] = set()
    for name in SCENARIOS:
        scenario = Scenario(name)
        seen |= {f.rule for f in scan_file(scenario.transcript).findings}
        seen |= {f.rule for f in scan_file(scenario.resumed).findings}
        for side in scenario.subagents:
            seen |= {f.rule for f in scan_file(side, subagent=True).findings}
    assert {r.id for r in RULES} <= seen


def test_the_cli_leaves_a_fragment_mid_file_after_a_cut_line() -> None:
    """§0: resuming a file whose last line was cut writes "\\n" first: the cut line stays mid-file."""
    scan = scan_file(LANE / "damaged-torn-tail" / "resumed" / Scenario("damaged-torn-tail").transcript.name)
    fragments = [f for f in scan.findings if f.rule == "claude-fragment"]
    assert len(fragments) == 1 and scan.verdict == "corrupt"
    torn = scan_file(Scenario("damaged-torn-tail").transcript)
    (tail,) = [f for f in torn.findings if f.rule == "torn-tail"]
    assert fragments[0].address.offset == tail.address.offset


def test_a_subagent_file_keeps_its_dangling_call() -> None:
    """§0: the CLI closes the parent's Agent call on resume, never the subagent's own calls."""
    (side,) = Scenario("kill-subagent").subagents
    scan = scan_file(side, subagent=True)
    assert [f.rule for f in scan.findings if f.rule != "claude-writer-version"] == [
        "claude-subagent-dangling"
    ]
    assert scan.dangling == () and not scan.closing.no_response and scan.verdict == "clean"
    (resumed_side,) = sorted((LANE / "kill-subagent" / "resumed").glob("*/subagents/agent-*.jsonl"))
    assert resumed_side.read_bytes() == side.read_bytes()


def test_parallel_results_on_side_branches_are_reattached() -> None:
    """§1.9: the first call's result hangs off a side branch, yet both calls count as answered."""
    scan = scan_file(Scenario("tool-parallel").transcript)
    assert scan.answered == scan.tool_uses == 2 and scan.dangling == ()
    assert scan.reattached and not set(scan.reattached) & set(scan.chain)


def test_compaction_boundary_pointing_outside_the_chain_is_not_corruption() -> None:
    scan = scan_file(Scenario("compact").transcript)
    (compaction,) = scan.compactions
    assert compaction.trigger == "manual" and compaction.logical_parent is not None
    assert scan.verdict == "clean"
    assert scan.chain[0] == compaction.line  # the chain starts at the boundary (parentUuid null)


def test_cutting_a_transcript_anywhere_never_raises() -> None:
    data = Scenario("kill-parallel-one-answered").transcript.read_bytes()
    for cut in range(0, len(data), max(1, len(data) // 300)):
        scan = scan_bytes(data[:cut], "cut.jsonl", None)
        assert scan.verdict in {"clean", "interrupted", "torn", "corrupt"}
        if cut and data[cut - 1 : cut] != b"\n":
            assert scan.verdict == "torn" or data[:cut].count(b"\n") == 0


def test_zstd_twins_are_the_committed_transcripts() -> None:
    """fixtures/claude/zstd holds exactly twins.twin() of every transcript (never edited by hand)."""
    from tests.claude._support import CLAUDE
    from tests.claude_lane.twins import sidecar_path, sidecars, sources, twin, twin_path

    for name in SCENARIOS:
        raw = Scenario(name).transcript
        packed = CLAUDE / "zstd" / name / (raw.name + ".zstd")
        assert packed.read_bytes() == twin(raw.read_bytes()), name
    subagents = [p for name in SCENARIOS for p in Scenario(name).subagents]
    assert subagents and set(subagents) <= set(sources(CLAUDE))
    for raw in subagents:
        assert twin_path(CLAUDE, raw).read_bytes() == twin(raw.read_bytes()), raw
    written = {p for p in (CLAUDE / "zstd").rglob("*.zstd")}
    assert written == {twin_path(CLAUDE, p) for p in sources(CLAUDE)}  # no stale twin
    metas = sidecars(CLAUDE)
    assert len(metas) == len(subagents)  # every recorded subagent has its meta file
    for meta in metas:
        assert sidecar_path(CLAUDE, meta).read_bytes() == meta.read_bytes(), meta
    copied = {p for p in (CLAUDE / "zstd").rglob("*.meta.json")}
    assert copied == {sidecar_path(CLAUDE, p) for p in metas}


def test_a_copy_continues_from_the_same_state_without_findings() -> None:
    """repair feeds its closers to a copy of the scanner: the copy must start where the file ended."""
    from sesstool.core.jsonline import dumps
    from sesstool.dialects.claude.closers import plan_closers
    from sesstool.dialects.claude.transcript import TranscriptScanner

    scenario = Scenario("kill-parallel-one-answered")
    data = scenario.transcript.read_bytes()
    lines = data.split(b"\n")[:-1]
    scanner = TranscriptScanner(str(scenario.transcript), scenario.session_id)
    scanner.feed_lines(lines, 0, 1)
    twin = scanner.copy()
    first = scanner.finish()
    assert first.verdict == "interrupted"
    closers = [dumps(c) for c in plan_closers(first.closing, first.session_id)]
    twin.feed_lines(closers, len(data), len(lines) + 1)
    after = twin.finish()
    assert after.verdict == "clean" and after.dangling == ()
    assert {f.rule for f in after.findings} == {"claude-writer-version"}
    assert scanner.finish().verdict == "interrupted"  # the original is untouched by its copy


def test_kept_lines_give_derive_its_entries() -> None:
    from sesstool.dialects.claude.transcript import TranscriptScanner

    scenario = Scenario("tool-parallel")
    scanner = TranscriptScanner(str(scenario.transcript), scenario.session_id, keep_raw=True)
    scanner.feed_lines(scenario.transcript.read_bytes().split(b"\n")[:-1], 0, 1)
    scan = scanner.finish()
    from tests.claude._support import entries_for

    assert scanner.entries(scan) == entries_for(scenario.transcript, scan)
