"""Codex rollouts of hostile shapes for the memory and operation-count tests (issue 11 item 1,
the Codex shapes stop 29's audit did not try): many turns, many ``thread_rolled_back``, turns
that hold no user message kept across rollbacks, and rollouts forked from others (a forked
rollout holds its parent's lines after its own ``session_meta``, agent-formats §3.3: "later
ones may be copies from fork history"). The lines are small (the rollback fixture's
``session_meta``, then minimal items) so that 4N units stay cheap to write and read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import FIXTURES

SEED = sorted((FIXTURES / "codex" / "rollback").glob("*.jsonl"))[0]
THREAD = "01a231e1-985a-79f2-b0b7-1aef24b0bd09"


def meta(thread: str = THREAD, forked_from: str | None = None) -> dict[str, Any]:
    """The rollback fixture's ``session_meta`` (as thread ``thread``)."""
    line: dict[str, Any] = orjson.loads(SEED.read_bytes().split(b"\n", 1)[0])
    payload = {**line["payload"], "id": thread, "session_id": thread}
    if forked_from is not None:
        payload["forked_from_id"] = forked_from
    return {**line, "payload": payload}


def _at(i: int) -> str:
    """A timestamp ``i`` tenths of a second after the fixture's first."""
    s, tenth = divmod(i, 10)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-12-01T{13 + h % 10:02d}:{m:02d}:{s:02d}.{tenth}00Z"


class Lines:
    """Rollout lines with increasing ordinals and timestamps."""

    def __init__(self) -> None:
        self.n = 0

    def line(self, kind: str, payload: dict[str, Any]) -> bytes:
        self.n += 1
        return (
            orjson.dumps({"timestamp": _at(self.n), "ordinal": self.n, "type": kind, "payload": payload})
            + b"\n"
        )

    def event(self, event: str, **fields: Any) -> bytes:
        return self.line("event_msg", {"type": event, **fields})

    def turn(self, i: int, user: bool = True, call: bool = True, complete: bool = True) -> Iterator[bytes]:
        """``task_started``, a user message (``user``), an answer, a call and its output
        (``call``), ``task_complete`` (``complete``)."""
        turn_id = f"turn-{i}"
        yield self.event("task_started", turn_id=turn_id)
        if user:
            text = [{"type": "input_text", "text": f"q{i}"}]
            yield self.line("response_item", {"type": "message", "role": "user", "content": text})
        answer = [{"type": "output_text", "text": f"a{i}"}]
        yield self.line("response_item", {"type": "message", "role": "assistant", "content": answer})
        if call:
            args = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{i}"}
            yield self.line("response_item", args)
            yield self.line(
                "response_item", {"type": "function_call_output", "call_id": f"c{i}", "output": "ok"}
            )
        if complete:
            yield self.event("task_complete", turn_id=turn_id)

    def rollback(self, turns: int = 1) -> bytes:
        return self.event("thread_rolled_back", num_turns=turns)


def turns(path: Path, n: int) -> None:
    """``n`` completed turns, each a user message, an answer, a call and its output."""
    lines = Lines()
    with path.open("wb") as out:
        out.write(orjson.dumps(meta()) + b"\n")
        for i in range(n):
            out.writelines(lines.turn(i))


def rolled_back_one_by_one(path: Path, n: int) -> None:
    """``n`` turns, then ``n`` ``thread_rolled_back`` of one turn each (the history emptied a
    turn at a time)."""
    lines = Lines()
    with path.open("wb") as out:
        out.write(orjson.dumps(meta()) + b"\n")
        for i in range(n):
            out.writelines(lines.turn(i, call=False))
        for _ in range(n):
            out.write(lines.rollback())


def rolled_back_past_survivors(path: Path, n: int) -> None:
    """``n`` pairs of turns, a user turn then one without a user message (which a rollback keeps),
    then ``n`` rollbacks of one turn each: each reaches back past every survivor after it."""
    lines = Lines()
    with path.open("wb") as out:
        out.write(orjson.dumps(meta()) + b"\n")
        for i in range(n):
            out.writelines(lines.turn(2 * i, call=False))
            out.writelines(lines.turn(2 * i + 1, user=False, call=False))
        for _ in range(n):
            out.write(lines.rollback())


def turn_and_rollback(path: Path, n: int) -> None:
    """``n`` times: two turns, then a rollback of one (the history grows a turn at a time, and
    each rollback rewrote all of it)."""
    lines = Lines()
    with path.open("wb") as out:
        out.write(orjson.dumps(meta()) + b"\n")
        for i in range(n):
            out.writelines(lines.turn(2 * i, call=False))
            out.writelines(lines.turn(2 * i + 1, call=False))
            out.write(lines.rollback())


def fork_chain(path: Path, n: int) -> None:
    """A rollout forked ``n`` times over: each fork's ``session_meta`` (naming the thread it was
    forked from), then a turn (a later ``session_meta`` starts the history afresh)."""
    lines = Lines()
    with path.open("wb") as out:
        out.write(orjson.dumps(meta()) + b"\n")
        for i in range(n):
            thread = f"01a231e1-985a-79f2-b0b7-{i:012x}"
            out.write(orjson.dumps(meta(thread, forked_from=THREAD)) + b"\n")
            out.writelines(lines.turn(i))
