"""``inspect --timeline`` of a Codex rollout: one row per line (line, time, ``type/payload
type``, turn, calls and outputs with tool name and ``call_id``), fed to the sink by the rollout
scanner as it decodes each line (docs/format.md "Timeline"). Goldens of the timeline's bytes
(text and ``--json``) for recorded rollouts, raw and zstd alike; ``--turn`` and ``--last``;
standard input; hostile tool names. The memory test: tests/adversarial/test_timeline_rows.py."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.claude.test_inspect_timeline import json_timeline, rows, text_timeline
from tests.conftest import FIXTURES, ROOT, Sesstool, check_golden

CODEX = FIXTURES / "codex"
GOLDEN = [
    "tool-call",
    "two-turns",
    "parallel-calls",
    "kill-during-command",
    "sigint-during-command",
    "rollback",
]


def _log(name: str, zst: bool = False) -> Path:
    (log,) = sorted((CODEX / name).glob("rollout-*.jsonl.zst" if zst else "rollout-*.jsonl"))
    return log


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("name", GOLDEN)
def test_timeline_goldens(sesstool: Sesstool, name: str) -> None:
    """The timeline's bytes, text and JSON, equal the goldens, for the rollout and its zstd twin
    alike; the rest of the output is inspect's without ``--timeline``."""
    for path in (_log(name), _log(name, zst=True)):
        plain = sesstool("inspect", _rel(path))
        human = sesstool("inspect", "--timeline", _rel(path))
        assert human.exit_code == plain.exit_code == 0, human.stderr
        assert "\x1b" not in human.stdout
        assert human.stdout.startswith(plain.stdout.rstrip("\n") + "\n")
        check_golden(CODEX / name / "expected" / "raw.timeline.txt", text_timeline(human.stdout))
        doc = sesstool("inspect", "--json", "--timeline", _rel(path))
        assert doc.exit_code == 0, doc.stderr
        check_golden(CODEX / name / "expected" / "raw.timeline.json", json_timeline(doc.stdout))


@pytest.mark.parametrize("name", GOLDEN)
def test_a_row_per_line(sesstool: Sesstool, name: str) -> None:
    """Every rollout line has its row, in order, typed ``type/payload type``; the turns are the
    report's: task_started starts the next, task_complete/turn_aborted is the last row of it."""
    log = _log(name)
    found = rows(sesstool, "--timeline", _rel(log))
    lines = [orjson.loads(line) for line in log.read_bytes().splitlines() if line.strip()]
    assert [r["line"] for r in found] == list(range(1, len(lines) + 1))
    turn = 0
    for row, obj in zip(found, lines, strict=True):
        inner = obj["payload"].get("type") if isinstance(obj["payload"], dict) else None
        assert row["type"] == (f"{obj['type']}/{inner}" if isinstance(inner, str) else obj["type"])
        assert row["time"] == obj["timestamp"] and row["seq"] == row["line"] - 1
        if inner == "task_started":
            turn += 1
            assert row["turn"] == turn
        if inner in ("task_complete", "turn_aborted"):
            assert row["turn"] == turn


def test_calls_and_outputs_name_their_tool_and_id(sesstool: Sesstool) -> None:
    found = rows(sesstool, "--timeline", _rel(_log("parallel-calls")))
    calls = [r["summary"] for r in found if r["type"] == "response_item/function_call"]
    outputs = [r["summary"] for r in found if r["type"] == "response_item/function_call_output"]
    assert calls == ["call exec_command call_one", "call exec_command call_two"]
    assert outputs == ["result exec_command call_one", "result exec_command call_two"]
    aborted = rows(sesstool, "--timeline", _rel(_log("sigint-during-command")))
    assert [r["summary"] for r in aborted if r["type"] == "event_msg/turn_aborted"] == [
        "aborted: interrupted"
    ]


@pytest.mark.parametrize("name", ["two-turns", "rollback"])
def test_turn_and_last_narrow_the_rows(sesstool: Sesstool, name: str) -> None:
    log = _rel(_log(name))
    every = rows(sesstool, "--timeline", log)
    for turn in (1, 2):
        mine = [r for r in every if r["turn"] == turn]
        assert mine and rows(sesstool, "--turn", str(turn), log) == mine
        assert rows(sesstool, "--turn", str(turn), "--last", "2", log) == mine[-2:]
    assert rows(sesstool, "--last", "3", log) == every[-3:]
    assert rows(sesstool, "--turn", "3", log) == []


@pytest.mark.parametrize("name", ["tool-call", "sigint-during-command"])
def test_standard_input_gives_the_files_rows(sesstool: Sesstool, name: str) -> None:
    from_file = sesstool("inspect", "--timeline", _rel(_log(name)))
    for path in (_log(name), _log(name, zst=True)):
        piped = sesstool("inspect", "--timeline", "-", input=path.read_bytes())
        assert piped.exit_code == 0, piped.stderr
        assert text_timeline(piped.stdout) == text_timeline(from_file.stdout)
        doc = sesstool("inspect", "--json", "--timeline", "-", input=path.read_bytes())
        assert json.loads(doc.stdout)["timeline"] == rows(sesstool, "--timeline", _rel(_log(name)))


HOSTILE = "exec\x1b]0;x\x07\n\u2028\u202e"


def test_hostile_tool_names_are_escaped_in_the_text_view(sesstool: Sesstool, tmp_path: Path) -> None:
    lines = [orjson.loads(line) for line in _log("tool-call").read_bytes().splitlines()]
    for obj in lines:
        payload = obj["payload"]
        if payload.get("type") == "function_call":
            payload["name"] = HOSTILE
        if payload.get("call_id") == "call_echo":
            payload["call_id"] = "call_\u2028echo"
    log = tmp_path / _log("tool-call").name
    log.write_bytes(b"".join(orjson.dumps(obj) + b"\n" for obj in lines))
    text = text_timeline(sesstool("inspect", "--timeline", str(log)).stdout)
    assert "\x1b" not in text and "\x07" not in text and "\u2028" not in text and "\u202e" not in text
    assert len(text.splitlines()) == len(lines) + 3  # the title and two turn headings
    escaped = "exec\\x1b]0;x\\x07\\n\\u2028\\u202e call_\\u2028echo"
    assert sum(line.endswith(f"call {escaped}") for line in text.splitlines()) == 1
    assert sum(line.endswith(f"result {escaped}") for line in text.splitlines()) == 1
    found = rows(sesstool, "--timeline", str(log))  # JSON is exact: the name as written
    assert [r["summary"] for r in found if r["summary"].startswith("call ")] == [
        f"call {HOSTILE} call_\u2028echo"
    ]
