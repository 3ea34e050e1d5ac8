"""The pure fork planner (spec §8, §4.4, §12 E5): boundary, open-turn rule, header, marker,
closers — fed through the fork scanner in memory, no files written."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest

from sesstool.core.encode import encode_record
from sesstool.core.errors import InputError, InsideOpenTurn, UnsupportedError, UsageError
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
from sesstool.dialects import registry
from sesstool.dialects.base import ForkInput
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
    dialect = kwargs.pop("dialect", "dsh")
    if dialect != "dsh":  # the dialect object plans from the scans (ForkInput)
        return registry.by_name(dialect).plan_fork(ForkInput(result, result, boundary, **kwargs))
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
    # dsh records carry no session id: the seed is copied byte for byte, never rewritten
    assert (plan.rewrite, plan.child_id) == (None, "session-2")
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
    result_closer = next(iter(plan.closers))
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


def test_refusal_carries_the_turn_start_for_the_boundary_before_it() -> None:
    """The engine names seq 23 (before turn 2's turn/start at 24) as the nearest valid boundary."""
    with pytest.raises(InsideOpenTurn) as info:
        plan_at(e1(), 26)
    assert info.value.turn_seq == 24


@pytest.mark.parametrize("boundary", [0, 1, 2])
def test_v4_inside_an_open_turn_is_allowed(boundary: int) -> None:
    parent = _tiny(4)
    plan = plan_at(parent, boundary)
    assert [*plan.closers][-1]["data"]["reason"] == {"kind": "forked"}
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


# -- limits and exact refusals (issue 12: each of these let a mutant through) --------------------

MAX_SAFE_INT = 9007199254740991


@pytest.mark.parametrize("version", [0, 2, 4])
@pytest.mark.parametrize("created_at", [0, MAX_SAFE_INT])
def test_created_at_at_its_limits(version: int, created_at: int) -> None:
    parent = _tiny(version)
    plan = plan_at(parent, 3, created_at=created_at)
    assert plan.header["createdAt"] == created_at
    assert plan.marker is not None and plan.marker["time"] == (13 if version == 4 else created_at)
    assert_valid_clean(child_lines(parent, plan))


def test_exact_refusals_of_bad_inputs() -> None:
    parent = _tiny(0)
    for bad in (-1, MAX_SAFE_INT + 1):
        with pytest.raises(UsageError) as info:
            plan_at(parent, 3, created_at=bad)
        assert str(info.value) == f"createdAt {bad} is not a non-negative safe integer (epoch ms)"
    with pytest.raises(UsageError) as info:
        plan_at(parent, 3, created_at=True)  # a bool is not an epoch
    assert str(info.value) == "createdAt True is not a non-negative safe integer (epoch ms)"
    with pytest.raises(UsageError) as info:
        plan_at(parent, 3, child_id="")
    assert str(info.value) == "the child session id must not be empty"
    result, _ = scan(parent, 2)
    assert result.header is not None
    with pytest.raises(ValueError, match=r"^open state ends at seq 2, not at the boundary 3$"):
        plan_fork(result.header, 3, result.open, child_id="c", created_at=1, seed_ends_with_end_seed=False)


@pytest.mark.parametrize("version", [5, -1])
def test_versions_sesstool_cannot_write_are_refused(version: int) -> None:
    result, _ = scan(_tiny(0), 3)
    assert result.header is not None
    header = dataclasses.replace(result.header, version=version)
    with pytest.raises(UnsupportedError) as info:
        plan_fork(header, 3, result.open, child_id="c", created_at=1, seed_ends_with_end_seed=False)
    assert str(info.value) == f"cannot fork a v{version} log: sesstool writes v0–v4"


def test_a_parent_without_an_id_cannot_be_named() -> None:
    result, _ = scan(_tiny(2), 3)
    assert result.header is not None
    header = dataclasses.replace(result.header, id=None)
    with pytest.raises(
        InputError, match=r"^the source header has no valid id: a child cannot name its parent$"
    ):
        plan_fork(header, 3, result.open, child_id="c", created_at=1, seed_ends_with_end_seed=False)


def test_a_v4_boundary_without_a_time_is_refused() -> None:
    result, _ = scan(_tiny(4), 3)
    assert result.header is not None
    state = dataclasses.replace(result.open, last_time=None)
    with pytest.raises(InputError) as info:
        plan_fork(result.header, 3, state, child_id="c", created_at=1, seed_ends_with_end_seed=False)
    assert str(info.value) == "event 3 has no valid time: the v4 marker takes its time (§8.3)"


def test_open_turn_refusal_message_in_full() -> None:
    with pytest.raises(UnsupportedError) as info:
        plan_at(_tiny(1), 2)
    assert info.value.message == (
        "fork boundary 2 is inside open turn 1 (its turn/start is seq 0): a v1 log cannot be forked "
        "inside an open turn (spec §8.1; only v4 closes it with forked closers)"
    )
    # the fork engine completes it with the nearest valid boundaries (tests/cli/test_fork.py)
    assert isinstance(info.value, InsideOpenTurn) and (info.value.turn, info.value.turn_seq) == (1, 0)
    with pytest.raises(InsideOpenTurn) as refused:
        plan_at(e1(), 26)
    assert refused.value.turn == 2


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ((0, 2), "--at 1 falls inside a packed chunk row holding seqs 0–2; a fork copies whole records "
         "byte for byte: choose a boundary of at least 2"),
        ((1, 3), "--at 1 falls inside a packed chunk row holding seqs 1–3; a fork copies whole records "
         "byte for byte: choose a boundary of at most 0 or at least 3"),
        ((4, 6), "--at 1 falls inside a packed chunk row holding seqs 4–6; a fork copies whole records "
         "byte for byte: choose a boundary of at most 3 or at least 6"),
    ],
)  # fmt: skip
def test_split_row_messages(row: tuple[int, int], message: str) -> None:
    facts = BoundaryFacts(9, 9, 9, None, row)
    with pytest.raises(UsageError) as info:
        check_split_row(facts, 1)
    assert str(info.value) == message


