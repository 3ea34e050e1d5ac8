"""derive against what Claude Code 2.1.332 really sent on --resume (recorded by the lane)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sesstool.dialects.claude.derive import derive
from sesstool.dialects.claude.vocabulary import INTERRUPTED_TOOL_TEXT, NO_RESPONSE_TEXT
from tests.claude._support import RESUME_PROMPT, SCENARIOS, Scenario, entries_for, scan_file
from tests.claude_lane.judge import plain, resume_mismatch

BEST_EFFORT = {"damaged-orphan-result", "damaged-broken-parent"}  # the chain bridges a missing parent


@pytest.mark.parametrize("name", SCENARIOS)
def test_derive_equals_the_recorded_resume_request(name: str) -> None:
    scenario = Scenario(name)
    scan = scan_file(scenario.transcript)
    derived = derive(scan, entries_for(scenario.transcript, scan))
    messages = plain({"role": m.role, "content": m.content} for m in derived.messages)
    assert resume_mismatch(messages, scenario.resume_request, RESUME_PROMPT) is None
    assert bool(derived.best_effort) == (name in BEST_EFFORT), derived.best_effort


def test_what_resume_adds_is_marked() -> None:
    scenario = Scenario("kill-parallel-one-answered")
    scan = scan_file(scenario.transcript)
    derived = derive(scan, entries_for(scenario.transcript, scan))
    *_, results, closing = derived.messages
    assert results.origin == "mixed" and closing.origin == "resume"
    assert [b.get("is_error") for b in results.content] == [False, True]
    assert results.content[1]["content"] == INTERRUPTED_TOOL_TEXT
    assert closing.content == ({"type": "text", "text": NO_RESPONSE_TEXT},)


def test_judge_rejects_a_wrong_derivation() -> None:
    """The comparison can fail: a dropped message, an altered block, a missing prompt."""
    scenario = Scenario("tool-parallel")
    scan = scan_file(scenario.transcript)
    messages = plain(
        {"role": m.role, "content": m.content}
        for m in derive(scan, entries_for(scenario.transcript, scan)).messages
    )
    request = scenario.resume_request
    assert resume_mismatch(messages[:-2] + messages[-1:], request, RESUME_PROMPT) is not None
    altered = [dict(m) for m in messages]
    altered[3] = {"role": "user", "content": list(reversed(messages[3]["content"]))}
    assert resume_mismatch(altered, request, RESUME_PROMPT) is not None
    assert resume_mismatch(messages, request, "lane: something else") is not None


def test_parallel_results_are_sent_in_the_order_they_were_written(tmp_path: Path) -> None:
    """Measured by the lane: when the second of two parallel calls finishes first, its result
    is written first and the resume request carries the results in that order (not the calls')."""
    scenario = Scenario("tool-parallel")
    lines = scenario.transcript.read_bytes().split(b"\n")[:-1]
    results = [i for i, line in enumerate(lines) if b'"tool_result"' in line and b'"type":"user"' in line]
    assert len(results) == 2
    a, b = results
    lines[a], lines[b] = lines[b], lines[a]
    swapped = tmp_path / scenario.transcript.name
    swapped.write_bytes(b"".join(line + b"\n" for line in lines))
    scan = scan_file(swapped)
    derived = derive(scan, entries_for(swapped, scan))
    (results_message,) = [
        m for m in derived.messages if m.role == "user" and m.content[0]["type"] == "tool_result"
    ]
    assert [b["tool_use_id"] for b in results_message.content] == ["toolu_lane_two_b", "toolu_lane_two_a"]
