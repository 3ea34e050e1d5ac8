"""The pure fork planner (spec §8, §4.4, §12 E5): boundary, open-turn rule, header, marker,
closers — fed through the fork scanner in memory, no files written."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from sesstool.core.encode import encode_record
from sesstool.core.errors import UnsupportedError, UsageError
from sesstool.core.fork_plan import (
    BoundaryFacts,
    ForkPlan,
    boundary_facts,
    check_at,
    check_split_row,
    default_boundary,
)
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import ReadSummary
from sesstool.core.rules import Severity
from sesstool.dialects.dsh.closers import TEXT_FORKED_NOT_STARTED, TEXT_FORKED_UNKNOWN
from sesstool.dialects.dsh.fork import plan_fork
from sesstool.dialects.registry import open_scanner
from tests.conftest import FIXTURES

DSH = FIXTURES / "dsh"
T = 1760000000000


def scan(lines: list[bytes], at: int | None = None) -> tuple[ScanResult, BoundaryFacts]:
    scanner = open_scanner("mem", ScanOptions(at_seq=at))
    scanner.feed_lines(lines, 0, 1, None)
    size = sum(map(len, lines)) + len(lines)
    summary = ReadSummary("raw", size, size, len(lines), 0, None, None, at is not None, None)
    result = scanner.finish(summary)
    return result, boundary_facts(result)


def plan_at(lines: list[bytes], boundary: int, **kwargs: Any) -> ForkPlan:
    result, facts = scan(lines, boundary)
    assert result.header is not None
    kwargs.setdefault("child_id", "child")
    kwargs.setdefault("created_at", 5)
    kwargs.setdefault("seed_ends_with_end_seed", facts.last_end_seed == boundary)
    return plan_fork(result.header, boundary, result.open, **kwargs)


def lines_of(records: list[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(r) for r in records]


def child_lines(parent: list[bytes], plan: ForkPlan) -> list[bytes]:
    """What the child holds: its header, the seed lines verbatim, the appended records."""
    seed = parent[1 : plan.boundary + 2]
    return [encode_record(plan.header)[:-1], *seed, *(encode_record(r)[:-1] for r in plan.appended)]


def assert_valid_clean(lines: list[bytes]) -> ScanResult:
    scanner = open_scanner("child", ScanOptions())
    scanner.feed_lines(lines, 0, 1, None)
    size = sum(map(len, lines)) + len(lines)
    result = scanner.finish(ReadSummary("raw", size, size, len(lines), 0, None, None, False, None))
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    assert errors == [] and result.verdict == "clean", (errors, result.verdict_reason)
    return result


def e1() -> list[bytes]:
    """§12 E1 (header + seq 0–29), as the unknown-ignorable fixture holds it before E7."""
    return (DSH / "unknown-ignorable" / "session.jsonl").read_bytes().splitlines()[:31]


# -- E5: v0 child of E1 at 23 -------------------------------------------------------------------


def test_e5_v0_child_of_e1_at_23() -> None:
    parent = e1()
    plan = plan_at(parent, 23, child_id="session-2", created_at=1760000100000)
    assert encode_record(plan.header) == (
        b'{"type":"session","version":0,"id":"session-2","createdAt":1760000100000,'
        b'"cwd":"/home/u/proj","parentSession":"s-demo","seedLength":24,"delegationDepth":0}\n'
    )
    # the marker's time is the child's createdAt (E5 shows "now", a millisecond later)
    assert plan.marker == {"type": "session/end-seed", "seq": 24, "time": 1760000100000, "data": {}}
    assert plan.closers == () and plan.inherited == 24 and plan.events == 25
    child = child_lines(parent, plan)
    # the forked-child fixture is E5: same header, same seed bytes, marker at 24
    fixture = (DSH / "forked-child" / "session.jsonl").read_bytes().splitlines()
    assert child[:25] == fixture[:25]
    assert orjson.loads(child[25]) == {**orjson.loads(fixture[25]), "time": 1760000100000}
    result = assert_valid_clean(child)
    assert result.stats.lineage.inherited_events == 24


# -- E5: v4 fork inside an open turn -------------------------------------------------------------


def _msg(seq: int, turn: int, step: int, content: list[Any]) -> dict[str, Any]:
    return {
        "type": "assistant/message",
        "seq": seq,
        "time": T + seq,
        "data": {
            "turn": turn,
            "step": step,
            "message": {
                "id": f"m-a{seq}",
                "role": "assistant",
                "content": content,
                "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"},
            },
            "stream": [],
        },
        "surfaceOp": "append",
    }


def _user(seq: int, text: str) -> dict[str, Any]:
    return {
        "type": "user/message",
        "seq": seq,
        "time": T + seq,
        "data": {
            "id": f"m-u{seq}",
            "role": "user",
            "source": {"kind": "user"},
            "content": [{"type": "text", "text": text}],
        },
        "surfaceOp": "append",
    }


def v4_parent() -> list[bytes]:
    """A v4 parent shaped like E5's: turn 1 completes at seq 23; turn 2 opens at 24, its
    assistant message (27) asks for tool call c9, started at 28 — and nothing after."""
    header = {
        "type": "session",
        "version": 4,
        "id": "s-demo",
        "createdAt": T,
        "cwd": "/home/u/proj",
        "isSeeded": False,
        "delegationDepth": 0,
    }
    ev: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": T, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": T + 1, "data": {"turn": 1, "step": 1}},
        _user(2, "List the files"),
        {
            "type": "request/header",
            "seq": 3,
            "time": T + 3,
            "data": {
                "header": {"config": {"provider": "deepseek", "model": "deepseek-chat"}},
                "reason": "initial",
            },
        },
        {
            "type": "request/context",
            "seq": 4,
            "time": T + 4,
            "data": {"provider": "deepseek", "model": "deepseek-chat", "contextWindow": 131072},
        },
        _msg(5, 1, 1, [{"type": "text", "text": "step 1"}]),
        {"type": "step/end", "seq": 6, "time": T + 6, "data": {"turn": 1, "step": 1}},
    ]
    for step in range(2, 7):  # seq 7–21: five more steps
        s = len(ev)
        ev += [
            {"type": "step/start", "seq": s, "time": T + s, "data": {"turn": 1, "step": step}},
            _msg(s + 1, 1, step, [{"type": "text", "text": f"step {step}"}]),
            {"type": "step/end", "seq": s + 2, "time": T + s + 2, "data": {"turn": 1, "step": step}},
        ]
    ev += [
        {
            "type": "request/context",
            "seq": 22,
            "time": T + 22,
            "data": {"provider": "deepseek", "model": "deepseek-chat", "contextWindow": 131072},
        },
        {"type": "turn/end", "seq": 23, "time": T + 23, "data": {"turn": 1, "reason": {"kind": "completed"}}},
        {"type": "turn/start", "seq": 24, "time": T + 5000, "data": {"turn": 2}},
        {"type": "step/start", "seq": 25, "time": T + 5001, "data": {"turn": 2, "step": 1}},
        _user(26, "Delete tmp"),
        _msg(
            27, 2, 1, [{"type": "tool-call", "id": "c9", "name": "bash", "arguments": '{"cmd":"rm -r tmp"}'}]
        ),
        {
            "type": "tool/call",
            "seq": 28,
            "time": T + 5300,
            "data": {
                "turn": 2,
                "step": 1,
                "callId": "c9",
                "name": "bash",
                "arguments": '{"cmd":"rm -r tmp"}',
            },
        },
    ]
    assert [e["seq"] for e in ev] == list(range(29))
    return lines_of([header, *ev])


def test_e5_v4_fork_inside_an_open_turn() -> None:
    parent = v4_parent()
    full, _ = scan(parent)
    assert full.verdict == "interrupted" and full.open.turn == 2
    plan = plan_at(parent, 28, child_id="session-3", created_at=1760000200000)
    assert plan.open_turn == 2 and plan.open_turn_seq == 24
    assert encode_record(plan.header) == (
        b'{"type":"session","version":4,"id":"session-3","createdAt":1760000200000,'
        b'"cwd":"/home/u/proj","parentSession":"s-demo","isSeeded":true,"delegationDepth":0}\n'
    )
    when = T + 5300  # the time of seq 28
    text = TEXT_FORKED_UNKNOWN.replace('"', '\\"').encode()
    expected = [
        b'{"type":"session/end-seed","seq":29,"time":%d,"data":{"inherited":true}}' % when,
        b'{"type":"tool/result","seq":30,"time":%d,"data":{"turn":2,"step":1,"message":{"id":'
        b'"forked-tool-result-c9-30","role":"tool","toolCallId":"c9","isError":true,"source":'
        b'{"kind":"tool","callId":"c9"},"content":[{"type":"text","text":"%s"}]},"error":'
        b'{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}},"surfaceOp":"append",'
        b'"sourceEventSeqs":[28]}' % (when, text),
        b'{"type":"step/end","seq":31,"time":%d,"data":{"turn":2,"step":1}}' % when,
        b'{"type":"turn/end","seq":32,"time":%d,"data":{"turn":2,"reason":{"kind":"forked"}}}' % when,
    ]
    assert [encode_record(r)[:-1] for r in plan.appended] == expected
    assert TEXT_FORKED_UNKNOWN.startswith(
        "The history inherited by this branch records this tool call starting but does not "
        "include its result. The parent session may have completed it after the fork point."
    )
    assert plan.inherited == 29 and plan.events == 33
    result = assert_valid_clean(child_lines(parent, plan))
    assert result.stats.lineage.inherited_events == 29
    assert dict(result.stats.turn_ends) == {"completed": 1, "forked": 1}


def test_v4_fork_before_the_call_started_gives_not_started() -> None:
    parent = v4_parent()
    plan = plan_at(parent, 27)
    result_closer = plan.closers[0]
    assert result_closer["data"]["error"]["code"] == "TOOL_NOT_STARTED"
    assert "sourceEventSeqs" not in result_closer
    assert result_closer["data"]["message"]["content"][0]["text"] == TEXT_FORKED_NOT_STARTED
    assert [c["seq"] for c in plan.appended] == [28, 29, 30, 31]
    assert {c["time"] for c in plan.appended} == {T + 27}
    assert_valid_clean(child_lines(parent, plan))


def test_v4_fork_between_steps_and_right_after_turn_start() -> None:
    parent = v4_parent()
    plan = plan_at(parent, 24)  # turn/start only: no step open
    assert [c["type"] for c in plan.closers] == ["turn/end"]
    assert_valid_clean(child_lines(parent, plan))
    plan = plan_at(parent, 23)  # a closed turn: no closers at all
    assert plan.closers == () and plan.open_turn is None
    assert_valid_clean(child_lines(parent, plan))


# -- per-version header and marker ---------------------------------------------------------------


def _tiny(version: int, extra: dict[str, Any] | None = None) -> list[bytes]:
    header: dict[str, Any] = {"type": "session", "version": version, "id": "p", "createdAt": 1}
    if version >= 2:
        header["isSeeded"] = False
    header["delegationDepth"] = 0
    header.update(extra or {})
    return lines_of(
        [
            header,
            {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
            {"type": "step/start", "seq": 1, "time": 11, "data": {"turn": 1, "step": 1}},
            {"type": "step/end", "seq": 2, "time": 12, "data": {"turn": 1, "step": 1}},
            {"type": "turn/end", "seq": 3, "time": 13, "data": {"turn": 1, "reason": {"kind": "completed"}}},
        ]
    )


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_header_and_marker_per_version(version: int) -> None:
    parent = _tiny(version)
    plan = plan_at(parent, 3, child_id="c", created_at=99)
    lineage: dict[str, Any] = {"seedLength": 4} if version <= 1 else {"isSeeded": True}
    assert list(plan.header.items()) == [
        ("type", "session"),
        ("version", version),
        ("id", "c"),
        ("createdAt", 99),
        ("parentSession", "p"),
        *lineage.items(),
        ("delegationDepth", 0),
    ]
    data = {} if version <= 1 else {"inherited": True}
    time = 13 if version == 4 else 99  # v4: the boundary event's time (§8.3); else "now"
    assert plan.marker == {"type": "session/end-seed", "seq": 4, "time": time, "data": data}
    assert plan.closers == ()
    result = assert_valid_clean(child_lines(parent, plan))
    assert result.stats.lineage.seeded and result.stats.lineage.inherited_events == 4


@pytest.mark.parametrize("version", [0, 2, 4])
def test_lineage_fields_not_inherited(version: int) -> None:
    parent = _tiny(
        version,
        {
            "cwd": "/w",
            "parentSession": "grand",
            "origin": "subagent",
            "delegationDepth": 2,
            "agentPreset": "x",
        },
    )
    plan = plan_at(parent, 3)
    assert plan.header["cwd"] == "/w"
    assert plan.header["parentSession"] == "p"
    assert plan.header["delegationDepth"] == 0
    assert "origin" not in plan.header and "agentPreset" not in plan.header
    assert list(plan.header)[:5] == ["type", "version", "id", "createdAt", "cwd"]


def _ending_in_end_seed(version: int) -> list[bytes]:
    data = {} if version <= 1 else {"inherited": True}
    lines = _tiny(version)
    return [*lines, orjson.dumps({"type": "session/end-seed", "seq": 4, "time": 14, "data": data})]


def test_v0_seed_ending_in_an_end_seed_gets_no_second_marker() -> None:
    parent = _ending_in_end_seed(0)
    plan = plan_at(parent, 4)
    assert plan.marker is None and plan.appended == ()
    assert plan.header["seedLength"] == 5 and plan.events == 5
    assert_valid_clean(child_lines(parent, plan))


@pytest.mark.parametrize("version", [2, 3, 4])
def test_v2_plus_always_appends_a_tagged_marker(version: int) -> None:
    parent = _ending_in_end_seed(version)
    plan = plan_at(parent, 4)
    assert plan.marker is not None and plan.marker["seq"] == 5
    assert plan.marker["data"] == {"inherited": True}
    result = assert_valid_clean(child_lines(parent, plan))
    assert result.stats.lineage.inherited_events == 5


def test_bad_plan_inputs() -> None:
    parent = _tiny(0)
    with pytest.raises(UsageError):
        plan_at(parent, 3, child_id="")
    with pytest.raises(UsageError):
        plan_at(parent, 3, created_at=-1)
    with pytest.raises(UsageError):
        plan_at(parent, 3, created_at=2**53)
    result, _ = scan(parent, 2)
    assert result.header is not None
    with pytest.raises(ValueError):  # the open state must be the one at the boundary
        plan_fork(result.header, 3, result.open, child_id="c", created_at=1, seed_ends_with_end_seed=False)


# -- refusal inside an open turn -----------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("boundary", [0, 1, 2])
def test_refused_inside_an_open_turn_before_v4(version: int, boundary: int) -> None:
    with pytest.raises(UnsupportedError) as info:
        plan_at(_tiny(version), boundary)
    message = str(info.value)
    assert "inside open turn 1" in message and "turn/start is seq 0" in message
    assert info.value.exit_status == 4
    assert info.value.address is not None and info.value.address.seq == 0


def test_refusal_suggests_the_boundary_before_the_turn() -> None:
    with pytest.raises(UnsupportedError, match="or at most 23"):
        plan_at(e1(), 26)


@pytest.mark.parametrize("boundary", [0, 1, 2])
def test_v4_inside_an_open_turn_is_allowed(boundary: int) -> None:
    parent = _tiny(4)
    plan = plan_at(parent, boundary)
    assert plan.closers[-1]["data"]["reason"] == {"kind": "forked"}
    assert_valid_clean(child_lines(parent, plan))


# -- the default boundary ------------------------------------------------------------------------


def test_default_boundary_is_the_end_of_the_log_after_a_completed_turn() -> None:
    _, facts = scan(e1())
    assert facts.last_turn_end == 29 and default_boundary(facts) == 29


def test_default_boundary_stops_before_the_next_turn() -> None:
    _, facts = scan(e1()[:28])  # seq 0–26: turn 2 open
    assert facts.last_seq == 26 and default_boundary(facts) == 23


def _after_turn(*records: dict[str, Any]) -> list[bytes]:
    return _tiny(0) + lines_of([{"seq": 4 + i, "time": 20 + i, **r} for i, r in enumerate(records)])


def test_default_boundary_extends_over_between_turn_events() -> None:
    compaction = [
        {"type": "compaction/start", "data": {"compactionId": "c", "turn": None}},
        {"type": "session/title", "data": {"title": "t"}},
        {"type": "compaction/end", "data": {"compactionId": "c", "turn": None}},
    ]
    _, facts = scan(_after_turn(*compaction))
    assert default_boundary(facts) == 6
    user = {
        "type": "user/message",
        "data": {"id": "u", "role": "user", "source": {"kind": "user"}, "content": []},
        "surfaceOp": "append",
    }
    _, facts = scan(_after_turn(*compaction, user, *compaction))
    assert default_boundary(facts) == 6
    spliced = {"type": "agent/inbox/spliced", "data": {}}
    _, facts = scan(_after_turn(compaction[1], spliced, compaction[1]))
    assert default_boundary(facts) == 4


def test_default_boundary_needs_a_completed_turn() -> None:
    with pytest.raises(UsageError, match="--at"):
        default_boundary(scan(_tiny(0)[:4])[1])
    with pytest.raises(UsageError, match="no committed events"):
        default_boundary(scan(_tiny(0)[:1])[1])


def test_at_must_name_a_committed_event() -> None:
    check_at(3, 3)
    with pytest.raises(UsageError, match="last committed event is seq 3"):
        check_at(4, 3)
    with pytest.raises(UsageError):
        check_at(0, None)


def test_a_boundary_inside_a_packed_row_is_refused() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 4,
        "time0": 20,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
    }
    parent = [*_tiny(0), orjson.dumps(row)]  # a row after the turn: malformed, but not an error
    for at in (4, 5):
        _, facts = scan(parent, at)
        assert facts.split_row == (4, 6)
        with pytest.raises(UsageError, match="at most 3 or at least 6"):
            check_split_row(facts, at)
    for at in (3, 6):
        _, facts = scan(parent, at)
        assert facts.split_row is None
        check_split_row(facts, at)
