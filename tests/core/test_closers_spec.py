"""The closers inspect predicts for the two crash fixtures equal spec §12 E2 and E3 exactly."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from sesstool.core.model import OpenState, PendingCall
from sesstool.dialects.dsh import DIALECT as DSH
from sesstool.dialects.dsh.closers import (
    TEXT_FORKED_NOT_STARTED,
    TEXT_FORKED_UNKNOWN,
    TEXT_NOT_STARTED,
    TEXT_OUTCOME_UNKNOWN,
    Cause,
    plan_closers,
)
from tests.conftest import Sesstool
from tests.core.test_repair_plan import scan_of

E2_CLOSERS = [
    '{"type":"tool/result","seq":5,"time":1760000000301,"data":{"turn":1,"step":1,"message":{"id":'
    '"interrupted-tool-result-call_7-5","role":"user","source":{"kind":"tool","callId":"call_7"},'
    '"content":[{"type":"tool-result","toolCallId":"call_7","isError":true,"content":[{"type":"text",'
    '"text":"The tool call was interrupted after it was recorded, but no result was durably recorded. '
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external state "
    'or ask the user. Do not retry blindly."}]}]},"error":{"name":"ToolOutcomeUnknownError","code":'
    '"TOOL_OUTCOME_UNKNOWN"}},"surfaceOp":"append","sourceEventSeqs":[4]}',
    '{"type":"step/end","seq":6,"time":1760000000301,"data":{"turn":1,"step":1}}',
    '{"type":"turn/end","seq":7,"time":1760000000301,"data":{"turn":1,"reason":{"kind":"interrupted"}}}',
]

E3_CLOSERS = [
    '{"type":"tool/result","seq":6,"time":1760000000350,"data":{"turn":1,"step":1,"message":{"id":'
    '"interrupted-tool-result-c2-6","role":"user","source":{"kind":"tool","callId":"c2"},"content":'
    '[{"type":"tool-result","toolCallId":"c2","isError":true,"content":[{"type":"text","text":"The '
    "tool call was interrupted before the Harness recorded it as started. Retry it if it is still "
    'needed."}]}]},"error":{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"}},"surfaceOp":'
    '"append"}',
    '{"type":"step/end","seq":7,"time":1760000000350,"data":{"turn":1,"step":1}}',
    '{"type":"turn/end","seq":8,"time":1760000000350,"data":{"turn":1,"reason":{"kind":"interrupted"}}}',
]


@pytest.mark.parametrize("suffix", ["", ".zstd"])
@pytest.mark.parametrize(
    ("scenario", "expected"),
    [("crash-dangling-call", E2_CLOSERS), ("crash-not-started", E3_CLOSERS)],
)
def test_predicted_closers_equal_spec(
    sesstool: Sesstool, scenario: str, expected: list[str], suffix: str
) -> None:
    result = sesstool("inspect", "--json", f"fixtures/dsh/{scenario}/session.jsonl{suffix}")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    closers = [json.dumps(c, separators=(",", ":"), ensure_ascii=False) for c in doc["repair"]["closers"]]
    # Byte-exact: key order, ids, codes, texts, seqs, times and sourceEventSeqs.
    assert closers == expected
    # crash-dangling-call ends in a torn write; crash-not-started ends after a whole record
    assert (
        doc["verdict"]["verdict"]
        == {"crash-dangling-call": "torn", "crash-not-started": "interrupted"}[scenario]
    )


# -- the planner on open states the fixtures do not reach (issue 12) -----------------------------


def _state(**changes: Any) -> OpenState:
    base = OpenState(turn=3, turn_seq=10, step=2, pending=(), last_seq=14, last_time=900, events=15)
    return dataclasses.replace(base, **changes)


def test_nothing_open_needs_no_closers() -> None:
    assert plan_closers(_state(turn=None, step=None), 0) == []


def test_an_open_turn_with_no_step_gets_only_its_turn_end() -> None:
    assert plan_closers(_state(step=None), 2) == [
        {"type": "turn/end", "seq": 15, "time": 900, "data": {"turn": 3, "reason": {"kind": "interrupted"}}}
    ]


def test_closers_of_a_state_without_events_start_at_seq_0() -> None:
    closers = plan_closers(_state(last_seq=None, step=None), 0)
    assert [c["seq"] for c in closers] == [0]


def test_after_seq_and_time_override_where_closers_start() -> None:
    closers = plan_closers(_state(), 4, "forked", after_seq=20, time=77)
    assert [(c["type"], c["seq"], c["time"]) for c in closers] == [("step/end", 21, 77), ("turn/end", 22, 77)]
    assert closers[-1]["data"] == {"turn": 3, "reason": {"kind": "forked"}}
    closers = plan_closers(_state(), 4, after_seq=0)
    assert [c["seq"] for c in closers] == [1, 2]


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize("cause", ["interrupted", "forked"])
def test_each_pending_call_gets_its_result_in_order(version: int, cause: Cause) -> None:
    pending = (PendingCall("a", 2, 12, "read"), PendingCall("b", 2, None, "write"))
    closers = plan_closers(_state(pending=pending), version, cause)
    assert [(c["type"], c["seq"]) for c in closers] == [
        ("tool/result", 15),
        ("tool/result", 16),
        ("step/end", 17),
        ("turn/end", 18),
    ]
    started, unstarted = closers[0], closers[1]
    assert started["sourceEventSeqs"] == [12] and "sourceEventSeqs" not in unstarted
    assert started["data"]["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert unstarted["data"]["error"] == {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    assert [c["data"]["step"] for c in (started, unstarted)] == [2, 2]
    assert started["data"]["message"]["id"] == f"{cause}-tool-result-a-15"
    assert unstarted["data"]["message"]["id"] == f"{cause}-tool-result-b-16"
    texts = {
        "interrupted": (TEXT_OUTCOME_UNKNOWN, TEXT_NOT_STARTED),
        "forked": (TEXT_FORKED_UNKNOWN, TEXT_FORKED_NOT_STARTED),
    }[cause]
    for closer, text in zip((started, unstarted), texts, strict=True):
        message = closer["data"]["message"]
        if version >= 4:
            assert (
                message["role"] == "tool"
                and message["toolCallId"] == closer["data"]["message"]["source"]["callId"]
            )
            assert message["content"] == [{"type": "text", "text": text}] and message["isError"] is True
        else:
            assert message["role"] == "user"
            assert message["content"][0]["content"] == [{"type": "text", "text": text}]
            assert message["content"][0]["isError"] is True


def test_closers_for_a_scan_without_a_header_are_none() -> None:
    assert DSH.closers(scan_of(b"")) == []  # an empty file: no header, no version
