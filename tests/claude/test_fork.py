"""fork's byte-level copy: only the top-level sessionId and the forkedFrom stamp change."""

from __future__ import annotations

import json

from sesstool.dialects.claude.fork import fork_line
from tests.claude._support import Scenario

NEW = "11111111-2222-4333-8444-555555555555"


def test_every_entry_of_the_session_gets_the_new_id_and_nothing_else_changes() -> None:
    scenario = Scenario("tool-parallel")
    old = scenario.session_id
    for raw in scenario.transcript.read_bytes().split(b"\n")[:-1]:
        copied, changed = fork_line(raw, old, NEW)
        before, after = json.loads(raw), json.loads(copied)
        if "sessionId" not in before:
            assert copied == raw and not changed
            continue
        assert changed and after["sessionId"] == NEW
        stamp = after.pop("forkedFrom", None)
        if isinstance(before.get("uuid"), str) and before["type"] in (
            "user",
            "assistant",
            "attachment",
            "system",
        ):
            assert stamp == {"sessionId": old, "messageUuid": before["uuid"]}
        else:
            assert stamp is None
        after["sessionId"] = old
        assert after == before


def test_nested_session_ids_are_not_touched() -> None:
    line = b'{"type":"user","uuid":"u","tool":{"sessionId":"A"},"sessionId":"A"}'
    copied, changed = fork_line(line, "A", "B")
    assert changed
    stamp = b'{"forkedFrom":{"sessionId":"A","messageUuid":"u"},'
    assert copied == stamp + b'"type":"user","uuid":"u","tool":{"sessionId":"A"},"sessionId":"B"}'


def test_other_sessions_and_broken_lines_are_copied_verbatim() -> None:
    for line in (b'{"type":"user","uuid":"u","sessionId":"C"}', b'{"type":"us', b"\x00\x00"):
        assert fork_line(line, "A", "B") == (line, False)
