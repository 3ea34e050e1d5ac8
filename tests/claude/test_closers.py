"""repair's appended entries against what Claude Code 2.1.332 appended itself on resume."""

from __future__ import annotations

import json

import pytest

from sesstool.dialects.claude.closers import plan_closers
from tests.claude._support import RESUME_PROMPT, SCENARIOS, Scenario, scan_file
from tests.claude_lane.judge import appended_by_cli, shape


def _uuids(data: bytes) -> list[str]:
    found = []
    for raw in data.split(b"\n"):
        try:
            entry = json.loads(raw.lstrip(b"\0"))
        except ValueError:
            continue  # a torn or broken line
        if isinstance(entry, dict) and isinstance(entry.get("uuid"), str):
            found.append(entry["uuid"])
    return found


def _keys(entries: list[dict[str, object]]) -> list[list[str]]:
    out = []
    for entry in entries:
        message = entry.get("message")
        out.append([*entry, *(f"message.{k}" for k in message)] if isinstance(message, dict) else list(entry))
    return out


@pytest.mark.parametrize("name", SCENARIOS)
def test_closers_equal_what_the_cli_appends(name: str) -> None:
    """Entry for entry, key order included, ignoring uuid and timestamp values (§0, §4)."""
    scenario = Scenario(name)
    source = scenario.transcript.read_bytes()
    scan = scan_file(scenario.transcript)
    ours = plan_closers(scan.closing, scan.session_id)
    cli = appended_by_cli(source, scenario.resumed.read_bytes(), RESUME_PROMPT)
    known = {uuid: uuid for uuid in _uuids(source)}
    assert shape(ours, known) == shape(cli, known)
    assert _keys(ours) == _keys(cli)


def test_closers_are_deterministic_and_dated_by_the_file() -> None:
    scan = scan_file(Scenario("kill-parallel-one-answered").transcript)
    first, second = plan_closers(scan.closing, scan.session_id), plan_closers(scan.closing, scan.session_id)
    assert first == second
    assert {e["timestamp"] for e in first} == {scan.last_time}
    assert first[1]["parentUuid"] == first[0]["uuid"]
    assert first[0]["parentUuid"] == first[0]["sourceToolAssistantUUID"]


def test_nothing_to_append_for_a_clean_transcript() -> None:
    scan = scan_file(Scenario("tool-parallel").transcript)
    assert plan_closers(scan.closing, scan.session_id) == []
