"""The scenarios the Codex CLI lane records, each in its own Codex home (issue 16).

``record_all`` runs every scenario with the real CLI and returns, per scenario, the rollout it
left and the input of the first model request a ``codex exec resume`` of it sends (the ground
truth of "what Codex rebuilds on resume", agent-formats §0). ``mutations`` derives the defective
rollouts (torn tail, NUL run, ...) from real ones by byte edits, each described where it is made.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.codex_cli.driver import (
    Home,
    Kill,
    Lane,
    Run,
    all_of,
    reap,
    when_file,
    when_rollout_has,
    when_served,
)
from tests.codex_cli.mock_responses import (
    Event,
    Pause,
    Step,
    created,
    message_item,
    reply,
    shell_call,
    text_reply,
)

Json = dict[str, Any]
SLOW = "touch started && sleep 30 && echo finished"
RESUME_PROMPT = "continue from where you stopped"


@dataclass(slots=True)
class Recorded:
    """One scenario's outcome: the rollout (a copy, with the CLI's own file name)."""

    name: str
    home: Home
    rollout: Path
    thread_id: str
    runs: list[Run]


def _single(
    lane: Lane,
    name: str,
    prompt: str,
    replies: list[list[Step]],
    kill: Kill | None = None,
    extra: str = "",
    tables: str = "",
) -> Recorded:
    home = lane.new_home(name, extra=extra, tables=tables)
    run = lane.exec(home, prompt, replies, kill=kill)
    reap(home)
    if run.thread_id is None:
        raise AssertionError(f"{name}: no thread.started event\n{run.stderr}")
    return Recorded(name, home, home.rollout_of(run.thread_id), run.thread_id, [run])


def _text(lane: Lane) -> Recorded:
    return _single(lane, "text", "say hello", [text_reply("Hello! How can I help?")])


def _tool_call(lane: Lane) -> Recorded:
    return _single(
        lane,
        "tool-call",
        "print a greeting with echo",
        [reply(shell_call("call_echo", "echo hello-from-tool")), text_reply("It printed hello-from-tool.")],
    )


def _parallel(lane: Lane) -> Recorded:
    return _single(
        lane,
        "parallel-calls",
        "run two commands at once",
        [
            reply(shell_call("call_one", "echo one"), shell_call("call_two", "echo two")),
            text_reply("Both commands ran."),
        ],
    )


def _kill_command(lane: Lane) -> Recorded:
    return _single(
        lane,
        "kill-during-command",
        "run the slow command",
        [reply(shell_call("call_slow", SLOW))],
        kill=Kill(signal.SIGKILL, all_of(when_file("started"), when_rollout_has("call_slow"))),
    )


def _kill_parallel_half(lane: Lane) -> Recorded:
    return _single(
        lane,
        "kill-parallel-half",
        "run a fast and a slow command",
        [reply(shell_call("call_fast", "echo fast"), shell_call("call_slow", SLOW))],
        kill=Kill(signal.SIGKILL, all_of(when_file("started"), when_rollout_has('"function_call_output"'))),
    )


def _kill_mid_stream(lane: Lane) -> Recorded:
    item = message_item("This answer is cut off before it", "msg_partial")
    steps: list[Step] = [
        created("resp_partial"),
        Event({"type": "response.output_item.added", "item": {**item, "content": []}}),
        Event(
            {"type": "response.output_text.delta", "item_id": "msg_partial", "delta": "This answer is cut"}
        ),
        Pause(None),
    ]
    return _single(
        lane,
        "kill-mid-stream",
        "write a long answer",
        [steps],
        kill=Kill(signal.SIGKILL, when_served(1), settle=1.5),
    )


def _signal_command(name: str, signum: int) -> Callable[[Lane], Recorded]:
    def run(lane: Lane) -> Recorded:
        return _single(
            lane,
            name,
            "run the slow command",
            [reply(shell_call("call_slow", SLOW))],
            kill=Kill(signum, all_of(when_file("started"), when_rollout_has("call_slow"))),
        )

    return run


def _two_turns(lane: Lane) -> Recorded:
    rec = _single(lane, "two-turns", "first question", [text_reply("First answer.")])
    second = lane.exec(rec.home, "second question", [text_reply("Second answer.")], resume=rec.thread_id)
    rec.runs.append(second)
    return rec


def _auto_compaction(lane: Lane) -> Recorded:
    # Usage above model_auto_compact_token_limit makes the next turn compact first (§0: 10 works).
    rec = _single(
        lane,
        "auto-compaction",
        "first question",
        [text_reply("First answer.")],
        extra="model_auto_compact_token_limit = 10",
    )
    second = lane.exec(
        rec.home,
        "second question",
        [
            text_reply("Summary: the user asked a first question and got a first answer."),
            text_reply("Second answer, after the compaction."),
        ],
        resume=rec.thread_id,
    )
    rec.runs.append(second)
    return rec


def _compressed(lane: Lane) -> Recorded:
    """A rollout idle for over 7 days is rewritten as .jsonl.zst by the compression worker the
    next CLI start runs (feature local_thread_store_compression, agent-formats §3.1); the worker
    runs at most once in a while, so its run marker is aged too."""
    tables = "[features]\nlocal_thread_store_compression = true\n"
    rec = _single(
        lane, "compressed", "say hello", [text_reply("Hello from a compressed rollout.")], tables=tables
    )
    old = time.time() - 10 * 86400
    os.utime(rec.rollout, (old, old))
    marker = rec.home.path / ".tmp" / "rollout-compression.lock"
    if marker.exists():
        os.utime(marker, (time.time() - 3 * 86400,) * 2)
    other = lane.exec(rec.home, "another thread", [text_reply("ok")])
    rec.runs.append(other)
    rec.rollout = rec.home.rollout_of(rec.thread_id)
    if not rec.rollout.name.endswith(".jsonl.zst"):
        raise AssertionError(f"compressed: the CLI did not compress {rec.rollout}")
    return rec


SCENARIOS: dict[str, Callable[[Lane], Recorded]] = {
    "text": _text,
    "tool-call": _tool_call,
    "parallel-calls": _parallel,
    "kill-during-command": _kill_command,
    "kill-parallel-half": _kill_parallel_half,
    "kill-mid-stream": _kill_mid_stream,
    "sigint-during-command": _signal_command("sigint-during-command", signal.SIGINT),
    "sigterm-during-command": _signal_command("sigterm-during-command", signal.SIGTERM),
    "two-turns": _two_turns,
    "auto-compaction": _auto_compaction,
    "compressed": _compressed,
}


def resume_input(lane: Lane, home: Home, thread_id: str) -> tuple[Run, list[Json]]:
    """Resume the thread once (compaction disabled) and return the first request's input."""
    config = home.path / "config.toml"
    text = config.read_text()
    config.write_text(
        text.replace("model_auto_compact_token_limit = 10", "model_auto_compact_token_limit = 100000000")
    )
    try:
        run = lane.exec(home, RESUME_PROMPT, [text_reply("Resumed.")], resume=thread_id)
    finally:
        config.write_text(text)
    inputs = run.model_inputs()
    return run, (inputs[0] if inputs else [])


