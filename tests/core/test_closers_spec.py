"""The closers inspect predicts for the two crash fixtures equal spec §12 E2 and E3 exactly."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Sesstool

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
