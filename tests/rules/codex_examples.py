"""Minimal Codex rollouts, one per codex rule (docs/rules.md shows them). Each is a few lines in
the shape Codex 0.171 writes (see fixtures/codex/ for the real recordings)."""

from __future__ import annotations

import json
from typing import Any

from sesstool.core.rules import Severity
from tests.rules.examples import Example

THREAD = "01a231e1-36fc-7f51-b38e-974c0b3eaa8d"
NAME = f"rollout-2026-12-01T10-00-00-{THREAD}.jsonl"
E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO


def line(kind: str, payload: dict[str, Any], ordinal: int) -> bytes:
    record = {
        "timestamp": f"2026-12-01T10:00:0{ordinal % 10}.000Z",
        "ordinal": ordinal,
        "type": kind,
        "payload": payload,
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def meta(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": THREAD,
        "id": THREAD,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": "/work",
        "originator": "codex_exec",
        "cli_version": "0.171.0",
        "source": "exec",
        "model_provider": "openai",
        "history_mode": "paginated",
    }
    payload.update(changes)
    return {k: v for k, v in payload.items() if v is not None}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


CALL = {
    "type": "function_call",
    "id": "fc_1",
    "name": "exec_command",
    "arguments": '{"cmd":"sleep 30"}',
    "call_id": "call_1",
}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "done"}


def rollout(*lines: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(line(kind, payload, i) for i, (kind, payload) in enumerate(lines))


BASE = rollout(("session_meta", meta()), ("response_item", user("hello")))


def codex_examples() -> list[Example]:
    def ex(
        rule: str, description: str, data: bytes, severity: Severity, line_no: int | None, **options: Any
    ) -> Example:
        return Example(rule, 1, description, data, severity, {"line": line_no}, dict(options), "raw", NAME)

    started = ("event_msg", {"type": "task_started", "turn_id": "turn-1", "started_at": 1796119200})
    return [
        ex(
            "codex-empty-file",
            "an empty rollout (read as Codex with --dialect codex)",
            b"",
            E,
            1,
            dialect="codex",
        ),
        ex(
            "codex-missing-session-meta",
            "the first line is a response_item, not session_meta",
            rollout(("response_item", user("hello"))),
            E,
            1,
        ),
        ex(
            "codex-session-meta-invalid",
            "session_meta without cwd",
            rollout(("session_meta", meta(cwd=None)), ("response_item", user("hello"))),
            E,
            1,
        ),
        ex(
            "codex-unknown-history-mode",
            "session_meta with a history_mode Codex 0.171 does not know",
            rollout(("session_meta", meta(history_mode="streaming-v9")), ("response_item", user("hello"))),
            E,
            1,
        ),
        ex(
            "codex-torn-tail",
            "the last line cut in half",
            BASE + line("response_item", user("bye"), 2)[:40],
            W,
            3,
        ),
        ex(
            "codex-undecodable-line",
            "a line of text between two rollout lines",
            BASE[: BASE.index(b"\n") + 1] + b"not a rollout line\n" + BASE[BASE.index(b"\n") + 1 :],
            E,
            2,
        ),
        ex(
            "codex-interleaved-line",
            "half of line 2 written, then line 2 in full on the same line",
            BASE[: BASE.index(b"\n") + 1]
            + BASE[BASE.index(b"\n") + 1 :][:30]
            + BASE[BASE.index(b"\n") + 1 :],
            E,
            2,
        ),
        ex("codex-nul-run", "a run of NUL bytes as a line", BASE + b"\0" * 64 + b"\n", E, 3),
        ex(
            "codex-call-without-output",
            "a function_call and nothing after it",
            BASE + line("response_item", CALL, 2),
            W,
            3,
        ),
        ex(
            "codex-output-without-call",
            "a function_call_output whose call is not in the rollout",
            BASE + line("response_item", OUTPUT, 2),
            W,
            3,
        ),
        ex(
            "codex-unfinished-turn",
            "task_started without task_complete or turn_aborted",
            rollout(("session_meta", meta()), started, ("response_item", user("hello"))),
            W,
            2,
        ),
        ex(
            "codex-unknown-item-type",
            "a line of a type Codex 0.171 does not know",
            BASE + line("future_item", {"note": "newer"}, 2),
            N,
            3,
        ),
        ex(
            "codex-newer-cli-version",
            "written by Codex 0.999.0",
            rollout(("session_meta", meta(cli_version="0.999.0")), ("response_item", user("hello"))),
            N,
            1,
        ),
        ex(
            "codex-legacy-rollout",
            "a pre-envelope rollout: a bare session meta, a bare item, a state line",
            b'{"id":"' + THREAD.encode() + b'","timestamp":"2025-06-02T08:41:17.204Z"}\n'
            b'{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"hi"}]}\n'
            b'{"record_type":"state"}\n',
            N,
            1,
        ),
        ex(
            "codex-session-meta-repeated",
            "a copy of the session_meta after the first item",
            BASE + line("session_meta", meta(), 2),
            W,
            3,
        ),
    ]
