"""A crashed v0 log with credential-shaped values planted where agents leak them: a user
message, tool-call arguments (JSON inside a JSON string), tool output (an env dump, a private
key), assistant text. The values are assembled at run time so that no credential-shaped
literal sits in the repository."""

from __future__ import annotations

import json
from pathlib import Path

A = "A"
SECRETS: dict[str, str] = {
    "aws": A + "KIA" + "IOSFODNN7" + "EXAMPLE",
    "github": "gh" + "p_" + "x1Y2z3" * 6,
    "slack": "xo" + "xb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe": "sk" + "_live_" + "a1B2c3D4" * 3,
    "api": "sk" + "-proj-" + "Zq9" * 16,
    "password-url": "hunter2" + "Secret99",
    "keyword": "Tr0ub4dor" + "&3horse",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\n"
    + "MIIEow"
    + "IBAAKCAQEA7" * 4
    + "\n-----END RSA PRIVATE KEY-----",
}


def planted_log(path: Path, torn: bool = False) -> Path:
    s = SECRETS
    header = {"type": "session", "version": 0, "id": "s-planted", "createdAt": 1, "delegationDepth": 0}
    args = json.dumps({"cmd": f"curl -H 'Authorization: token {s['github']}' https://api.example.invalid"})
    env = f"AWS_ACCESS_KEY_ID={s['aws']}\nSLACK={s['slack']}\nDB=postgres://admin:{s['password-url']}@db:5432/x\n"
    events = [
        {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 1001, "data": {"turn": 1, "step": 1}},
        {
            "type": "user/message", "seq": 2, "time": 1002,
            "data": {"id": "u1", "role": "user", "source": {"kind": "user"},
                     "content": [{"type": "text", "text": f"use key {s['aws']} and stripe {s['stripe']}"}]},
            "surfaceOp": "append",
        },
        {
            "type": "assistant/message", "seq": 3, "time": 1500,
            "data": {"turn": 1, "step": 1, "message": {
                "id": "a1", "role": "assistant",
                "content": [
                    {"type": "text", "text": f'config: password = "{s["keyword"]}" and {s["api"]}'},
                    {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": args},
                ],
                "source": {"kind": "model", "provider": "p", "model": "m"}}},
            "surfaceOp": "append",
        },
        {"type": "tool/call", "seq": 4, "time": 1501,
         "data": {"turn": 1, "step": 1, "callId": "call_1", "name": "bash", "arguments": args}},
        {
            "type": "tool/result", "seq": 5, "time": 2500,
            "data": {"turn": 1, "step": 1, "message": {
                "id": "t1", "role": "user", "source": {"kind": "tool", "callId": "call_1"},
                "content": [{"type": "tool-result", "toolCallId": "call_1",
                             "content": [{"type": "text", "text": env + s["pem"]}], "isError": False}]}},
            "sourceEventSeqs": [4], "surfaceOp": "append",
        },
        {"type": "step/end", "seq": 6, "time": 2501, "data": {"turn": 1, "step": 1}},
        {"type": "step/start", "seq": 7, "time": 2502, "data": {"turn": 1, "step": 2}},
        {
            "type": "assistant/message", "seq": 8, "time": 3000,
            "data": {"turn": 1, "step": 2, "message": {
                "id": "a2", "role": "assistant",
                "content": [{"type": "tool-call", "id": "call_2", "name": "bash",
                             "arguments": json.dumps({"cmd": f"echo {s['aws']}"})}],
                "source": {"kind": "model", "provider": "p", "model": "m"}}},
            "surfaceOp": "append",
        },
        {"type": "tool/call", "seq": 9, "time": 3001,
         "data": {"turn": 1, "step": 2, "callId": "call_2", "name": "bash",
                  "arguments": json.dumps({"cmd": f"echo {s['aws']}"})}},
    ]  # fmt: skip
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [header, *events])
    if torn:
        text += '{"type":"tool/result","seq":10,"data":"' + s["stripe"]
    path.write_text(text)
    return path
