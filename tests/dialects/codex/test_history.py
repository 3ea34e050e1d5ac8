"""``derive`` against the ground truth: the input of the first model request the real Codex
0.171 sent when it resumed each fixture (recorded by the lane in ``resume.json``)."""

from __future__ import annotations

import pytest

from sesstool.dialects.codex.history import EXCLUDED, synthetic_output_id
from tests.dialects.codex._support import derive_bytes, fixture_dirs, resume_record, rollout, scan

ACCEPTED = [d.name for d in fixture_dirs() if resume_record(d.name)["accepted"]]
# What Codex added after the history because the rollout lacked it (excluded by design).
CONTEXT_UPDATES = {"session-meta-repeated": [("developer", "<permissions instructions")]}
REFUSED = [d.name for d in fixture_dirs() if not resume_record(d.name)["accepted"]]


def test_the_lane_recorded_refusals_and_acceptances() -> None:
    assert sorted(REFUSED) == [
        "empty",
        "legacy-pre-envelope",
        "missing-session-meta",
        "session-meta-invalid",
        "unknown-history-mode",
    ]
    assert len(ACCEPTED) >= 20


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", ACCEPTED)
def test_derive_is_what_codex_sends_on_resume(name: str, zstd: bool) -> None:
    sent = resume_record(name)["input"]
    derived = derive_bytes(rollout(name, zstd).read_bytes())
    # Codex sends: [base instructions] + the rebuilt history + [context updates] + [the prompt].
    count = len(derived.items)
    assert list(derived.items) == sent[1 : 1 + count]
    updates = sent[1 + count : -1]
    assert [(i["role"], i["content"][0]["text"].split(">")[0]) for i in updates] == CONTEXT_UPDATES.get(
        name, []
    )


@pytest.mark.parametrize("name", ACCEPTED)
def test_what_derive_excludes_is_what_codex_builds_from_configuration(name: str) -> None:
    sent = resume_record(name)["input"]
    first, last = sent[0], sent[-1]
    assert first["role"] == "developer"
    assert first["content"][0]["text"].startswith("You are the sesstool lane's test agent.")
    assert last["role"] == "user"
    assert last["content"] == [{"type": "input_text", "text": resume_record(name)["prompt"]}]
    assert len(EXCLUDED) == 3


@pytest.mark.parametrize("name", REFUSED)
def test_rollouts_codex_refuses_are_not_loadable(name: str) -> None:
    assert scan(rollout(name)).verdict in ("corrupt", "unsupported")


def test_synthetic_outputs_carry_codex_ids() -> None:
    derived = derive_bytes(rollout("kill-parallel-half").read_bytes())
    assert derived.synthetic_outputs == 1
    kinds = [(i["type"], i.get("call_id")) for i in derived.items[-4:]]
    assert kinds == [
        ("function_call", "call_fast"),
        ("function_call", "call_slow"),
        ("function_call_output", "call_slow"),
        ("function_call_output", "call_fast"),
    ]
    call = derived.items[-3]
    assert derived.items[-2]["id"] == synthetic_output_id("fco", call["id"])
    assert derived.items[-2]["output"] == "aborted"


def test_orphans_are_dropped_and_counted() -> None:
    derived = derive_bytes(rollout("orphan-output").read_bytes())
    assert derived.dropped_orphans == 1
    assert all(i["type"] != "function_call_output" for i in derived.items)


def test_compaction_and_rollback_are_applied() -> None:
    assert derive_bytes(rollout("auto-compaction").read_bytes()).base_from_compaction
    rolled = derive_bytes(rollout("rollback").read_bytes())
    assert rolled.rollbacks_applied == 1
    texts = [c.get("text") for i in rolled.items for c in i.get("content", [])]
    assert "second question" not in texts and "first question" in texts
