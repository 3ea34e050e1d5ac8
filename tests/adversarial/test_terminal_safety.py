"""Every string from a log is escaped before it reaches a terminal, in every human view; JSON
output stays exact (RELIABILITY "Terminal safety", STYLE §6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Sesstool

EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\u2066\x00"
UNSAFE = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x00"]


def crashed_log(tmp_path: Path, EVIL: str = EVIL) -> Path:
    """A v0 log with hostile text in every free-form field a view prints, crashed mid-call."""
    header = {
        "type": "session",
        "version": 0,
        "id": "s" + EVIL,
        "createdAt": 1,
        "cwd": "/home/" + EVIL,
        "delegationDepth": 0,
    }
    call = "call" + EVIL
    events = [
        {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 11, "data": {"turn": 1, "step": 1}},
        {
            "type": "user/message",
            "seq": 2,
            "time": 12,
            "data": {
                "id": "u" + EVIL,
                "role": "user",
                "source": {"kind": "user"},
                "content": [{"type": "text", "text": "hello " + EVIL}],
            },
            "surfaceOp": "append",
        },
        {
            "type": "assistant/message",
            "seq": 3,
            "time": 13,
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "a1",
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": EVIL},
                        {"type": "tool-call", "id": call, "name": "sh" + EVIL, "arguments": "{}"},
                    ],
                    "source": {"kind": "model", "provider": "p", "model": "m"},
                },
            },
            "surfaceOp": "append",
        },
        {
            "type": "tool/call",
            "seq": 4,
            "time": 14,
            "data": {"turn": 1, "step": 1, "callId": call, "name": "sh" + EVIL, "arguments": "{}"},
        },
        {"type": "acme/" + EVIL, "seq": 5, "time": 15, "data": {}, "ignorable": True},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *events]))
    return path


VIEWS = [
    ("inspect", "--timeline"),
    ("validate",),
    ("validate", "--format", "github"),
    ("validate", "--format", "junit"),
    ("derive", "--format", "text"),
    ("repair", "--dry-run"),
    ("repair",),
    ("fork", "--dry-run", "--at", "5"),
    ("migrate", "--dry-run"),
    ("derive", "--format", "markdown"),
    ("report",),
    ("redact", "--dry-run"),
]


@pytest.mark.parametrize("view", VIEWS, ids=[" ".join(v) for v in VIEWS])
def test_no_control_character_reaches_the_terminal(
    sesstool: Sesstool, tmp_path: Path, view: tuple[str, ...]
) -> None:
    log = crashed_log(tmp_path)
    result = sesstool(*view, str(log))
    assert "Traceback" not in result.stderr
    for ch in UNSAFE:
        assert ch not in result.stdout, (view, repr(ch))
        assert ch not in result.stderr, (view, repr(ch))
    assert result.stdout or result.stderr


def test_json_output_is_exact(sesstool: Sesstool, tmp_path: Path) -> None:
    log = crashed_log(tmp_path)
    doc = json.loads(sesstool("inspect", "--json", str(log)).stdout)
    assert doc["header"]["id"] == "s" + EVIL
    closers = doc["repair"]["closers"]
    assert closers[0]["data"]["message"]["source"]["callId"] == "call" + EVIL
    derived = json.loads(sesstool("derive", str(log)).stdout)["messages"]
    assert derived[0]["content"][0]["text"] == "hello " + EVIL


def test_hostile_ids_never_steer_where_files_go(sesstool: Sesstool, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl", log)
    forked = 0
    for child in ("../escape", "/abs/path", "a\nb", "nul\x00id", "."):
        result = sesstool("fork", "--json", "--id", child, str(log))
        if result.exit_code == 0:
            forked += 1
            out = Path(json.loads(result.stdout)["output"]["path"])
            assert out.parent == tmp_path, (child, out)  # beside the source, never elsewhere
            assert "/" not in out.name and "\n" not in out.name and "\x00" not in out.name
        else:
            assert result.exit_code == 2, (child, result.stderr)
    assert forked >= 4, "the hostile ids must be encoded, not merely refused"
    assert sorted(p.parent for p in tmp_path.rglob("*.jsonl")) == [tmp_path] * len(
        list(tmp_path.rglob("*.jsonl"))
    )