def test_boundary_refusal_messages() -> None:
    with pytest.raises(UsageError) as info:
        check_at(4, 3)
    assert str(info.value) == "--at 4 is past the end: the last committed event is seq 3"
    with pytest.raises(UsageError) as info:
        check_at(0, None)
    assert str(info.value) == "--at 0: the log has no committed events"
    check_at(0, 0)
    with pytest.raises(UsageError) as info:
        default_boundary(BoundaryFacts(None, None, None, None, None))
    assert str(info.value) == "the log has no committed events: there is nothing to fork"
    with pytest.raises(UsageError) as info:
        default_boundary(BoundaryFacts(2, None, None, None, None))
    assert str(info.value) == (
        "the log has no completed turn (no turn/end in seq 0–2): pass --at SEQ to choose the fork boundary"
    )


def test_boundary_facts_of_a_log_without_a_turn_end() -> None:
    _, facts = scan(_tiny(0)[:4])
    assert facts == BoundaryFacts(2, None, None, None, None)
    _, facts = scan(_tiny(0))
    assert facts == BoundaryFacts(3, 3, 3, None, None)


# -- the mini-agent dialect --------------------------------------------------------------------

MINI_BASIC = (FIXTURES / "mini" / "basic" / "session.jsonl").read_bytes().splitlines()


def test_mini_fork_at_1_the_first_event_after_the_header() -> None:
    result, _ = scan(MINI_BASIC, 1)
    assert result.dialect == "mini"
    plan = plan_at(MINI_BASIC, 1, dialect="mini", created_at=0)
    assert plan.header == {
        "seq": 0,
        "time": "1970-01-01T00:00:00.000Z",
        "type": "session/header",
        "data": {"version": 1, "delegationDepth": 0, "id": "child", "parentSession": "mini-1", "forkedAt": 1},
    }
    assert plan.marker is None
    assert plan.closers == (
        {
            "seq": 2,
            "time": "2026-03-01T10:00:01.000Z",
            "type": "turn/end",
            "data": {"turn": 1, "reason": "forked"},
        },
    )
    assert (plan.boundary, plan.open_turn, plan.open_turn_seq, plan.events) == (1, 1, 1, 3)
    child = [
        encode_record(plan.header)[:-1],
        *MINI_BASIC[1:2],
        *(encode_record(r)[:-1] for r in plan.closers),
    ]
    assert_valid_clean(child)


@pytest.mark.parametrize(
    ("created_at", "time"),
    [(0, "1970-01-01T00:00:00.000Z"), (1772359200007, "2026-03-01T10:00:00.007Z"),
     (253402300799999, "9999-12-31T23:59:59.999Z")],
)  # fmt: skip
def test_mini_header_time_is_created_at_in_iso_8601(created_at: int, time: str) -> None:
    assert plan_at(MINI_BASIC, 2, dialect="mini", created_at=created_at).header["time"] == time


def test_mini_refusals() -> None:
    with pytest.raises(UsageError) as info:
        plan_at(MINI_BASIC, 0, dialect="mini")
    assert str(info.value) == "--at must be at least 1: seq 0 is the header event"
    for bad in (-1, 253402300799999 + 1, MAX_SAFE_INT):
        with pytest.raises(UsageError) as info:
            plan_at(MINI_BASIC, 1, dialect="mini", created_at=bad)
        assert str(info.value) == (
            f"createdAt {bad} cannot be a mini-agent header time: an ISO-8601 string holds epoch ms "
            "0 to 253402300799999 (year 9999)"
        )
    with pytest.raises(UsageError, match=r"^the child session id must not be empty$"):
        plan_at(MINI_BASIC, 1, dialect="mini", child_id="")
    result, _ = scan(MINI_BASIC, 1)
    assert result.header is not None
    with pytest.raises(ValueError, match=r"^open state ends at seq 1, not at the boundary 2$"):
        registry.by_name("mini").plan_fork(ForkInput(result, result, 2, "c", 1, False))
