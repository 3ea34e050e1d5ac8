"""One minimal violating log per rule id (and per version where a rule's meaning differs), built
from a clean base log per format version (spec §12 E9), plus the renderer of docs/rules.md.

Every example is a clean base log with exactly one defect applied; tests/rules/test_rules.py
scans each and checks the finding, and renders the rule reference from the same data.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import zstandard

from sesstool.core.rules import RULES, Severity, severity_for

VERSIONS = (0, 1, 2, 3, 4)
E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

Event = dict[str, Any]
Encoding = Literal["raw", "zstd"]
# Option names that belong to ReadLimits; every other option goes to ScanOptions.
LIMIT_OPTIONS = frozenset({"max_line", "max_decompressed", "max_window", "dialect"})

# Where the scanner deliberately departs from ``severity_for``: v0 readers drop unknown header
# keys (spec §2.2), so the scanner notes them instead of refusing.
SEVERITY_OVERRIDES: dict[tuple[str, int], Severity] = {
    ("header-unknown-key", 0): N,
    ("header-seed-length", 0): W,  # the v0 reader does not check it (rc.8 packages)
}


def severity_in(rule_id: str, version: int) -> Severity:
    """The severity a finding of ``rule_id`` has in a log of ``version``."""
    return SEVERITY_OVERRIDES.get((rule_id, version), severity_for(rule_id, version))


def verdict_for(rule_id: str, severity: Severity) -> str:
    """The verdict one finding implies on an otherwise clean log (spec §1.4, §6.3, §6.4)."""
    rule = RULES[rule_id]
    if rule.verdict == "unsupported":  # at any level (codex-legacy-rollout is information)
        return "unsupported"
    if severity is Severity.ERROR:
        return "corrupt"
    if rule.verdict in ("torn", "interrupted"):
        return rule.verdict
    return "clean"


@dataclass(frozen=True, slots=True)
class Example:
    rule: str
    version: int
    description: str  # one line
    data: bytes  # the whole file
    expect_severity: Severity
    expect_address: dict[str, int | None]  # Address fields that must match
    options: dict[str, Any] = field(default_factory=dict)  # ScanOptions / ReadLimits
    encoding: Encoding = "raw"
    filename: str | None = None  # None: the canonical generation name
    source: str | None = None  # a real file the bytes come from (shown instead of the lines)

    @property
    def file_name(self) -> str:
        if self.filename is not None:
            return self.filename
        name = "session.jsonl" if self.version == 0 else f"session.v{self.version}.jsonl"
        return name + ".zstd" if self.encoding == "zstd" else name

    @property
    def expect_verdict(self) -> str:
        return verdict_for(self.rule, self.expect_severity)


# -- clean base logs (spec §12 E9) --------------------------------------------------------------

CONFIG = {"provider": "deepseek", "model": "deepseek-chat"}
MODEL_SOURCE = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}


def dumps(value: Any) -> bytes:
    """Compact JSON as JSON.stringify writes it (spec §9.1)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def header(version: int, /, **changes: Any) -> Event:
    """The E9 header of ``version``; a change to ``None`` removes the key."""
    h: Event = {"type": "session", "version": version, "id": "s1", "createdAt": 1000}
    if version >= 2:
        h["isSeeded"] = False
    h["delegationDepth"] = 0
    for key, value in changes.items():
        if value is None:
            h.pop(key, None)
        else:
            h[key] = value
    return h


def ev(type_: str, data: Any, seq: int | None = None, time: int | None = None, **meta: Any) -> Event:
    """An event in writer key order; seq/time left None are filled by ``resequence``."""
    event: Event = {"type": type_, "seq": seq, "time": time, "data": data}
    event.update(meta)
    return event


def user_message(text: str = "hi", id_: str = "u1") -> Event:
    return {
        "id": id_,
        "role": "user",
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
    }


def assistant_message(text: str = "Hello") -> Event:
    return {
        "id": "a1",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": dict(MODEL_SOURCE),
    }


def stream() -> list[Event]:
    return [
        {"type": "chunk", "time": 1100, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
        {"type": "text-chunks", "time0": 1101, "index": 0, "dt": [2, 2], "texts": ["He", "ll", "o"]},
        {
            "type": "chunk",
            "time": 1106,
            "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello"}},
        },
        {"type": "chunk", "time": 1107, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
    ]


def request_header(version: int, **changes: Any) -> Event:
    hdr: Event = {"config": dict(CONFIG)}
    if version <= 2:
        hdr["system"] = "Be brief."
    hdr.update(changes)
    return {"header": hdr, "reason": "initial"}


def system_message(version: int, id_: str, text: str | None, turn: int = 1, step: int = 1) -> Event:
    source = (
        {"kind": "system-prompt"}
        if version >= 4
        else {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}
    )
    content = [] if text is None else [{"type": "text", "text": text}]
    return {
        "turn": turn,
        "step": step,
        "message": {"id": id_, "role": "system", "content": content, "source": source},
    }


def tool_result(
    version: int,
    call_id: str = "c1",
    text: str = "ok",
    id_: str = "t1",
    error: Event | None = None,
    is_error: bool = False,
) -> Event:
    """``tool/result`` data in the shape of ``version`` (spec §4.3; v4 lifts the block)."""
    source = {"kind": "tool", "callId": call_id}
    body = [{"type": "text", "text": text}]
    message: Event
    if version >= 4:
        message = {
            "id": id_,
            "role": "tool",
            "toolCallId": call_id,
            "isError": is_error,
            "source": source,
            "content": body,
        }
    else:
        message = {
            "id": id_,
            "role": "user",
            "source": source,
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": body, "isError": is_error}],
        }
    data: Event = {"turn": 1, "step": 1, "message": message}
    if error is not None:
        data["error"] = error
    return data