def copy_home(src: Home, dest: Path) -> Home:
    """A fresh Codex home holding only the config and the rollouts of ``src`` (its state
    databases record absolute rollout paths, so a full copy would resume the original file).
    Same working directory, so the resumed turn sees the cwd the thread recorded."""
    home = dest / "codex-home"
    home.mkdir(parents=True)
    shutil.copyfile(src.path / "config.toml", home / "config.toml")
    for rollout in src.rollouts():
        target = home / rollout.relative_to(src.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rollout, target)
    return Home(path=home, work=src.work)


# --- mutations: defective rollouts made from real ones ----------------------------------------


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


def torn_tail(data: bytes) -> bytes:
    """The last line cut in half: what a crash mid-write leaves (no final newline)."""
    lines = _lines(data)
    last = lines[-1]
    return b"\n".join(lines[:-1]) + b"\n" + last[: len(last) // 2]


def nul_run(data: bytes) -> bytes:
    """A run of 600 NUL bytes as a line of its own after line 8 (a lost page after a crash)."""
    lines = _lines(data)
    return b"\n".join([*lines[:8], b"\0" * 600, *lines[8:]]) + b"\n"


def interleaved(data: bytes) -> bytes:
    """Two writers interleaved (openai/codex #24425): the first half of line 9 written, then
    line 9 again in full after it on the same physical line."""
    lines = _lines(data)
    half = lines[8][: len(lines[8]) // 2]
    return b"\n".join([*lines[:8], half + lines[8], *lines[9:]]) + b"\n"


def without_session_meta(data: bytes) -> bytes:
    return b"\n".join(_lines(data)[1:]) + b"\n"


def _edit_lines(data: bytes, edit: Callable[[Json], Json | None]) -> bytes:
    out = []
    for line in _lines(data):
        obj = json.loads(line)
        new = edit(obj)
        if new is None:
            continue
        out.append(
            line if new is obj else json.dumps(new, separators=(",", ":"), ensure_ascii=False).encode()
        )
    return b"\n".join(out) + b"\n"


def orphan_output(data: bytes) -> bytes:
    """The function_call line removed: its output is left without a call."""

    def edit(obj: Json) -> Json | None:
        payload = obj.get("payload") or {}
        return None if obj.get("type") == "response_item" and payload.get("type") == "function_call" else obj

    return _edit_lines(data, edit)


def as_custom_tool_call(data: bytes) -> bytes:
    """The dangling function_call rewritten as a custom_tool_call (apply_patch, freeform input)."""

    def edit(obj: Json) -> Json | None:
        payload = obj.get("payload") or {}
        if obj.get("type") == "response_item" and payload.get("type") == "function_call":
            new_payload = {
                "type": "custom_tool_call",
                "id": payload["id"].replace("fc_", "ctc_"),
                "status": "completed",
                "call_id": payload["call_id"],
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n",
            }
            return {**obj, "payload": new_payload}
        return obj

    return _edit_lines(data, edit)


def as_local_shell_call(data: bytes) -> bytes:
    """The dangling function_call rewritten as a local_shell_call (the older shell tool)."""

    def edit(obj: Json) -> Json | None:
        payload = obj.get("payload") or {}
        if obj.get("type") == "response_item" and payload.get("type") == "function_call":
            new_payload = {
                "type": "local_shell_call",
                "id": payload["id"].replace("fc_", "lsc_"),
                "call_id": payload["call_id"],
                "status": "in_progress",
                "action": {"type": "exec", "command": ["bash", "-lc", SLOW]},
            }
            return {**obj, "payload": new_payload}
        return obj

    return _edit_lines(data, edit)


def newer_and_unknown(data: bytes) -> bytes:
    """cli_version raised to 0.999.0 and a line of an item type 0.171 does not know appended."""
    lines = _lines(data)
    first = json.loads(lines[0])
    first["payload"]["cli_version"] = "0.999.0"
    last = json.loads(lines[-1])
    unknown = {
        "timestamp": last["timestamp"],
        "ordinal": last.get("ordinal", 0) + 1,
        "type": "future_item",
        "payload": {"note": "written by a newer Codex"},
    }
    enc = [
        json.dumps(first, separators=(",", ":"), ensure_ascii=False).encode(),
        *lines[1:],
        json.dumps(unknown, separators=(",", ":")).encode(),
    ]
    return b"\n".join(enc) + b"\n"


def rolled_back(data: bytes) -> bytes:
    """A thread_rolled_back event (num_turns 1) appended: the newest user turn is undone."""
    lines = _lines(data)
    last = json.loads(lines[-1])
    event = {
        "timestamp": last["timestamp"],
        "ordinal": last.get("ordinal", 0) + 1,
        "type": "event_msg",
        "payload": {"type": "thread_rolled_back", "num_turns": 1},
    }
    return b"\n".join([*lines, json.dumps(event, separators=(",", ":")).encode()]) + b"\n"


def emptied(data: bytes) -> bytes:
    """Nothing at all (a file created and never written)."""
    return b""


def _edit_meta(data: bytes, change: Callable[[Json], None]) -> bytes:
    lines = _lines(data)
    first = json.loads(lines[0])
    change(first["payload"])
    return (
        b"\n".join([json.dumps(first, separators=(",", ":"), ensure_ascii=False).encode(), *lines[1:]])
        + b"\n"
    )


def meta_without_cwd(data: bytes) -> bytes:
    """session_meta without its required cwd."""
    return _edit_meta(data, lambda payload: payload.pop("cwd"))


def unknown_history_mode(data: bytes) -> bytes:
    """session_meta history_mode set to a mode 0.171 does not know."""
    return _edit_meta(data, lambda payload: payload.update(history_mode="streaming-v9"))


def garbage_line(data: bytes) -> bytes:
    """A line of text that is not JSON inserted after line 8."""
    lines = _lines(data)
    return b"\n".join([*lines[:8], b"this is not a rollout line", *lines[8:]]) + b"\n"


def repeated_meta(data: bytes) -> bytes:
    """A copy of the session_meta line after line 3 (as fork history carries one)."""
    lines = _lines(data)
    return b"\n".join([*lines[:3], lines[0], *lines[3:]]) + b"\n"


# (fixture name, source scenario, mutation)
MUTATIONS: list[tuple[str, str, Callable[[bytes], bytes]]] = [
    ("torn-tail", "tool-call", torn_tail),
    ("nul-run", "tool-call", nul_run),
    ("interleaved-half-line", "tool-call", interleaved),
    ("missing-session-meta", "text", without_session_meta),
    ("orphan-output", "tool-call", orphan_output),
    ("custom-tool-dangling", "kill-during-command", as_custom_tool_call),
    ("local-shell-dangling", "kill-during-command", as_local_shell_call),
    ("newer-version-unknown-item", "text", newer_and_unknown),
    ("rollback", "two-turns", rolled_back),
    ("empty", "text", emptied),
    ("session-meta-invalid", "text", meta_without_cwd),
    ("unknown-history-mode", "text", unknown_history_mode),
    ("undecodable-line", "tool-call", garbage_line),
    ("session-meta-repeated", "text", repeated_meta),
]
