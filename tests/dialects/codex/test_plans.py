"""Repair closers and fork session_meta for Codex rollouts: exact records, the derived-history
invariant, idempotence, determinism; rollout names."""

from __future__ import annotations

import re
import uuid
from typing import Any

import orjson
import pytest

from sesstool.dialects.codex.history import synthetic_output_id
from sesstool.dialects.codex.naming import fork_name, new_thread_id, parse_name, repaired_name
from sesstool.dialects.codex.plans import encode_line, fork_session_meta, plan_closers
from tests.dialects.codex._support import derive_bytes, plaintext, rollout, scan, scan_bytes

INTERRUPTED = [
    "kill-during-command",
    "sigterm-during-command",
    "kill-parallel-half",
    "kill-mid-stream",
    "custom-tool-dangling",
    "local-shell-dangling",
    "torn-tail",
]


def repaired(name: str) -> tuple[bytes, list[dict[str, Any]]]:
    source = rollout(name).read_bytes()
    result = scan_bytes(source)
    closers = list(plan_closers(result.facts))
    prefix = plaintext(source)[: result.tail.committed_bytes]
    return prefix + b"".join(encode_line(r) for r in closers), closers


def test_closers_of_a_killed_command_are_what_codex_synthesises() -> None:
    result = scan(rollout("kill-during-command"))
    (call,) = result.facts.dangling
    (turn,) = result.facts.open_turns
    output, aborted = plan_closers(result.facts)
    assert output == {
        "timestamp": result.facts.last_time,
        "ordinal": result.facts.last_ordinal + 1 if result.facts.last_ordinal is not None else None,
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "id": synthetic_output_id("fco", call.item_id),
            "call_id": "call_slow",
            "output": "aborted",
        },
    }
    assert aborted["type"] == "event_msg"
    assert aborted["payload"]["type"] == "turn_aborted"
    assert aborted["payload"]["reason"] == "interrupted"
    assert aborted["payload"]["turn_id"] == turn.turn_id
    assert aborted["ordinal"] == output["ordinal"] + 1


def test_custom_tool_call_gets_a_custom_output() -> None:
    closers = plan_closers(scan(rollout("custom-tool-dangling")).facts)
    assert closers[0]["payload"]["type"] == "custom_tool_call_output"
    assert closers[0]["payload"]["id"].startswith("ctco_")


@pytest.mark.parametrize("name", INTERRUPTED)
def test_repair_balances_and_is_idempotent(name: str) -> None:
    data, closers = repaired(name)
    assert closers
    after = scan_bytes(data)
    assert after.verdict == "clean", after.findings
    assert not after.facts.dangling and not after.facts.open_turns
    assert plan_closers(after.facts) == []
    assert repaired(name)[0] == data  # deterministic


def _moved_to_end(items: list[dict[str, Any]], synthetic_ids: set[str]) -> list[dict[str, Any]]:
    kept = [i for i in items if i.get("id") not in synthetic_ids]
    return kept + [i for i in items if i.get("id") in synthetic_ids]


@pytest.mark.parametrize("name", INTERRUPTED)
def test_repair_keeps_the_derived_history(name: str) -> None:
    """The appended outputs are the items Codex synthesises; a persisted output stays where it
    is written, so in a batch of calls it comes after the batch's real outputs (the only change,
    docs/format.md "Codex rollouts")."""
    source = derive_bytes(rollout(name).read_bytes())
    data, closers = repaired(name)
    after = derive_bytes(data)
    synthetic = {r["payload"]["id"] for r in closers if r["type"] == "response_item"}
    assert list(after.items) == _moved_to_end(list(source.items), synthetic)
    if name != "kill-parallel-half":
        assert after.items == source.items
    assert after.synthetic_outputs == 0


def test_fork_session_meta() -> None:
    first = orjson.loads(rollout("text").read_bytes().split(b"\n", 1)[0])
    child = fork_session_meta(first, "01a00000-0000-7000-8000-000000000001")
    assert child["payload"]["id"] == "01a00000-0000-7000-8000-000000000001"
    assert child["payload"]["session_id"] == "01a00000-0000-7000-8000-000000000001"
    assert child["payload"]["forked_from_id"] == first["payload"]["id"]
    assert child["timestamp"] == first["timestamp"]
    assert {k: v for k, v in child["payload"].items() if k not in ("id", "session_id", "forked_from_id")} == {
        k: v for k, v in first["payload"].items() if k not in ("id", "session_id", "forked_from_id")
    }


def test_names() -> None:
    name = rollout("text").name
    stamp, thread, zstd = parse_name(name) or ("", "", True)
    assert not zstd and thread in name and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d", stamp)
    assert parse_name(name + ".zst") == (stamp, thread, True)
    assert parse_name("session.jsonl") is None
    assert repaired_name(name, True) == name[: -len(".jsonl")] + ".repaired.jsonl.zst"
    child = new_thread_id(1_796_132_823_000, 0x1234_5678_9ABC_DEF0_1234)
    assert uuid.UUID(child).version == 7
    assert fork_name(name, child, False) == f"rollout-{stamp}-{child}.jsonl"
    assert fork_name("foo.jsonl", child, True) == f"{child}.jsonl.zst"