def _v0_events() -> list[Event]:
    step = {"turn": 1, "step": 1}
    return [
        ev("turn/start", {"turn": 1}, 0, 1001),
        ev("step/start", dict(step), 1, 1002),
        ev("user/message", user_message(), 2, 1003, surfaceOp="append"),
        ev("request/header", request_header(0), 3, 1004),
        ev(
            "assistant/chunk",
            {**step, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
            4,
            1100,
        ),
        {
            "type": "text-chunks",
            "seq0": 5,
            "time0": 1101,
            "data": {**step, "index": 0, "dt": [2, 2], "texts": ["He", "ll", "o"]},
        },
        ev(
            "assistant/chunk",
            {**step, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello"}}},
            8,
            1106,
        ),
        ev("assistant/chunk", {**step, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}, 9, 1107),
        ev(
            "assistant/message",
            {**step, "message": assistant_message()},
            10,
            1108,
            sourceEventSeqs=[4, 5, 6, 7, 8, 9],
            surfaceOp="append",
        ),
        ev("step/end", dict(step), 11, 1109),
        ev("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, 12, 1110),
    ]


def _v2_events() -> list[Event]:
    step = {"turn": 1, "step": 1}
    return [
        ev("turn/start", {"turn": 1}, 0, 1001),
        ev("step/start", dict(step), 1, 1002),
        ev("user/message", user_message(), 2, 1003, surfaceOp="append"),
        ev("request/header", request_header(2), 3, 1004),
        ev(
            "assistant/message",
            {**step, "message": assistant_message(), "stream": stream()},
            4,
            1108,
            surfaceOp="append",
        ),
        ev("step/end", dict(step), 5, 1109),
        ev("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, 6, 1110),
    ]


# E9's synthetic v2→v3 system message ids (SHA-256 of the migration anchors).
HEAD_ID = "v2-to-v3-system-36701ab3bbdb7fb02e9bffbb652f9ba6b175dbfc31464e99d49c6241a50600f2"
PROMPT_ID = "v2-to-v3-system-3d5f41ea83ec64d4274004a588bfd7da473b8c01ac3da9d9f92a17fd766da935"


def _v3_events(version: int) -> list[Event]:
    step = {"turn": 1, "step": 1}
    return [
        ev("turn/start", {"turn": 1}, 0, 1001),
        ev("step/start", dict(step), 1, 1002),
        ev("system/message", system_message(version, HEAD_ID, None), 2, 1002, surfaceOp="append"),
        ev("user/message", user_message(), 3, 1003, surfaceOp="append"),
        ev(
            "system/message",
            system_message(version, PROMPT_ID, "Be brief."),
            4,
            1004,
            sourceEventSeqs=[2],
            surfaceOp={"op": "replace", "startSeq": 2, "endSeq": 2},
        ),
        ev("request/header", request_header(version), 5, 1004),
        ev(
            "assistant/message",
            {**step, "message": assistant_message(), "stream": stream()},
            6,
            1108,
            surfaceOp="append",
        ),
        ev("step/end", dict(step), 7, 1109),
        ev("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, 8, 1110),
    ]


def base_events(version: int) -> list[Event]:
    """A fresh copy of the balanced one-turn E9 session of ``version`` (header excluded)."""
    if version <= 1:
        return _v0_events()
    if version == 2:
        return _v2_events()
    return _v3_events(version)


def resequence(events: list[Event]) -> list[Event]:
    """Number events contiguously from 0 (packed rows take one seq per member); an event whose
    time is None takes its predecessor's time. Events without a ``seq`` key are left alone."""
    seq, time = 0, 1000
    for e in events:
        if "seq0" in e:
            e["seq0"] = seq
            members = e["data"].get("texts", e["data"].get("args", []))
            seq += len(members)
            time = e["time0"]
        elif "seq" in e:
            e["seq"] = seq
            seq += 1
            if e.get("time") is None:
                e["time"] = time
            time = e["time"]
    return events


def index_of(events: list[Event], type_: str, last: bool = True) -> int:
    found = [i for i, e in enumerate(events) if e.get("type") == type_]
    return found[-1] if last else found[0]


def find(events: list[Event], type_: str, last: bool = True) -> Event:
    return events[index_of(events, type_, last)]


def insert_before(events: list[Event], type_: str, new: Iterable[Event]) -> list[Event]:
    """Insert ``new`` before the last event of ``type_`` and renumber."""
    i = index_of(events, type_)
    events[i:i] = list(new)
    return resequence(events)


def append(events: list[Event], new: Iterable[Event]) -> list[Event]:
    events.extend(new)
    return resequence(events)


def remove(events: list[Event], type_: str) -> list[Event]:
    del events[index_of(events, type_)]
    return resequence(events)


def line_of(events: list[Event], event: Event) -> int:
    """1-based line of ``event`` in the serialised log (the header is line 1)."""
    return next(i for i, e in enumerate(events) if e is event) + 2


def tool_call(call_id: str = "c1") -> Event:
    return ev("tool/call", {"turn": 1, "step": 1, "callId": call_id, "name": "read", "arguments": "{}"})


def with_tool_pair(version: int, events: list[Event] | None = None) -> list[Event]:
    """The base log with a ``tool/call c1`` and its ``tool/result`` before the step/end."""
    events = base_events(version) if events is None else events
    call = tool_call()
    result = ev("tool/result", tool_result(version), sourceEventSeqs=[], surfaceOp="append")
    insert_before(events, "step/end", [call, result])
    result["sourceEventSeqs"] = [call["seq"]]
    return events


def jsonl(head: Event | bytes, events: Iterable[Event | bytes]) -> bytes:
    """Serialise a header and events (bytes items are written verbatim) as JSONL lines."""
    lines = [x if isinstance(x, bytes) else dumps(x) for x in (head, *events)]
    return b"".join(line + b"\n" for line in lines)


def base_log(version: int) -> bytes:
    return jsonl(header(version), base_events(version))


def tool_log(version: int) -> bytes:
    return jsonl(header(version), with_tool_pair(version))


# -- zstd (spec §9.2, §12 E12) -----------------------------------------------------------------

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zframe(payload: bytes, checksum: bool = True) -> bytes:
    """One frame as the writer makes it: default level, content checksum on."""
    out: bytes = zstandard.ZstdCompressor(write_checksum=checksum).compress(payload)
    return out


def split_header(raw: bytes) -> tuple[bytes, bytes]:
    cut = raw.index(b"\n") + 1
    return raw[:cut], raw[cut:]


def to_zstd(raw: bytes) -> bytes:
    """Header frame + one body frame (a migration-published generation, §9.2)."""
    head, body = split_header(raw)
    return zframe(head) + zframe(body) if body else zframe(head)


def frame_header_len(frame: bytes) -> int:
    """Bytes before the first block header (RFC 8878 §3.1.1.1)."""
    fhd = frame[4]
    single = bool(fhd & 0x20)
    fcs_len = (0, 2, 4, 8)[fhd >> 6] or (1 if single else 0)
    return 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 0x03] + fcs_len


# -- examples -----------------------------------------------------------------------------------


def example(
    rule: str,
    version: int,
    description: str,
    data: bytes,
    severity: Severity,
    *,
    encoding: Encoding = "raw",
    options: dict[str, int] | None = None,
    filename: str | None = None,
    **address: int | None,
) -> Example:
    return Example(
        rule, version, description, data, severity, dict(address), options or {}, encoding, filename
    )


def _physical() -> list[Example]:
    out: list[Example] = []
    v0 = base_log(0)
    lines = v0.split(b"\n")[:-1]

    def with_line(n: int, line: bytes, replace: bool = False) -> bytes:
        """The v0 base with ``line`` inserted at (or replacing) 1-based line ``n``."""
        new = list(lines)
        new[n - 1 : n - 1 + (1 if replace else 0)] = [line]
        return b"".join(x + b"\n" for x in new)

    head, body = split_header(v0)
    out.append(example("empty-file", 0, "a zero-byte file", b"", E, line=1, offset=0))
    two_line_header = zframe(head + body.split(b"\n", 1)[0] + b"\n") + zframe(body.split(b"\n", 1)[1])
    out.append(
        example(
            "zstd-header-frame",
            0,
            "the first frame holds the header and the first event: §9.2 wants the header alone",
            two_line_header,
            E,
            encoding="zstd",
            line=1,
        )
    )
    out.append(
        example(
            "zstd-single-frame",
            0,
            "the whole log compressed as one frame, as `zstd FILE` writes it (§9.2 wants the "
            "header line alone in frame 0, then a frame per append)",
            zframe(v0),
            W,
            encoding="zstd",
            line=1,
            frame=0,
        )
    )
    out.append(
        example(
            "missing-header",
            0,
            "the only frame (the header frame) is cut inside its "
            "checksum; a header frame is never torn, it is created atomically (§6.3, §10.3)",
            zframe(head)[:-2],
            E,
            encoding="zstd",
            line=1,
        )
    )
    out.append(
        example(
            "missing-header",
            0,
            "the first line is complete but is not valid JSON (its "
            "closing brace is missing): there is no header record",
            head[:-2] + b"\n" + body,
            E,
            line=1,
        )
    )
    torn = b'{"type":"turn/start","seq":13,"ti'
    out.append(
        example(
            "torn-tail",
            0,
            "a last record without its newline (a crash mid-append)",
            v0 + torn,
            W,
            line=len(lines) + 1,
            offset=len(v0),
        )
    )
    garbled = b'{"type":"turn/start","seq":13,"time":1111,"data":{"tu'
    out.append(
        example(
            "uncommitted-tail",
            0,
            "a complete but unparsable last line after the last turn/end",
            v0 + garbled + b"\n",
            W,
            line=len(lines) + 1,
        )
    )
    long_text = user_message("x" * 2000)
    long_line = dumps(ev("user/message", long_text, 2, 1003, surfaceOp="append"))
    dup = b'{"type":"turn/start","seq":0,"time":1001,"data":{"turn":1,"turn":1}}'
    out.append(
        example(
            "duplicate-key",
            0,
            "with --strict: the turn/start data repeats the key turn (decoders keep the last)",
            with_line(2, dup, True),
            W,
            options={"strict": 1},
            line=2,
            seq=0,
        )
    )
    big = b'{"type":"turn/start","seq":0,"time":1001,"data":{"turn":1,"tokens":18446744073709551617}}'
    out.append(
        example(
            "unsafe-integer",
            0,
            "the turn/start data carries 2^64+1, which a JavaScript reader rounds",
            with_line(2, big, True),
            W,
            line=2,
            seq=0,
        )
    )
    out.append(
        example(
            "line-too-long",
            0,
            "a 2 KiB user message line before the last turn/end",
            with_line(4, long_line, True),
            E,
            options={"max_line": 1024},
            line=4,
        )
    )
    out.append(
        example(
            "invalid-utf8",
            0,
            'byte 0xff inside the user text "hi"',
            v0.replace(b'"text":"hi"', b'"text":"h\xffi"'),
            E,
            line=4,
        )
    )
    out.append(
        example(
            "invalid-json",
            0,
            "the user/message line is cut short but still ends in a newline, before the last turn/end",
            with_line(4, lines[3][:60], True),
            E,
            line=4,
        )
    )
    out.append(
        example(
            "bom", 0, "a UTF-8 byte order mark before the header", b"\xef\xbb\xbf" + v0, E, line=1, offset=0
        )
    )
    out.append(
        example(
            "nul-bytes",
            0,
            "a line of 64 NUL bytes before the step/end",
            with_line(11, b"\x00" * 64),
            E,
            line=11,
        )
    )
    deep = b'{"type":"session/title","seq":13,"time":1111,"data":' + b"[" * 1100 + b"]" * 1100 + b"}"
    turn2 = [
        ev("turn/start", {"turn": 2}, 14, 1111),
        ev("turn/end", {"turn": 2, "reason": {"kind": "completed"}}, 15, 1112),
    ]
    out.append(
        example(
            "depth-limit",
            0,
            "a between-turns event whose data nests 1100 arrays deep, then a second turn",
            v0 + deep + b"\n" + b"".join(dumps(e) + b"\n" for e in turn2),
            E,
            line=len(lines) + 1,
        )
    )
    out.append(
        example(
            "not-an-object",
            0,
            "a JSON array where the step/end record should be",
            with_line(11, b"[11,1109]"),
            E,
            line=11,
        )
    )
    return out


def _zstd() -> list[Example]:
    out: list[Example] = []
    raw = base_log(0)
    head, body = split_header(raw)
    hf, bf = zframe(head), zframe(body)
    n_lines = raw.count(b"\n")

    out.append(
        example(
            "zstd-bad-magic",
            0,
            "plain JSONL appended after the two zstd frames",
            hf + bf + dumps(ev("session/title", {"title": "x"}, 13, 1111)) + b"\n",
            E,
            encoding="zstd",
            frame=2,
        )
    )
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"meta"
    out.append(
        example(
            "zstd-skippable-frame",
            0,
            "a skippable frame between the header frame and the body frame",
            hf + skippable + bf,
            E,
            encoding="zstd",
            frame=1,
        )
    )
    reserved = bytearray(bf)
    reserved[4] |= 0x08
    out.append(
        example(
            "zstd-reserved-bit",
            0,
            "body frame header descriptor with the reserved bit 0x08 set",
            hf + bytes(reserved),
            E,
            encoding="zstd",
            frame=1,
        )
    )
    block = bytearray(bf)
    at = frame_header_len(bf)
    block[at] |= 0x06  # block type bits (1-2) = 3: reserved
    out.append(
        example(
            "zstd-reserved-block",
            0,
            "the body frame's first block has block type 3 (reserved)",
            hf + bytes(block),
            E,
            encoding="zstd",
            frame=1,
        )
    )
    out.append(
        example(
            "zstd-window-too-large",
            0,
            f"a body frame needing a {len(body)}-byte window",
            hf + bf,
            E,
            encoding="zstd",
            options={"max_window": 1024},
            frame=1,
        )
    )
    bad_sum = bytearray(bf)
    bad_sum[-1] ^= 0xFF
    out.append(
        example(
            "zstd-checksum",
            0,
            "the body frame's content checksum has one byte flipped",
            hf + bytes(bad_sum),
            E,
            encoding="zstd",
            frame=1,
        )
    )
    # The writer's one-shot frames are single-segment and declare their content size (FCS,
    # RFC 8878 §3.1.1.1.4); declaring one byte less makes the complete frame undecodable.
    fhd = bf[4]
    assert fhd & 0x20, "expected a single-segment frame"
    fcs_len = (1, 2, 4, 8)[fhd >> 6]
    fcs_at = 5 + (0, 1, 2, 4)[fhd & 0x03]
    bias = 256 if fcs_len == 2 else 0
    size = int.from_bytes(bf[fcs_at : fcs_at + fcs_len], "little") + bias
    fcs = bf[:fcs_at] + (size - 1 - bias).to_bytes(fcs_len, "little") + bf[fcs_at + fcs_len :]
    out.append(
        example(
            "zstd-decode-error",
            0,
            "the body frame declares a content size one byte smaller than its blocks produce",
            hf + fcs,
            E,
            encoding="zstd",
            frame=1,
        )
    )
    out.append(
        example(
            "zstd-budget-exceeded",
            0,
            "the body frame decompresses to more than 256 bytes",
            hf + bf,
            E,
            encoding="zstd",
            options={"max_decompressed": 256},
            frame=1,
        )
    )
    first, rest = body.split(b"\n", 1)
    out.append(
        example(
            "zstd-header-frame",
            0,
            "the first frame holds the header line and the first event",
            zframe(head + first + b"\n") + zframe(rest),
            E,
            encoding="zstd",
            frame=0,
        )
    )
    out.append(
        example(
            "zstd-frame-boundary",
            0,
            "the last complete frame ends without the final newline",
            hf + zframe(body[:-1]),
            E,
            encoding="zstd",
            frame=1,
            line=n_lines,
        )
    )
    out.append(
        example(
            "zstd-no-checksum",
            0,
            "the body frame was written without a content checksum",
            hf + zframe(body, checksum=False),
            W,
            encoding="zstd",
            frame=1,
        )
    )
    out.append(
        example(
            "zstd-torn-frame",
            0,
            "the body frame is cut 5 bytes before its end",
            hf + bf[:-5],
            W,
            encoding="zstd",
            frame=1,
        )
    )
    return out


def _header() -> list[Example]:
    out: list[Example] = []

    def log(version: int, head: Event | bytes, events: list[Event] | None = None) -> bytes:
        return jsonl(head, base_events(version) if events is None else events)

    out.append(
        example("header-invalid", 0, 'version is the string "0"', log(0, header(0, version="0")), E, line=1)
    )
    out.append(
        example("header-field", 0, "cwd is a relative path", log(0, header(0, cwd="home/u/proj")), E, line=1)
    )
    out.append(
        example(
            "header-field", 2, "the required isSeeded is missing", log(2, header(2, isSeeded=None)), E, line=1
        )
    )
    out.append(
        example(
            "header-field",
            0,
            "createdAt is written as -0 (§2.1: not -0)",
            log(0, dumps(header(0)).replace(b'"createdAt":1000', b'"createdAt":-0')),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-unknown-key",
            0,
            "an unknown key (a v0 reader drops it: info)",
            log(0, header(0, title="demo")),
            N,
            line=1,
        )
    )
    out.append(
        example(
            "header-unknown-key",
            0,
            "isSeeded in a v0 header (dropped by a v0 reader: info)",
            log(0, header(0, isSeeded=False)),
            N,
            line=1,
        )
    )
    out.append(
        example(
            "header-unknown-key",
            1,
            "an unknown key (the v1 codec refuses it)",
            log(1, header(1, title="demo")),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-unknown-key",
            2,
            "seedLength in a v2 header (replaced by isSeeded)",
            log(2, header(2, seedLength=0)),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-unknown-key",
            4,
            "an unknown key in a v4 header",
            log(4, header(4, title="demo")),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-retired-key",
            0,
            "the retired approvalPolicy field",
            log(0, header(0, approvalPolicy="never")),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-newer-version", 0, "a v5 header (newer than sesstool reads)", log(0, header(5)), E, line=1
        )
    )
    out.append(
        example(
            "header-filename-version",
            0,
            "a v0 log stored as session.v2.jsonl",
            log(0, header(0)),
            E,
            filename="session.v2.jsonl",
            line=1,
        )
    )
    out.append(
        example(
            "header-seed-length",
            0,
            "seedLength 20 in a log of 13 events (a v0 reader does not check it: a warning)",
            log(0, header(0, parentSession="p", seedLength=20)),
            W,
            line=1,
        )
    )
    out.append(
        example(
            "header-seed-length",
            1,
            "seedLength 20 in a v1 log of 13 events (the v1 codec refuses it)",
            log(1, header(1, parentSession="p", seedLength=20)),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-older-version",
            0,
            "a header version -1 (older than any format sesstool reads)",
            log(0, header(-1)),
            E,
            line=1,
        )
    )
    out.append(
        example(
            "header-is-seeded",
            2,
            "isSeeded true without an inherited end-seed",
            log(2, header(2, parentSession="p", isSeeded=True)),
            E,
            line=1,
        )
    )
    tagged = append(base_events(3), [ev("session/end-seed", {"inherited": True})])
    out.append(
        example(
            "header-is-seeded",
            3,
            "isSeeded false with an inherited end-seed marker",
            log(3, header(3), tagged),
            E,
            line=1,
        )
    )
    events = base_events(0)
    second = dumps(header(0))
    i = index_of(events, "turn/end")
    out.append(
        example(
            "header-not-first",
            0,
            "a second header line before the turn/end",
            jsonl(header(0), [*events[:i], second, *events[i:]]),
            E,
            line=i + 2,
        )
    )
    return out


def _envelope() -> list[Example]:
    out: list[Example] = []
    h0 = header(0)

    def edited(change: Callable[[list[Event]], Event]) -> tuple[bytes, Event, int]:
        """The v0 base after ``change``, the event it changed, and that event's line."""
        events = base_events(0)
        target = change(events)
        return jsonl(h0, events), target, line_of(events, target)

    def extra_key(events: list[Event]) -> Event:
        e = find(events, "turn/start")
        e["meta"] = {}
        return e

    data, t, line = edited(extra_key)
    out.append(
        example(
            "envelope-key",
            0,
            'turn/start with an extra top-level key "meta"',
            data,
            E,
            line=line,
            seq=t["seq"],
        )
    )

    # v1: a v0 reader names a missing type "undefined" (an unknown type: unsupported)
    events = append(base_events(1), [ev("session/title", {"title": "x"})])
    untyped = events[-1]
    del untyped["type"]
    out.append(
        example(
            "envelope-type",
            1,
            "a between-turns event without a type",
            jsonl(header(1), events),
            E,
            line=line_of(events, untyped),
            seq=untyped["seq"],
        )
    )

    events = base_events(0)
    rh = find(events, "request/header")
    rh["seq"] = str(rh["seq"])
    out.append(
        example(
            "envelope-seq",
            0,
            'request/header with seq "3" (a string)',
            jsonl(h0, events),
            E,
            line=line_of(events, rh),
        )
    )
    events = base_events(4)
    ts = find(events, "turn/start")
    data = jsonl(header(4), events).replace(b'"seq":0,', b'"seq":-0,', 1)
    out.append(
        example(
            "envelope-seq",
            4,
            "turn/start with seq written -0 (§3: v4 rejects -0)",
            data,
            E,
            line=line_of(events, ts),
        )
    )

    def no_time(events: list[Event]) -> Event:
        e = find(events, "step/end")
        del e["time"]
        return e

    data, t, line = edited(no_time)
    out.append(example("envelope-time", 0, "step/end without time", data, E, line=line, seq=t["seq"]))
    events = append(base_events(0), [ev("session/title", {"title": "x"})])
    del events[-1]["data"]
    out.append(
        example(
            "envelope-data",
            0,
            "a between-turns session/title without data",
            jsonl(h0, events),
            E,
            line=line_of(events, events[-1]),
            seq=events[-1]["seq"],
        )
    )

    def not_true(events: list[Event]) -> Event:
        e = find(events, "step/start")
        e["ignorable"] = False
        return e

    data, t, line = edited(not_true)
    out.append(
        example("envelope-ignorable", 0, "step/start with ignorable: false", data, E, line=line, seq=t["seq"])
    )
    events = base_events(0)
    se = find(events, "step/end")
    se["seq"] += 1
    out.append(
        example(
            "seq-gap",
            0,
            "step/end numbered 12 instead of 11, before the turn/end",
            jsonl(h0, events),
            E,
            line=line_of(events, se),
            seq=12,
        )
    )

    def no_op(events: list[Event]) -> Event:
        e = find(events, "user/message")
        del e["surfaceOp"]
        return e

    data, t, line = edited(no_op)
    out.append(
        example("surface-op-missing", 0, "user/message without surfaceOp", data, E, line=line, seq=t["seq"])
    )

    for version, op, note in (
        (0, {"op": "replace", "startSeq": 2, "endSeq": 2}, "the v3+ spelling startSeq/endSeq"),
        (3, {"op": "replace", "start": 3, "end": 3}, "the v0–v2 spelling start/end"),
        (2, "prepend", 'the string "prepend"'),
    ):
        user_seq = 2 if version < 3 else 3
        events = base_events(version)
        summary = ev(
            "user/message", user_message("Summary: hi", "m-sum1"), sourceEventSeqs=[user_seq], surfaceOp=op
        )
        insert_before(events, "turn/end", [summary])
        out.append(
            example(
                "surface-op-shape",
                version,
                f"a user/message whose surfaceOp uses {note}",
                jsonl(header(version), events),
                E,
                line=line_of(events, summary),
                seq=summary["seq"],
            )
        )

    def meta(events: list[Event]) -> Event:
        e = find(events, "step/end")
        e["surfaceOp"] = "append"
        return e

    data, t, line = edited(meta)
    out.append(
        example("surface-meta-on-log-only", 0, "step/end with surfaceOp", data, E, line=line, seq=t["seq"])
    )
    events = append(base_events(2), [ev("acme/telemetry", {"ms": 42}, surfaceOp="append", ignorable=True)])
    out.append(
        example(
            "surface-meta-on-log-only",
            2,
            "an unknown ignorable event with surfaceOp (only v4 keeps it opaque)",
            jsonl(header(2), events),
            E,
            line=line_of(events, events[-1]),
            seq=events[-1]["seq"],
        )
    )

    events = base_events(0)
    am = find(events, "assistant/message")
    am["sourceEventSeqs"] = [4, 5, 6, 7, 8, 9, 10]
    out.append(
        example(
            "source-seqs-shape",
            0,
            "assistant/message 10 cites its own seq",
            jsonl(h0, events),
            E,
            line=line_of(events, am),
            seq=10,
        )
    )
    events = with_tool_pair(2)
    tr = find(events, "tool/result")
    tr["sourceEventSeqs"] = [[5, 4]]
    out.append(
        example(
            "source-seqs-shape",
            2,
            "tool/result with a backwards range [[5,4]] (§9.4)",
            jsonl(header(2), events),
            E,
            line=line_of(events, tr),
            seq=tr["seq"],
        )
    )
    for version in (3, 4):
        events = base_events(version)
        am = find(events, "assistant/message")
        am["sourceEventSeqs"] = [3]
        am["surfaceOp"] = am.pop("surfaceOp")
        out.append(
            example(
                "source-seqs-forbidden",
                version,
                "assistant/message with sourceEventSeqs",
                jsonl(header(version), events),
                E,
                line=line_of(events, am),
                seq=am["seq"],
            )
        )
    events = base_events(2)
    am = find(events, "assistant/message")
    am["sourceEventSeqs"] = [2]
    am["surfaceOp"] = am.pop("surfaceOp")
    out.append(
        example(
            "source-seqs-assistant-v2",
            2,
            "assistant/message with sourceEventSeqs (dropped by the v1→v2 fold)",
            jsonl(header(2), events),
            W,
            line=line_of(events, am),
            seq=am["seq"],
        )
    )
    return out


def _between_turns(version: int, new: Event) -> tuple[bytes, Event, list[Event]]:
    events = append(base_events(version), [new])
    return jsonl(header(version), events), new, events


def _vocabulary() -> list[Example]:
    out: list[Example] = []
    for version in (0, 4):
        data, e, events = _between_turns(version, ev("acme/widget-state", {"mode": "x"}))
        out.append(
            example(
                "unknown-event-type",
                version,
                "an unknown event type, not ignorable (§12 E6)",
                data,
                E,
                line=line_of(events, e),
                seq=e["seq"],
            )
        )
    data, e, events = _between_turns(0, ev("acme/telemetry", {"ms": 42}, ignorable=True))
    out.append(
        example(
            "unknown-ignorable-event",
            0,
            "an unknown event type marked ignorable (§12 E7)",
            data,
            N,
            line=line_of(events, e),
            seq=e["seq"],
        )
    )
    data, e, events = _between_turns(4, ev("acme/telemetry", {"ms": 42}, surfaceOp="append", ignorable=True))
    out.append(
        example(
            "unknown-ignorable-event",
            4,
            "an unknown ignorable event with opaque surfaceOp (allowed in v4)",
            data,
            N,
            line=line_of(events, e),
            seq=e["seq"],
        )
    )
    data, e, events = _between_turns(0, ev("mode/set", {"mode": "plan"}))
    out.append(
        example(
            "retired-event-type",
            0,
            "the retired mode/set event",
            data,
            E,
            line=line_of(events, e),
            seq=e["seq"],
        )
    )
    events = base_events(0)
    rh = find(events, "request/header")
    rh["data"]["reason"] = "fallback"
    out.append(
        example(
            "retired-event-type",
            0,
            "request/header with the retired reason fallback",
            jsonl(header(0), events),
            E,
            line=line_of(events, rh),
            seq=rh["seq"],
        )
    )
    events = base_events(2)
    chunk = ev(
        "assistant/chunk",
        {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
    )
    insert_before(events, "assistant/message", [chunk])
    out.append(
        example(
            "version-event-type",
            2,
            "a top-level assistant/chunk (chunks live in data.stream since v2)",
            jsonl(header(2), events),
            E,
            line=line_of(events, chunk),
            seq=chunk["seq"],
        )
    )
    events = base_events(0)
    sm = ev("system/message", system_message(0, "sys1", "Be brief."), surfaceOp="append")
    insert_before(events, "user/message", [sm])
    # inserting before seq 2 shifts the chunks the assistant message cites
    find(events, "assistant/message")["sourceEventSeqs"] = [5, 6, 7, 8, 9, 10]
    out.append(
        example(
            "version-event-type",
            0,
            "a system/message (a v3+ type) in a v0 log",
            jsonl(header(0), events),
            E,
            line=line_of(events, sm),
            seq=sm["seq"],
        )
    )
    row = {
        "type": "text-chunks",
        "seq0": 7,
        "time0": 1111,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
    }
    events = base_events(2)
    i = index_of(events, "step/end")
    out.append(
        example(
            "version-event-type",
            2,
            "a packed text-chunks row (v0/v1 only) in a v2 log",
            jsonl(header(2), [*events[:i], row, *events[i:]]),
            E,
            line=i + 2,
        )
    )
    events = base_events(0)
    attempt = ev("assistant/attempt", {"turn": 1, "step": 1, "stream": stream()})
    insert_before(events, "step/end", [attempt])
    out.append(
        example(
            "version-event-type",
            0,
            "an assistant/attempt (a v2+ type, §4.1) in a v0 log",
            jsonl(header(0), events),
            E,
            line=line_of(events, attempt),
            seq=attempt["seq"],
        )
    )
    data, e, events = _between_turns(
        4, ev("image/offload", {"seq": 3, "blockIndex": 0, "attachment": {"path": "a.png"}})
    )
    out.append(
        example(
            "message-projection-event",
            4,
            "an image/offload event",
            data,
            E,
            line=line_of(events, e),
            seq=e["seq"],
        )
    )
    events = base_events(0)
    row0 = events[5]
    row0["data"]["dt"] = [2]
    out.append(
        example(
            "packed-row",
            0,
            "a text-chunks row with 3 texts but 1 dt",
            jsonl(header(0), events),
            E,
            line=line_of(events, row0),
        )
    )
    events = base_events(0)
    seq_row = {
        "type": "text-chunks",
        "seq": None,
        "time": None,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
    }
    insert_before(events, "step/end", [seq_row])
    out.append(
        example(
            "packed-row",
            0,
            "a text-chunks row written with seq/time instead of "
            "seq0/time0 (§9.3: malformed row-tagged value)",
            jsonl(header(0), events),
            E,
            line=line_of(events, seq_row),
        )
    )
    events = base_events(2)
    am = find(events, "assistant/message")
    am["data"]["stream"][1]["dt"] = [2]
    out.append(
        example(
            "stream-record",
            2,
            "a stream text-chunks record with 3 texts but 1 dt",
            jsonl(header(2), events),
            E,
            line=line_of(events, am),
            seq=am["seq"],
        )
    )
    return out


def _shapes() -> list[Example]:
    out: list[Example] = []

    def case(
        rule: str,
        version: int,
        description: str,
        type_: str,
        change: Callable[[Event], None],
        tools: bool = False,
    ) -> None:
        events = with_tool_pair(version) if tools else base_events(version)
        target = find(events, type_)
        change(target)
        out.append(
            example(
                rule,
                version,
                description,
                jsonl(header(version), events),
                E,
                line=line_of(events, target),
                seq=target["seq"],
            )
        )

    case(
        "event-data",
        2,
        "assistant/message without the v2 data.stream",
        "assistant/message",
        lambda e: e["data"].pop("stream"),
    )
    case(
        "event-data",
        0,
        "turn/end reason forked (v4 only)",
        "turn/end",
        lambda e: e["data"].update(reason={"kind": "forked"}),
    )
    case("message-shape", 0, "user/message without an id", "user/message", lambda e: e["data"].pop("id"))
    case(
        "message-shape",
        4,
        'a v4 user/message whose source kind is "plugin" (§4.3: v4 kinds are direct)',
        "user/message",
        lambda e: e["data"].update(source={"kind": "plugin", "plugin": "compact"}),
    )
    case(
        "message-role",
        0,
        'user/message with role "assistant"',
        "user/message",
        lambda e: e["data"].update(role="assistant"),
    )
    case(
        "message-role",
        4,
        'a v4 tool/result whose message keeps role "user"',
        "tool/result",
        lambda e: e["data"]["message"].update(role="user"),
        tools=True,
    )
    case(
        "assistant-source",
        0,
        "assistant source without model",
        "assistant/message",
        lambda e: e["data"]["message"]["source"].pop("model"),
    )
    case(
        "tool-result-shape",
        0,
        "tool-result block toolCallId c2 for source.callId c1",
        "tool/result",
        lambda e: e["data"]["message"]["content"][0].update(toolCallId="c2"),
        tools=True,
    )
    case(
        "tool-result-shape",
        4,
        "v4 tool/result message without toolCallId",
        "tool/result",
        lambda e: e["data"]["message"].pop("toolCallId"),
        tools=True,
    )
    outcome = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    case(
        "tool-result-error-flag",
        3,
        "tool/result with error but isError false",
        "tool/result",
        lambda e: e["data"].update(error=dict(outcome)),
        tools=True,
    )
    case(
        "tool-result-error-flag",
        4,
        "tool/result with error but isError false",
        "tool/result",
        lambda e: e["data"].update(error=dict(outcome)),
        tools=True,
    )
    case(
        "request-header",
        0,
        "request/header config without model",
        "request/header",
        lambda e: e["data"]["header"]["config"].pop("model"),
    )
    case(
        "request-header",
        3,
        "request/header with header.system (forbidden in v3+)",
        "request/header",
        lambda e: e["data"]["header"].update(system="Be brief."),
    )
    events = base_events(4)
    dev = ev(
        "developer/message",
        {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "d1",
                "role": "developer",
                "content": [{"type": "tool-addition", "toolName": "read"}],
                "source": {"kind": "runtime-context"},
            },
        },
        surfaceOp="append",
    )
    insert_before(events, "step/end", [dev])
    out.append(
        example(
            "event-data",
            4,
            "developer/message adding a tool without headerSeq (§4.1: required iff additions)",
            jsonl(header(4), events),
            E,
            line=line_of(events, dev),
            seq=dev["seq"],
        )
    )
    events = base_events(0)
    ctx = ev("request/context", {"provider": "", "model": "deepseek-chat"})
    insert_before(events, "step/end", [ctx])
    out.append(
        example(
            "request-context",
            0,
            "request/context with an empty provider",
            jsonl(header(0), events),
            E,
            line=line_of(events, ctx),
            seq=ctx["seq"],
        )
    )
    # v0: shapes §4.1 forbids but the published v0 reader loads (read-path mutations)
    events = base_events(0)
    target = ev("request/context", {"provider": "deepseek", "model": 7})
    insert_before(events, "step/end", [target])
    out.append(
        example(
            "tolerated-shape",
            0,
            "a v0 request/context whose model is a number (the v0 reader loads the log)",
            jsonl(header(0), events),
            W,
            line=line_of(events, target),
            seq=target["seq"],
        )
    )
    return out


def _projection() -> list[Example]:
    out: list[Example] = []

    def replacer(
        rule: str,
        version: int,
        description: str,
        op: Any,
        cites: list[int] | None,
        type_: str = "user/message",
        data: Any = None,
        events: list[Event] | None = None,
    ) -> None:
        events = base_events(version) if events is None else events
        meta: Event = {} if cites is None else {"sourceEventSeqs": cites}
        new = ev(type_, user_message("Summary", "m-sum1") if data is None else data, **meta, surfaceOp=op)
        insert_before(events, "turn/end", [new])
        if op == "own":
            new["surfaceOp"] = {"op": "replace", "startSeq": new["seq"], "endSeq": new["seq"]}
        out.append(
            example(
                rule,
                version,
                description,
                jsonl(header(version), events),
                E,
                line=line_of(events, new),
                seq=new["seq"],
            )
        )

    replacer(
        "replace-endpoint",
        0,
        "a replace whose start 3 is the request/header (not a surface node)",
        {"op": "replace", "start": 3, "end": 3},
        [3],
    )
    replacer(
        "replace-order",
        0,
        "a replace from node 10 to node 2 (end before start)",
        {"op": "replace", "start": 10, "end": 2},
        [2, 10],
    )
    replacer(
        "replace-uncited",
        0,
        "a replace of node 2 without sourceEventSeqs",
        {"op": "replace", "start": 2, "end": 2},
        None,
    )
    replacer(
        "replace-uncited",
        3,
        "a replace of nodes 3..6 citing only 3",
        {"op": "replace", "startSeq": 3, "endSeq": 6},
        [3],
    )
    replacer(
        "replace-not-earlier",
        3,
        "a user/message replacing its own seq (§5 item 4: v3+ endpoints must be < own seq)",
        "own",
        None,
    )
    # tool/result replacements (E11): content-only edits of one tool/result
    for version in (0, 4):
        events = with_tool_pair(version)
        old = find(events, "tool/result")
        data = copy.deepcopy(old["data"])
        data["message"]["id"] = "t2"
        replacer(
            "tool-result-replace",
            version,
            "a tool/result replacement that also changes the message id",
            {"op": "replace", "start": old["seq"], "end": old["seq"]}
            if version < 3
            else {"op": "replace", "startSeq": old["seq"], "endSeq": old["seq"]},
            [old["seq"]],
            "tool/result",
            data,
            events,
        )
    replacer(
        "tool-result-replace",
        0,
        "a tool/result replacing the user/message node 2",
        {"op": "replace", "start": 2, "end": 2},
        [2],
        "tool/result",
        tool_result(0),
        with_tool_pair(0),
    )
    for version in (3, 4):
        replacer(
            "protected-head",
            version,
            "a user/message replacing the system head and the user node",
            {"op": "replace", "startSeq": 4, "endSeq": 3},
            [3, 4],
        )
    return out


def _relational_case(rule: str, version: int) -> tuple[str, list[Event], Event]:
    """(description, events, the event the finding addresses) for a §6.2 rule."""
    events = base_events(version)
    if rule == "turn-open":
        new = ev("turn/start", {"turn": 2})
        insert_before(events, "turn/end", [new])
        return "turn/start 2 while turn 1 is open", events, new
    if rule == "turn-number":
        new = ev("turn/start", {"turn": 3})
        append(events, [new, ev("turn/end", {"turn": 3, "reason": {"kind": "completed"}})])
        return "a second turn numbered 3", events, new
    if rule == "turn-end-mismatch":
        target = find(events, "turn/end")
        target["data"]["turn"] = 2
        return "turn/end names turn 2 while turn 1 is open", events, target
    if rule == "turn-end-step-open":
        remove(events, "step/end")
        return "the step/end is missing before turn/end", events, find(events, "turn/end")
    if rule == "step-outside-turn":
        new = ev("step/start", {"turn": 1, "step": 2})
        append(events, [new, ev("step/end", {"turn": 1, "step": 2})])
        return "a step 2 after turn 1 ended", events, new
    if rule == "step-open":
        new = ev("step/start", {"turn": 1, "step": 2})
        insert_before(events, "step/end", [new])
        return "step/start 2 while step 1 is open", events, new
    if rule == "step-number":
        new = ev("step/start", {"turn": 1, "step": 3})
        insert_before(events, "turn/end", [new, ev("step/end", {"turn": 1, "step": 3})])
        return "step 3 follows step 1", events, new
    if rule == "step-end-mismatch":
        target = find(events, "step/end")
        target["data"]["step"] = 2
        return "step/end names step 2 while step 1 is open", events, target
    if rule == "event-outside-step":
        target = find(events, "assistant/message")
        target["data"]["step"] = 2
        return "assistant/message names step 2 while step 1 is open", events, target
    if rule == "event-outside-turn":
        new = ev("request/header", request_header(version, config={**CONFIG, "model": "x"}))
        new["data"]["reason"] = "change"
        append(events, [new])
        return "a request/header after the turn ended", events, new
    if rule == "tool-result-unmatched":
        new = ev("tool/result", tool_result(version, call_id="c9"), surfaceOp="append")
        insert_before(events, "step/end", [new])
        return "a tool/result for c9 with no tool/call", events, new
    if rule == "tool-call-duplicate":
        call, dup = tool_call(), tool_call()
        result = ev("tool/result", tool_result(version), sourceEventSeqs=[], surfaceOp="append")
        insert_before(events, "step/end", [call, dup, result])
        result["sourceEventSeqs"] = [dup["seq"]]
        return "tool/call c1 started twice in one step", events, dup
    if rule == "unresolved-call":
        insert_before(events, "step/end", [tool_call()])
        return "tool/call c1 never answered before step/end", events, find(events, "step/end")
    raise AssertionError(f"no relational case for {rule}")


RELATIONAL_RULES = (
    "turn-open",
    "turn-number",
    "turn-end-mismatch",
    "turn-end-step-open",
    "step-outside-turn",
    "step-open",
    "step-number",
    "step-end-mismatch",
    "event-outside-step",
    "event-outside-turn",
    "tool-result-unmatched",
    "tool-call-duplicate",
    "unresolved-call",
)


def _relational() -> list[Example]:
    out: list[Example] = []
    for rule in RELATIONAL_RULES:
        for version in (0, 4):
            description, events, target = _relational_case(rule, version)
            out.append(
                example(
                    rule,
                    version,
                    description,
                    jsonl(header(version), events),
                    severity_in(rule, version),
                    line=line_of(events, target),
                    seq=target["seq"],
                )
            )
    for version in (0, 1):
        out.append(
            example(
                "seed-length-marker",
                version,
                "seedLength 3 but no session/end-seed at seq 3",
                jsonl(header(version, parentSession="p", seedLength=3), base_events(version)),
                W,
                line=1,
            )
        )
    for version in (0, 4):
        events = remove(base_events(version), "turn/end")
        out.append(
            example(
                "open-turn",
                version,
                "the log ends inside turn 1 (no turn/end)",
                jsonl(header(version), events),
                W,
                seq=0,
            )
        )
    return out


def _zstd_variants() -> list[Example]:
    """A few line-level rules again on zstd input: addresses are plaintext lines + frame."""
    out: list[Example] = []
    for version in (0, 3):
        events = base_events(version)
        events.pop()  # drop the turn/end
        raw = jsonl(header(version), events)
        out.append(
            example(
                "open-turn", version, "the log ends inside turn 1", to_zstd(raw), W, encoding="zstd", seq=0
            )
        )
    events = base_events(2)
    target = find(events, "user/message")
    del target["surfaceOp"]
    out.append(
        example(
            "surface-op-missing",
            2,
            "user/message without surfaceOp",
            to_zstd(jsonl(header(2), events)),
            E,
            encoding="zstd",
            line=line_of(events, target),
            seq=target["seq"],
            frame=1,
        )
    )
    return out


def build_examples() -> list[Example]:
    return [
        *_physical(),
        *_zstd(),
        *_header(),
        *_envelope(),
        *_vocabulary(),
        *_shapes(),
        *_projection(),
        *_relational(),
        *_zstd_variants(),
        *_codex(),
    ]


def _codex() -> list[Example]:
    from tests.rules.codex_examples import codex_examples  # imports Example from here

    return codex_examples()


# -- Claude Code transcripts (issue 17): real files the lane recorded, named by ``source`` ------

CLAUDE_EXAMPLES: tuple[tuple[str, str, str, Severity, int | None], ...] = (
    # (rule, fixture path under fixtures/claude, description, severity, expected line)
    ("claude-fragment", "lane/damaged-torn-tail/resumed", "the CLI appended after a cut last line", E, 22),
    ("claude-dangling-tool-use", "projects/kill-tool", "SIGKILL while a Bash call ran", W, 16),
    ("claude-unanswered-turn", "projects/kill-mid-stream", "SIGKILL while the reply streamed", W, 3),
    ("claude-orphan-tool-result", "projects/damaged-orphan-result", "the tool_use line deleted", W, 17),
    ("claude-parent-missing", "projects/damaged-broken-parent", "an attachment line deleted", W, 4),
    ("claude-duplicate-uuid", "projects/damaged-duplicate-uuid", "the prompt line appended again", W, 23),
    ("claude-several-sessions", "projects/damaged-two-sessions", "another session's entries appended", W, 23),
    (
        "claude-concurrent-writers",
        "projects/concurrent-writers",
        "two CLIs resumed the session at once",
        W,
        39,
    ),
    ("claude-entry-shape", "projects/damaged-entry-shape", "an assistant entry without uuid", W, 20),
    ("claude-unknown-type", "projects/damaged-unknown-type", "an entry type from a newer CLI", N, 4),
    ("claude-writer-version", "projects/text", "any transcript: its writer's version", N, 3),
    ("claude-subagent-dangling", "projects/kill-subagent/*/subagents", "SIGKILL inside a subagent", N, 11),
)


def claude_examples() -> list[Example]:
    root = Path(__file__).resolve().parents[2] / "fixtures" / "claude"
    found = []
    for rule, where, description, severity, line in CLAUDE_EXAMPLES:
        (path,) = sorted(root.glob(f"{where}/*.jsonl"))
        found.append(
            Example(
                rule,
                0,
                description,
                path.read_bytes(),
                severity,
                {"line": line} if line is not None else {},
                filename=path.name,
                source=f"fixtures/claude/{path.relative_to(root)}",
            )
        )
    return found


EXAMPLES: tuple[Example, ...] = tuple(build_examples()) + tuple(claude_examples())


def example_id(ex: Example) -> str:
    same = [x for x in EXAMPLES if (x.rule, x.version, x.encoding) == (ex.rule, ex.version, ex.encoding)]
    suffix = f"-{same.index(ex) + 1}" if len(same) > 1 else ""
    return f"{ex.rule}-v{ex.version}-{ex.encoding}{suffix}"


# -- docs/rules.md ------------------------------------------------------------------------------

INTRO = """\
# Rule reference

<!-- Generated by tests/rules/test_rules.py from sesstool/core/rules.py and
tests/rules/examples.py. Do not edit by hand: run
`SESSTOOL_UPDATE_GOLDENS=1 .venv/bin/pytest tests/rules` to regenerate. -->

Every problem `sesstool validate` reports is a **finding** of one **rule**. A
rule id such as `seq-gap` or `zstd-torn-frame` names the rule. Rule ids are a stable public
interface: they appear in text, JSON, GitHub and JUnit output and may be used in CI scripts, so
an id is never renamed or reused; a new check gets a new id.

Each finding has a **severity**, which for some rules depends on the log's format version:

* **error** — a DeepSeek Harness reader of that version refuses the log.
* **warning** — suspicious, or the log is in a torn or interrupted state that a repair can
  close; a DeepSeek Harness reader still accepts it.
* **info** — noted; nothing is wrong with the log.

`sesstool validate --fail-on error|warning|info` (default `error`) exits 1 when any finding is
at or above that severity, so `--fail-on warning` also fails torn and interrupted logs.

The **verdict** column says what a finding of the rule makes of a log that is otherwise clean:
`corrupt` (a damaged log), `unsupported` (a log this reader must not interpret, e.g. written by
a newer harness — never corruption, spec §1.4), `torn` (an uncommitted tail a repair drops),
`interrupted` (a turn left open, §6.4), or `—` (the verdict stays `clean`).

Each rule below shows one or more minimal examples. Every example is one of the clean base logs
at the end of this page with a single defect; the block shows the example's lines that differ
from that base (JSONL, one record per line). Binary examples (zstd, bad bytes) are described
instead.
"""


def _runs(values: list[tuple[int, str]]) -> str:
    """[(version, text)] → 'a (v0–v3), b (v4)', or 'a' when every version agrees."""
    groups: list[tuple[int, int, str]] = []
    for version, text in values:
        if groups and groups[-1][2] == text and groups[-1][1] == version - 1:
            groups[-1] = (groups[-1][0], version, text)
        else:
            groups.append((version, version, text))
    if len(groups) == 1:
        return groups[0][2]
    return ", ".join(f"{t} (v{a})" if a == b else f"{t} (v{a}–v{b})" for a, b, t in groups)


def severity_text(rule_id: str) -> str:
    return _runs([(v, severity_in(rule_id, v).label) for v in VERSIONS])


def verdict_text(rule_id: str) -> str:
    values = [(v, verdict_for(rule_id, severity_in(rule_id, v))) for v in VERSIONS]
    return _runs([(v, "—" if t == "clean" else t) for v, t in values])


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(ch in text for ch in "\x00\ufeff\r"):
        return None
    return text


def _shorten(line: str, limit: int = 1000) -> str:
    if len(line) <= limit:
        return line
    return f"{line[:120]}… ({len(line) - 180} characters omitted) …{line[-60:]}"


_SEQ = re.compile(r'"seq0?":\d+')


def _changed(old: Iterable[str], new: list[str]) -> list[int]:
    """Indices of ``new`` lines that differ from ``old``; around a pure deletion, its neighbours."""
    shown: list[int] = []
    matcher = difflib.SequenceMatcher(a=list(old), b=new, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        span = range(j1, j2) if j2 > j1 else range(max(j1 - 1, 0), min(j1 + 1, len(new)))
        shown.extend(j for j in span if j not in shown)
    return sorted(shown)


def excerpt(ex: Example) -> tuple[str, list[str]] | None:
    """(what is shown, the lines) — the example's lines that differ from its base log."""
    if ex.encoding != "raw":
        return None
    text = _printable(ex.data)
    base = _printable(base_log(ex.version))
    if text is None or base is None:
        return None
    new, old = text.split("\n"), base.split("\n")
    # Lines that differ from the base only by their renumbered seq are not the defect; they
    # count only when nothing else differs (a seq defect).
    shown = _changed([_SEQ.sub('"seq":#', x) for x in old], [_SEQ.sub('"seq":#', x) for x in new])
    shown = [j for j in shown or _changed(old, new) if new[j] != ""]
    if not shown:
        return None
    lines = [_shorten(new[j]) for j in shown]
    where = _numbers([j + 1 for j in shown])
    torn = "" if text.endswith("\n") else " (the last line has no newline)"
    return f"{where} of the example{torn}", lines


def _address_text(ex: Example) -> str:
    parts = [f"{k} {v}" for k, v in ex.expect_address.items() if v is not None]
    return ", ".join(parts)


CLI_OPTIONS = {
    "max_line": "--max-line-bytes",
    "max_decompressed": "--max-decompressed",
    "max_window": "--max-window",
    "dialect": "--dialect",
}


def _numbers(numbers: list[int]) -> str:
    """[3, 4, 5, 9] → 'lines 3–5, 9'."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and spans[-1][1] == n - 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    text = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)
    return ("line " if len(numbers) == 1 else "lines ") + text


def render_example(ex: Example) -> str:
    if ex.source is not None:
        where = f" at line {ex.expect_address['line']}" if ex.expect_address.get("line") else ""
        return (
            f"**Claude Code transcript** — {ex.description}. Expected: {ex.expect_severity.label}{where}. "
            f"The bytes are `{ex.source}`, written by the real CLI (tests/claude_lane).\n"
        )
    opts = ""
    if ex.options:
        opts = " — with " + ", ".join(f"`{CLI_OPTIONS.get(k, k)} {v}`" for k, v in sorted(ex.options.items()))
    if ex.filename is not None:
        opts += f" — stored as `{ex.filename}`"
    head = (
        f"**v{ex.version}, {ex.encoding}** — {ex.description}{opts}. "
        f"Expected: {ex.expect_severity.label} at {_address_text(ex)}."
    )
    if ex.encoding == "raw" and ex.data == base_log(ex.version):
        return head + f" The bytes are the clean v{ex.version} base log.\n"
    shown = excerpt(ex)
    if shown is None:
        return head + f" ({len(ex.data)} bytes, not shown.)\n"
    where, lines = shown
    body = "\n".join(lines)
    return f"{head} Showing {where}:\n\n```jsonl\n{body}\n```\n"


def render_rules_doc(examples: Iterable[Example] = EXAMPLES) -> str:
    by_rule: dict[str, list[Example]] = {}
    for ex in examples:
        by_rule.setdefault(ex.rule, []).append(ex)
    out = [INTRO, "\n## Summary\n\n| Rule | Severity | Spec | Verdict |\n|---|---|---|---|\n"]
    for rule in RULES.values():
        out.append(
            f"| [`{rule.id}`](#{rule.id}) | {severity_text(rule.id)} | {rule.section} | "
            f"{verdict_text(rule.id)} |\n"
        )
    out.append("\n## Rules\n")
    for rule in RULES.values():
        out.append(
            f"\n### {rule.id}\n\n{rule.title}.\n\n"
            f"* Severity: {severity_text(rule.id)}\n* Spec: {rule.section}\n"
            f"* Verdict: {verdict_text(rule.id)}\n\n"
        )
        exs = by_rule.get(rule.id, [])
        if not exs:
            out.append("No example.\n")
        out.append("\n".join(render_example(ex) for ex in exs))
    out.append(
        "\n## Base logs\n\nThe balanced one-turn session of spec §12 E9 in each version. "
        "Examples about tool results first add a `tool/call c1` and its `tool/result` "
        "before the `step/end` (those lines then show in the example too).\n"
    )
    for version in VERSIONS:
        out.append(f"\n### v{version}\n\n```jsonl\n{base_log(version).decode()}```\n")
    return "".join(out)
