"""Issue 11 item 1(c) for the line-addressed dialects: ``inspect --timeline`` of a Claude Code
transcript or a Codex rollout prints a row per entry (line) and holds none of them — the
scanner hands each row to the sink as it decodes the line, the printer (text) or the JSON
writer takes it from there. The same log of N and of 4N entries, N = 20,000; the children's
peak RSS read from the kernel under an address-space limit (``hostile_logs.run_measured``),
never timed. The Claude children run with the spill thresholds lowered (``lowered.py``) so that
the scan itself is flat at both sizes.

The control: the same rows kept, as inspect keeps a stream's (``-``: read once, held up to
``--max-timeline``), grow by far more than the bound — what these tests would see if the rows
of a file were held. On the code before, the rows were not made at all: the row counts fail."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.adversarial.hostile_logs import MiB, run_measured
from tests.adversarial.lowered import LoweredRuns, assert_flat, entries_to, lowered_runs
from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # 12 children, the larger on logs of 20 to 40 MB

N = 20_000  # entries (lines)
SESSION = "5f0c0a3e-0000-4000-8000-0000000000bb"
COMMANDS = {"text": ["inspect", "--timeline"], "json": ["inspect", "--json", "--timeline"]}
HELD = ["inspect", "--json", "--timeline", "--max-timeline", str(8 * N), "-"]


def claude_turns(entries: int) -> Iterator[dict[str, Any]]:
    """Turns of four entries: a prompt, a call, its result, a reply; each the child of the last."""
    parent: str | None = None
    base = {"isSidechain": False, "sessionId": SESSION, "version": "2.1.332", "cwd": "/w"}
    for i in range(entries // 4):
        when = f"2026-01-01T00:{i // 6000 % 60:02d}:{i // 100 % 60:02d}.{i % 100:02d}0Z"
        tool = f"toolu_{i}"
        contents: list[tuple[str, Any]] = [
            ("user", f"prompt {i}"),
            ("assistant", [{"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "true"}}]),
            ("user", [{"type": "tool_result", "tool_use_id": tool, "content": "ok"}]),
            ("assistant", [{"type": "text", "text": f"done {i}"}]),
        ]
        for k, (kind, content) in enumerate(contents):
            ident = str(uuid.UUID(int=(i << 4) + k + 1))
            message: dict[str, Any] = {"role": kind, "content": content}
            if kind == "assistant":
                message.update(
                    {"id": f"msg_{i}_{k}", "type": "message", "model": "m", "stop_reason": "end_turn"}
                )
            yield {
                **base,
                "type": kind,
                "uuid": ident,
                "parentUuid": parent,
                "timestamp": when,
                "message": message,
            }
            parent = ident


def codex_rollout(path: Path, entries: int) -> Path:
    """The tool-call fixture's session_meta, then turns of six lines (task_started, the user's
    message, a call, its output, the reply, task_complete) with fresh turn and call ids."""
    seed = sorted((FIXTURES / "codex" / "tool-call").glob("rollout-*.jsonl"))[0]
    lines = [orjson.loads(line) for line in seed.read_bytes().splitlines()]

    def first(kind: str, inner: str, **match: str) -> dict[str, Any]:
        return next(
            o for o in lines
            if o["type"] == kind and o["payload"].get("type") == inner
            and all(o["payload"].get(k) == v for k, v in match.items())
        )  # fmt: skip

    meta = next(o for o in lines if o["type"] == "session_meta")
    unit = [
        first("event_msg", "task_started"),
        first("response_item", "message", role="user"),
        first("response_item", "function_call"),
        first("response_item", "function_call_output"),
        first("response_item", "message", role="assistant"),
        first("event_msg", "task_complete"),
    ]
    with open(path, "wb") as f:
        f.write(orjson.dumps(meta) + b"\n")
        for i in range((entries - 1) // len(unit)):
            for obj in unit:
                payload = {**obj["payload"]}
                for key in ("turn_id", "root_turn_id"):
                    if key in payload:
                        payload[key] = f"turn_{i}"
                if "call_id" in payload:
                    payload["call_id"] = f"call_{i}"
                f.write(orjson.dumps({**obj, "payload": payload}) + b"\n")
    return path


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "timeline-rows")


def _logs(where: LoweredRuns, dialect: str) -> list[Path]:
    if dialect == "claude":
        return [where.log(f"claude-{n}", entries_to(claude_turns(n)), session=SESSION) for n in (N, 4 * N)]
    logs = []
    for n in (N, 4 * N):
        log = where.where / f"codex-{n}" / f"rollout-2026-01-01T00-00-00-{SESSION}.jsonl"
        if not log.exists():
            log.parent.mkdir()
            codex_rollout(log, n)
        logs.append(log)
    return logs


def _lines(log: Path) -> int:
    with open(log, "rb") as f:
        return sum(1 for _ in f)


@pytest.mark.parametrize("dialect", ["claude", "codex"])
@pytest.mark.parametrize("view", list(COMMANDS))
def test_timeline_rows_are_streamed(where: LoweredRuns, dialect: str, view: str) -> None:
    """A row per line at both sizes; the peak of 4N within 2 MiB of N's."""
    peaks = []
    for log in _logs(where, dialect):
        run = where.run(log, COMMANDS[view], ok=(0,))
        out = run.stdout
        if view == "json":
            found = json.loads(out)["timeline"]
            assert len(found) == _lines(log) and found[-1]["line"] == _lines(log)
        else:
            assert out.count(b"\n    line ") == _lines(log)
        peaks.append(run.peak_rss)
    assert_flat(*peaks)


@pytest.mark.parametrize("dialect", ["claude", "codex"])
def test_the_control_rows_held_grow(where: LoweredRuns, dialect: str) -> None:
    """The rows of a stream are kept (``_Kept``): from N to 4N they grow the peak by far more
    than the bound the streamed rows stay within, so the flat peaks above are the rows streamed."""
    peaks = []
    for log in _logs(where, dialect):
        run = run_measured(
            HELD,
            address_space=2 << 30,
            cwd=log.parent,
            stdin=log,
            env={"PYTHONPATH": f"{where.where / 'site'}:{ROOT}"},
        )
        assert run.exit_code == 0, run.stderr
        assert len(json.loads(run.stdout)["timeline"]) == _lines(log)
        peaks.append(run.peak_rss)
    assert peaks[1] - peaks[0] > 8 * MiB, [round(p / MiB, 2) for p in peaks]
