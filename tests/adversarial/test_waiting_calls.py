"""Issue 11 item 1, second round: calls waiting for their output. A Codex rollout whose calls are
never answered once kept each call's whole item until the end of the scan (``inspect`` 52 → 118 MB
between 20,000 and 80,000 items, measured before this test, which runs 10,000 and 40,000); the
scanner now keeps a small record per waiting call and, past ``dialects.codex.waiting.SPILL_AT``
calls, moves the records to a spill file, reading them back whenever the end of the scan walks
them. A mini-agent log pairs a result with its call anywhere in the log: past
``core.scan_state.CALLS_SPILL_AT`` waiting calls its two tables (advertised, started) move to a
spill file (``store.spill.OrderedRows``). Peak RSS from the kernel for a child under an
address-space limit (``hostile_logs.run_measured``), never the clock; the child spills past
4,096 (``_spilling_child``), so tens of thousands of calls take the path millions take.

What is bounded: the scan and the commands that do not list every waiting call (``validate``,
whose findings stop at ``--max-findings``; ``derive``). ``inspect``, ``repair`` and ``fork``,
which print or write a closer per waiting call, walk those closers without holding them:
``test_streamed_closers.py`` (docs/reliability.md "Item 1, what grows with the log")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import run_measured
from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # twelve children on logs of up to 19.3 MB (dsh; Codex 18.2, mini 15.1)

MiB = 1 << 20
SPILL_AT = 4096
SEED = sorted((FIXTURES / "codex" / "tool-call").glob("*.jsonl"))[0]


def never_answered(where: Path, calls: int) -> Path:
    """The seed rollout's session_meta, then ``calls`` copies of its function_call with fresh
    call ids and item ids, none ever answered."""
    lines = [orjson.loads(line) for line in SEED.read_bytes().splitlines()]
    meta = next(e for e in lines if e["type"] == "session_meta")
    call = next(e for e in lines if e["type"] == "response_item" and e["payload"]["type"] == "function_call")
    path = where / f"rollout-{calls}.jsonl"
    with open(path, "wb") as f:
        f.write(orjson.dumps(meta) + b"\n")
        for n in range(calls):
            payload = {**call["payload"], "call_id": f"call_{n}", "id": f"fc_{n}"}
            f.write(orjson.dumps({**call, "payload": payload}) + b"\n")
    return path


def mini_never_answered(where: Path, calls: int) -> Path:
    """A mini-agent log of ``calls`` tool calls, each advertised by an assistant message and
    started by a tool/call, none ever answered."""
    path = where / f"mini-{calls}.jsonl"
    when = "2026-01-01T00:00:00.000Z"
    with open(path, "wb") as f:
        header = {"version": 1, "delegationDepth": 0, "id": "s"}
        f.write(orjson.dumps({"seq": 0, "time": when, "type": "session/header", "data": header}) + b"\n")
        seq = 1
        for n in range(calls):
            cid = f"call_{n}"
            function = {"name": "ls", "arguments": '{"path": "/some/where"}'}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": cid, "type": "function", "function": function}],
            }
            line = {"seq": seq, "time": when, "type": "assistant/message", "data": {"message": message}}
            call = {
                "seq": seq + 1,
                "time": when,
                "type": "tool/call",
                "data": {"callId": cid, "name": "ls", "arguments": "{}"},
            }
            f.write(orjson.dumps(line) + b"\n" + orjson.dumps(call) + b"\n")
            seq += 2
    return path


def dsh_never_answered(where: Path, calls: int) -> Path:
    """A dsh v4 log (v4: a fork may cut its open turn, §8.1) whose one open turn and step hold
    ``calls`` tool calls, each advertised by an assistant message and started by a tool/call,
    none ever answered (a crash: no step/end). Its last seq is ``2 * calls + 2``."""
    path = where / f"dsh-{calls}" / "session.v4.jsonl"
    path.parent.mkdir(exist_ok=True)
    source = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}
    user = {
        "id": "u1",
        "role": "user",
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": "go"}],
    }
    rows = [
        {
            "type": "session",
            "version": 4,
            "id": "s",
            "createdAt": 1000,
            "isSeeded": False,
            "delegationDepth": 0,
        },
        {"type": "turn/start", "seq": 0, "time": 1001, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 1002, "data": {"turn": 1, "step": 1}},
        {"type": "user/message", "seq": 2, "time": 1003, "data": user, "surfaceOp": "append"},
    ]
    arguments = '{"path": "/some/where"}'
    with open(path, "wb") as f:
        f.write(b"".join(orjson.dumps(row) + b"\n" for row in rows))
        for n in range(calls):
            cid, seq, when = f"call_{n}", 3 + 2 * n, 1004 + n
            block = {"type": "tool-call", "id": cid, "name": "ls", "arguments": arguments}
            message = {"id": f"a{n}", "role": "assistant", "content": [block], "source": source}
            said = {"turn": 1, "step": 1, "message": message, "stream": []}
            call = {"turn": 1, "step": 1, "callId": cid, "name": "ls", "arguments": arguments}
            f.write(
                orjson.dumps(
                    {
                        "type": "assistant/message",
                        "seq": seq,
                        "time": when,
                        "data": said,
                        "surfaceOp": "append",
                    }
                )
                + b"\n"
                + orjson.dumps({"type": "tool/call", "seq": seq + 1, "time": when, "data": call})
                + b"\n"
            )
    return path


COMMANDS = {
    "validate": ["validate", "--format", "json"],
    "derive": ["derive", "--format", "jsonl"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
@pytest.mark.parametrize(
    "make", [never_answered, mini_never_answered, dsh_never_answered], ids=["codex", "mini", "dsh"]
)
def test_waiting_calls_do_not_grow_memory(
    tmp_path: Path, name: str, make: Callable[[Path, int], Path]
) -> None:
    """N and 4N never-answered calls, N = 10,000: the peak within 2 MiB (spilled; rerun at
    2a80eb3: Codex validate 33.61 → 33.75 MiB, derive 37.12 → 37.14; mini validate 33.94 → 33.85,
    derive 35.57 → 35.40; dsh validate 33.76 → 33.89, derive 35.11 → 35.09). Before, measured at
    20,000 → 80,000 calls (not by this test): Codex, the whole items, 58 → 150 MB and 62 → 160 MB;
    mini 40 → 70 MB and 44 → 76 MB."""
    peaks = []
    for calls in (10_000, 40_000):
        log = make(tmp_path, calls)
        run = run_measured(
            [*COMMANDS[name], str(log)],
            address_space=2 << 30,
            cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT)},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, run.stderr
        if name == "validate":
            found = orjson.loads(run.stdout)["files"][0]
            assert found["verdict"]["verdict"] == "interrupted", found["verdict"]
            if make is never_answered:  # a finding per call, past --max-findings counted
                assert len(found["findings"]) == 1000 and found["findings_dropped"] == calls - 1000
            elif make is dsh_never_answered:  # the step is still open: its calls are pending
                assert [f["rule"] for f in found["findings"]] == ["open-turn"], found["findings"]
            else:  # one finding names the first five
                assert f"{calls} tool call(s) never answered: call_0, call_1" in run.stdout.decode()
        peaks.append(run.peak_rss)
    assert peaks[1] - peaks[0] < 2 * MiB, [round(p / MiB, 2) for p in peaks]
