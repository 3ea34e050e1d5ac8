"""Helpers of the interop lane: the generated-log manifest, running the Node scripts and the
CLI, sesstool's own view of a log's events, and crafting defective logs from real ones."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from sesstool.core.chunk_rows import RowError, expand_row
from sesstool.core.jsonline import LineError, loads
from sesstool.core.physical import PhysicalIssue
from sesstool.core.upgrade.v1 import v0_reader_view
from sesstool.store.raw_reader import RawReader
from sesstool.store.source import open_source
from sesstool.store.zstd_reader import ZstdReader
from tests.conftest import run_sesstool

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SETUP = HERE / "setup.sh"
WRITER = HERE / "writer.mjs"
READER = HERE / "reader.mjs"

# Must match VARIANTS and SCENARIOS in writer.mjs (test_manifest_matches_the_writer checks it).
VARIANTS = ("raw-unpacked", "raw-packed", "zstd-unpacked", "zstd-packed")
CLEAN_SCENARIOS = ("multi-turn", "compaction", "fork-child", "subagent", "resume", "resume-after-crash")
CRASH_SCENARIOS = (
    "crash-dangling-call",
    "crash-not-started",
    "crash-mixed-calls",
    "crash-streaming",
    "crash-between-steps",
    "crash-torn-tail",
    "crash-torn-balanced",
)
SCENARIOS = CLEAN_SCENARIOS + CRASH_SCENARIOS
ROW_TAGS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})

Json = Any


@dataclass(frozen=True)
class Log:
    """One generated log and the real library's report on it."""

    name: str
    variant: str
    kind: str  # clean | crash
    id: str
    path: Path
    oracle: dict[str, Json]
    library_repaired: Path


def run_node(node: str, script: Path, *args: str, timeout: float = 300) -> str:
    proc = subprocess.run(
        [node, str(script), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"{script.name} {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc.stdout


def library_read(node: str, jobs: list[dict[str, Json]], workdir: Path) -> list[dict[str, Json]]:
    """Load files through the real backend (reader.mjs), one Node process for all jobs."""
    if not jobs:
        return []
    jobs_file = workdir / f"jobs-{len(list(workdir.glob('jobs-*.json')))}.json"
    jobs_file.write_text(json.dumps(jobs))
    results: list[dict[str, Json]] = json.loads(run_node(node, READER, "--jobs", str(jobs_file)))
    return results


def cli_json(*args: str) -> tuple[int, dict[str, Json]]:
    """Run sesstool in-process; (exit code, its JSON document or {} when it printed none)."""
    run = run_sesstool(*args)
    try:
        doc: dict[str, Json] = json.loads(run.stdout) if run.stdout.strip() else {}
    except json.JSONDecodeError:
        doc = {"unparsed_stdout": run.stdout}
    if run.stderr:
        doc.setdefault("_stderr", run.stderr)
    return run.exit_code, doc


def sesstool_events(path: Path, limit: int) -> list[list[Json]]:
    """[seq, type] of the first ``limit`` events as sesstool's readers and record decoder see
    them (header skipped, packed rows expanded); stops at the first undecodable record."""
    out: list[list[Json]] = []
    with open_source(str(path)) as (stream, info):
        reader = ZstdReader(stream) if info.encoding == "zstd" else RawReader(stream)
        header = True
        version: Json = None
        for item in reader.batches():
            if isinstance(item, PhysicalIssue):
                if item.fatal:
                    break
                continue
            for raw in item[0]:
                if header:
                    header = False
                    head = loads(raw)
                    version = head.get("version") if isinstance(head, dict) else None
                    continue
                if len(out) >= limit:
                    return out
                try:
                    obj = loads(raw)
                    events = (
                        expand_row(obj) if isinstance(obj, dict) and obj.get("type") in ROW_TAGS else [obj]
                    )
                except (LineError, RowError):
                    return out
                for event in events:
                    if not isinstance(event, dict):
                        return out
                    # the type as the v0 scan reads it: a legacy steering/message is a user/message
                    seen = v0_reader_view(event, None) if version == 0 else None
                    out.append([event.get("seq"), (seen or event).get("type")])
    return out[:limit]


def message_shape(message: Json) -> Json:
    """What the differential compares of a derived message: id, role, source and the content
    block types (tool-result blocks with their inner block types)."""
    blocks: list[Json] = []
    for block in message.get("content", []):
        if isinstance(block, dict) and block.get("type") == "tool-result":
            inner = [b.get("type") for b in block.get("content", []) if isinstance(b, dict)]
            blocks.append(["tool-result", inner])
        else:
            blocks.append(block.get("type") if isinstance(block, dict) else repr(block))
    return {
        "id": message.get("id"),
        "role": message.get("role"),
        "source": message.get("source"),
        "blocks": blocks,
    }


# ---------------------------------------------------------------------------------------------
# Logical lines and zstd frames, for crafting defective logs from real ones.


def zstd_frames(data: bytes) -> list[bytes]:
    """Split a concatenation of complete zstd frames and decode each (checksums verified)."""
    frames: list[bytes] = []
    offset = 0
    dctx = zstandard.ZstdDecompressor()
    while offset < len(data):
        frame_len = frame_length(data, offset)
        obj = dctx.decompressobj()
        frames.append(obj.decompress(data[offset : offset + frame_len]))
        offset += frame_len
    return frames


def frame_length(data: bytes, start: int) -> int:
    """Length of the complete zstd frame at ``start`` (walks the block headers)."""
    pos = start + 4
    descriptor = data[pos]
    pos += 1
    fcs_flag = descriptor >> 6
    single = bool(descriptor & 0x20)
    checksum = bool(descriptor & 0x04)
    dict_flag = descriptor & 0x03
    dict_bytes = (0, 1, 2, 4)[dict_flag]
    fcs_bytes = (1 if single else 0) if fcs_flag == 0 else 1 << fcs_flag
    pos += (0 if single else 1) + dict_bytes + fcs_bytes
    while True:
        header = int.from_bytes(data[pos : pos + 3], "little")
        pos += 3
        last, block_type, block_size = header & 1, (header >> 1) & 3, header >> 3
        pos += 1 if block_type == 1 else block_size
        if last:
            break
    return pos + 4 - start if checksum else pos - start


def read_log_lines(path: Path) -> tuple[str, list[bytes]]:
    """(encoding, logical lines without newlines) of a log whose frames are all complete."""
    data = path.read_bytes()
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        text = b"".join(zstd_frames(data))
        encoding = "zstd"
    else:
        text = data
        encoding = "raw"
    assert text.endswith(b"\n"), f"{path} has a torn tail; craft from complete logs only"
    return encoding, text[:-1].split(b"\n")


def compress_frame(plaintext: bytes, *, checksum: bool = True) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=checksum).compress(plaintext)


def encode_log(encoding: str, lines: list[bytes]) -> bytes:
    """The writers' physical layout: raw lines, or a header frame plus one body frame."""
    plaintext = b"".join(line + b"\n" for line in lines)
    if encoding == "raw":
        return plaintext
    header, body = lines[0] + b"\n", b"".join(line + b"\n" for line in lines[1:])
    return compress_frame(header) + (compress_frame(body) if body else b"")


# ---------------------------------------------------------------------------------------------
# Crafted defects. Each edit takes the real log's lines (header first) and returns new bytes.


def _obj(line: bytes) -> Json:
    return json.loads(line)


def _dump(obj: Json) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _index(lines: list[bytes], kind: str, nth: int = 0) -> int:
    found = [i for i, line in enumerate(lines) if i > 0 and _obj(line).get("type") == kind]
    assert len(found) > nth, f"no {kind} #{nth} in the base log"
    return found[nth]


def _edit(lines: list[bytes], kind: str, change: Callable[[Json], None], nth: int = 0) -> list[bytes]:
    i = _index(lines, kind, nth)
    obj = _obj(lines[i])
    change(obj)
    return [*lines[:i], _dump(obj), *lines[i + 1 :]]


def _header(lines: list[bytes], change: Callable[[Json], None]) -> list[bytes]:
    obj = _obj(lines[0])
    change(obj)
    return [_dump(obj), *lines[1:]]


def _last_seq_time(lines: list[bytes]) -> tuple[int, int]:
    last = _obj(lines[-1])
    if last.get("type") in ROW_TAGS:
        return last["seq0"] + len(last["data"].get("texts", last["data"].get("args", []))) - 1, last["time0"]
    return int(last["seq"]), int(last["time"])


def _append_event(lines: list[bytes], kind: str, data: Json, **extra: Json) -> list[bytes]:
    seq, time = _last_seq_time(lines)
    return [*lines, _dump({"type": kind, "seq": seq + 1, "time": time, "data": data, **extra})]


def _set(key: str, value: Json) -> Callable[[Json], None]:
    def change(obj: Json) -> None:
        obj[key] = value

    return change


def _drop(key: str) -> Callable[[Json], None]:
    def change(obj: Json) -> None:
        obj.pop(key, None)

    return change


def _data(change: Callable[[Json], None]) -> Callable[[Json], None]:
    def inner(obj: Json) -> None:
        change(obj["data"])

    return inner


def _steering_wrapped(obj: Json) -> None:
    obj["type"] = "steering/message"
    obj["data"] = {"turn": 2, "message": obj["data"]}


def _steering_bare(obj: Json) -> None:
    message = obj["data"]
    obj["type"] = "steering/message"
    obj["data"] = {"turn": 2, "content": message["content"], "source": message["source"]}


def _pre_identity_user(obj: Json) -> None:
    message = obj["data"]
    obj["data"] = {"content": message["content"], "source": message["source"]}


def _pre_identity_assistant(obj: Json) -> None:
    data = obj["data"]
    message = data.pop("message")
    source = message["source"]
    data["content"] = message["content"]
    data["provenance"] = {"provider": source["provider"], "model": source["model"]}


def _pre_identity_tool_result(obj: Json) -> None:
    data = obj["data"]
    message = data.pop("message")
    block = message["content"][0]
    data["callId"] = message["source"]["callId"]
    data["content"] = block["content"]
    data["isError"] = block.get("isError", False)


def _role(obj: Json) -> None:
    obj["data"]["message"]["role"] = "user"


def _mismatch(obj: Json) -> None:
    obj["data"]["message"]["content"][0]["toolCallId"] = "call_other"


def _bad_row(obj: Json) -> None:
    obj["data"]["dt"] = []


def _turn_end_reason(reason: Json) -> Callable[[Json], None]:
    def change(obj: Json) -> None:
        obj["data"]["reason"] = reason

    return change


def _replace_bytes(old: bytes, new: bytes) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        assert old in lines[0]
        return [lines[0].replace(old, new, 1), *lines[1:]]

    return edit


def _neg_zero_created_at(lines: list[bytes]) -> list[bytes]:
    created = _obj(lines[0])["createdAt"]
    return _replace_bytes(f'"createdAt":{created}'.encode(), b'"createdAt":-0')(lines)


def _nan(lines: list[bytes]) -> list[bytes]:
    i = next(i for i, line in enumerate(lines) if b'"inputTokens":100' in line and i < len(lines) - 5)
    return [*lines[:i], lines[i].replace(b'"inputTokens":100', b'"inputTokens":NaN', 1), *lines[i + 1 :]]


def _steering_unmarked(obj: Json) -> None:
    _steering_wrapped(obj)
    obj.pop("surfaceOp", None)


def _range_encode(obj: Json) -> None:
    seqs = obj["sourceEventSeqs"]
    assert len(seqs) >= 3 and seqs == list(range(seqs[0], seqs[-1] + 1))
    obj["sourceEventSeqs"] = [[seqs[0], seqs[-1]]]


def _first_with_sources(lines: list[bytes], change: Callable[[Json], None]) -> list[bytes]:
    for i, line in enumerate(lines):
        obj = _obj(line)
        if i > 0 and obj.get("type") == "assistant/message" and len(obj.get("sourceEventSeqs", [])) >= 3:
            change(obj)
            return [*lines[:i], _dump(obj), *lines[i + 1 :]]
    raise AssertionError("no assistant/message citing its chunks")


def _no_provider(obj: Json) -> None:
    del obj["data"]["header"]["config"]["provider"]


def _adapter_defaults(obj: Json) -> None:
    obj["data"]["header"]["adapterDefaults"] = {"maxTokens": True}


def _flip_is_error(obj: Json) -> None:
    obj["data"]["message"]["content"][0]["isError"] = True


def _replace_from_log_only(obj: Json) -> None:
    obj["surfaceOp"]["start"] = 0


def _widget_block(obj: Json) -> None:
    obj["content"].append({"type": "widget", "x": 1})


def _ghost(obj: Json) -> None:
    message = obj["data"]["message"]
    message["source"]["callId"] = "call_ghost"
    message["content"][0]["toolCallId"] = "call_ghost"


def _end_seed(obj: Json) -> None:
    obj["type"] = "session/end-seed"
    obj["data"] = {}


def _rename_last_call_block(obj: Json) -> None:
    for block in obj["data"]["message"]["content"]:
        if block["type"] == "tool-call":
            block["id"] = "call_other"


def _last(kind: str, change: Callable[[Json], None]) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        count = sum(1 for i, line in enumerate(lines) if i > 0 and _obj(line).get("type") == kind)
        return _edit(lines, kind, change, nth=count - 1)

    return edit


def _replacement(kind: str, change: Callable[[Json], None]) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        for i, line in enumerate(lines):
            obj = _obj(line)
            if i > 0 and obj.get("type") == kind and isinstance(obj.get("surfaceOp"), dict):
                change(obj)
                return [*lines[:i], _dump(obj), *lines[i + 1 :]]
        raise AssertionError(f"no {kind} replacement")

    return edit


def _both(*edits: Callable[[list[bytes]], list[bytes]]) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        for one in edits:
            lines = one(lines)
        return lines

    return edit


@dataclass(frozen=True)
class Craft:
    """A defect made by editing a real log. ``encodings`` limits it to raw or zstd input;
    ``build`` overrides the physical layout (bytes from the encoding and edited lines)."""

    name: str
    base: str  # scenario whose log is edited
    edit: Callable[[list[bytes]], list[bytes]]
    packed: bool = False
    encodings: tuple[str, ...] = ("raw", "zstd")
    build: Callable[[str, list[bytes]], bytes] | None = None
    note: str = ""


def _raw_only_bytes(data: Callable[[list[bytes]], bytes]) -> Callable[[str, list[bytes]], bytes]:
    def build(_encoding: str, lines: list[bytes]) -> bytes:
        return data(lines)

    return build


def _zstd_layout(make: Callable[[list[bytes]], bytes]) -> Callable[[str, list[bytes]], bytes]:
    def build(_encoding: str, lines: list[bytes]) -> bytes:
        return make(lines)

    return build


def _frames_each_line(lines: list[bytes], *, checksum: bool = True) -> list[bytes]:
    return [compress_frame(line + b"\n", checksum=checksum) for line in lines]


def _skippable_mid(lines: list[bytes]) -> bytes:
    frames = _frames_each_line(lines)
    skippable = (0x184D2A50).to_bytes(4, "little") + (4).to_bytes(4, "little") + b"skip"
    mid = len(frames) // 2
    return b"".join([*frames[:mid], skippable, *frames[mid:]])


def _no_checksum(lines: list[bytes]) -> bytes:
    body = b"".join(line + b"\n" for line in lines[1:])
    return compress_frame(lines[0] + b"\n", checksum=False) + compress_frame(body, checksum=False)


def _header_frame_with_event(lines: list[bytes]) -> bytes:
    first = lines[0] + b"\n" + lines[1] + b"\n"
    return compress_frame(first) + compress_frame(b"".join(line + b"\n" for line in lines[2:]))


def _bitflip_mid(lines: list[bytes]) -> bytes:
    frames = _frames_each_line(lines)
    mid = len(frames) // 2
    victim = bytearray(frames[mid])
    victim[len(victim) // 2] ^= 0x40
    frames[mid] = bytes(victim)
    return b"".join(frames)


def _straddle(lines: list[bytes]) -> bytes:
    plaintext = b"".join(line + b"\n" for line in lines[1:])
    cut = len(plaintext) // 2
    while plaintext[cut - 1 : cut] == b"\n":
        cut += 1
    return (
        compress_frame(lines[0] + b"\n") + compress_frame(plaintext[:cut]) + compress_frame(plaintext[cut:])
    )


def _last_frame_mid_record(lines: list[bytes]) -> bytes:
    body = b"".join(line + b"\n" for line in lines[1:])[:-1]  # the final record lacks its newline
    return compress_frame(lines[0] + b"\n") + compress_frame(body)


def _trailing_3_bytes(lines: list[bytes]) -> bytes:
    return encode_log("zstd", lines) + b"\x28\xb5\x2f"


def _trailing_garbage(lines: list[bytes]) -> bytes:
    return encode_log("zstd", lines) + b"garbage!"


def _crlf(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\r\n" for line in lines)


def _bom(lines: list[bytes]) -> bytes:
    return b"\xef\xbb\xbf" + b"".join(line + b"\n" for line in lines)


def _no_final_newline(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)[:-1]


def _blank_line(lines: list[bytes]) -> list[bytes]:
    mid = len(lines) // 2
    return [*lines[:mid], b"", *lines[mid:]]


def _garbage_at(kind: str, nth: int = 0) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        i = _index(lines, kind, nth)
        return [*lines[:i], lines[i][: len(lines[i]) // 2], *lines[i + 1 :]]

    return edit


def _delete(kind: str, nth: int = 0, last: bool = False) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        i = [j for j, line in enumerate(lines) if j > 0 and _obj(line).get("type") == kind][
            -1 if last else nth
        ]
        return [*lines[:i], *lines[i + 1 :]]

    return edit


def _append_garbage(lines: list[bytes]) -> list[bytes]:
    return [*lines, b'{"type":"turn/start","se']


def _duplicate_last(lines: list[bytes]) -> list[bytes]:
    return [*lines, lines[-1]]


CRAFTS: tuple[Craft, ...] = (
    # §6.3: a bad record proven committed by a later turn/end is corruption; in the tail it is not.
    Craft("corrupt-line-before-turn-end", "multi-turn", _garbage_at("tool/call")),
    Craft("corrupt-line-after-last-turn-end", "multi-turn", _append_garbage),
    Craft("corrupt-line-in-open-turn", "crash-dangling-call", _garbage_at("tool/call", 2)),
    Craft("seq-gap-before-turn-end", "multi-turn", _delete("todo/write")),
    Craft("seq-gap-in-open-turn", "crash-dangling-call", _delete("user/message", last=True)),
    Craft("duplicate-final-turn-end", "multi-turn", _duplicate_last),
    Craft("missing-line-before-final-turn-end", "multi-turn", _delete("step/end", last=True)),
    Craft("blank-line-mid-log", "multi-turn", _blank_line),
    Craft("nan-in-event", "multi-turn", _nan),
    Craft("malformed-packed-row", "multi-turn", lambda ls: _edit(ls, "text-chunks", _bad_row), packed=True),
    # Header (§2) and version (§1.4).
    Craft("version-5", "multi-turn", lambda ls: _header(ls, _set("version", 5))),
    Craft("version-1", "multi-turn", lambda ls: _header(ls, _set("version", 1))),
    Craft("version-minus-1", "multi-turn", lambda ls: _header(ls, _set("version", -1))),
    Craft("version-string", "multi-turn", lambda ls: _header(ls, _set("version", "0"))),
    Craft("missing-delegation-depth", "multi-turn", lambda ls: _header(ls, _drop("delegationDepth"))),
    Craft("created-at-negative-zero", "multi-turn", _neg_zero_created_at),
    Craft(
        "retired-header-field", "multi-turn", lambda ls: _header(ls, _set("sandboxMode", "workspace-write"))
    ),
    Craft("header-extra-key", "multi-turn", lambda ls: _header(ls, _set("title", "shop"))),
    Craft("relative-cwd", "multi-turn", lambda ls: _header(ls, _set("cwd", "shop app"))),
    Craft("seed-length-exceeds-events", "multi-turn", lambda ls: _header(ls, _set("seedLength", 5000))),
    Craft("header-only", "multi-turn", lambda ls: ls[:1]),
    # Vocabulary (§1.4, §6.1).
    Craft(
        "unknown-required-event-at-end",
        "multi-turn",
        lambda ls: _append_event(ls, "acme/widget-state", {"mode": "x"}),
    ),
    Craft(
        "unknown-ignorable-event-at-end",
        "multi-turn",
        lambda ls: _append_event(ls, "acme/telemetry", {"ms": 42}, ignorable=True),
    ),
    Craft(
        "unknown-required-event-mid", "multi-turn", lambda ls: _edit(ls, "todo/write", _set("type", "acme/x"))
    ),
    Craft(
        "request-header-delta",
        "multi-turn",
        lambda ls: _edit(ls, "request/header", _set("type", "request/header-delta")),
    ),
    Craft("mode-set", "multi-turn", lambda ls: _edit(ls, "todo/write", _set("type", "mode/set"))),
    Craft(
        "request-header-reason-fallback",
        "multi-turn",
        lambda ls: _edit(ls, "request/header", _data(_set("reason", "fallback"))),
    ),
    # Envelope and message shapes (§3, §6.1).
    Craft("envelope-extra-key", "multi-turn", lambda ls: _edit(ls, "todo/write", _set("note", 1))),
    Craft("time-not-integer", "multi-turn", lambda ls: _edit(ls, "todo/write", _set("time", 1.5))),
    Craft("surface-op-missing", "multi-turn", lambda ls: _edit(ls, "user/message", _drop("surfaceOp"))),
    Craft(
        "surface-op-on-log-only",
        "multi-turn",
        lambda ls: _edit(ls, "todo/write", _set("surfaceOp", "append")),
    ),
    Craft("assistant-role-user", "multi-turn", lambda ls: _edit(ls, "assistant/message", _role)),
    Craft("tool-result-mismatched-ids", "multi-turn", lambda ls: _edit(ls, "tool/result", _mismatch)),
    Craft(
        "turn-end-extra-data-key", "multi-turn", lambda ls: _edit(ls, "turn/end", _data(_set("note", "x")))
    ),
    Craft(
        "turn-end-reason-extra-key",
        "multi-turn",
        lambda ls: _edit(ls, "turn/end", _turn_end_reason({"kind": "completed", "detail": 1})),
    ),
    # Legacy v0 shapes the library converts on read (§1.3 v0→v1 list; coordinator import).
    Craft(
        "legacy-turn-start-trigger",
        "multi-turn",
        lambda ls: _edit(ls, "turn/start", _data(_set("trigger", {"kind": "user"}))),
    ),
    Craft(
        "legacy-turn-end-aborted",
        "multi-turn",
        lambda ls: _edit(ls, "turn/end", _turn_end_reason({"kind": "aborted"}), nth=3),
    ),
    Craft(
        "legacy-turn-end-disposed",
        "multi-turn",
        lambda ls: _edit(ls, "turn/end", _turn_end_reason({"kind": "disposed"})),
    ),
    Craft(
        "legacy-turn-end-error",
        "multi-turn",
        lambda ls: _edit(ls, "turn/end", _turn_end_reason({"kind": "error", "step": 1, "message": "boom"})),
    ),
    Craft(
        "legacy-steering-wrapped",
        "multi-turn",
        lambda ls: _edit(ls, "user/message", _steering_wrapped, nth=1),
    ),
    Craft("legacy-steering-bare", "multi-turn", lambda ls: _edit(ls, "user/message", _steering_bare, nth=1)),
    Craft("legacy-pre-identity-user", "multi-turn", lambda ls: _edit(ls, "user/message", _pre_identity_user)),
    Craft(
        "legacy-pre-identity-assistant",
        "multi-turn",
        lambda ls: _edit(ls, "assistant/message", _pre_identity_assistant),
    ),
    Craft(
        "legacy-pre-identity-tool-result",
        "multi-turn",
        lambda ls: _edit(ls, "tool/result", _pre_identity_tool_result),
    ),
    Craft(
        "legacy-steering-without-surface-op",
        "multi-turn",
        lambda ls: _edit(ls, "user/message", _steering_unmarked, nth=1),
    ),
    # More envelope, surface and request checks (§3, §5, §6.1).
    Craft("range-encoded-source-seqs", "multi-turn", lambda ls: _first_with_sources(ls, _range_encode)),
    Craft(
        "empty-source-seqs-on-tool-result",
        "multi-turn",
        lambda ls: _edit(ls, "tool/result", _set("sourceEventSeqs", [])),
    ),
    Craft(
        "request-header-without-provider", "multi-turn", lambda ls: _edit(ls, "request/header", _no_provider)
    ),
    Craft(
        "adapter-defaults-without-config-value",
        "multi-turn",
        lambda ls: _edit(ls, "request/header", _adapter_defaults),
    ),
    Craft("prune-changes-more-than-content", "compaction", _replacement("tool/result", _flip_is_error)),
    Craft("replace-start-not-in-surface", "compaction", _replacement("user/message", _replace_from_log_only)),
    Craft("unknown-content-block", "multi-turn", lambda ls: _edit(ls, "user/message", _data(_widget_block))),
    Craft("orphan-tool-result", "multi-turn", lambda ls: _edit(ls, "tool/result", _ghost)),
    Craft(
        "turn-end-unknown-reason-kind",
        "multi-turn",
        lambda ls: _edit(ls, "turn/end", _turn_end_reason({"kind": "refusal"})),
    ),
    Craft("turn-end-data-not-object", "multi-turn", lambda ls: _edit(ls, "turn/end", _set("data", "done"))),
    Craft("turn-never-ended", "multi-turn", lambda ls: _edit(ls, "turn/end", _end_seed)),
    Craft(
        "unknown-event-and-bad-message",
        "multi-turn",
        _both(
            lambda ls: _edit(ls, "todo/write", _set("type", "acme/x")),
            lambda ls: _edit(ls, "assistant/message", _role),
        ),
    ),
    Craft(
        "unknown-event-then-corrupt-line",
        "multi-turn",
        _both(lambda ls: _edit(ls, "todo/write", _set("type", "acme/x")), _garbage_at("tool/call", 2)),
    ),
    # Closers (§7.1): a started call the assistant never advertised.
    Craft(
        "crash-call-not-advertised",
        "crash-dangling-call",
        _last("assistant/message", _rename_last_call_block),
    ),
    # Physical layout (§9).
    Craft("crlf-line-ends", "multi-turn", lambda ls: ls, encodings=("raw",), build=_raw_only_bytes(_crlf)),
    Craft("bom-before-header", "multi-turn", lambda ls: ls, encodings=("raw",), build=_raw_only_bytes(_bom)),
    Craft(
        "complete-final-record-without-newline",
        "multi-turn",
        lambda ls: ls,
        encodings=("raw",),
        build=_raw_only_bytes(_no_final_newline),
    ),
    Craft(
        "empty-file", "multi-turn", lambda ls: ls, encodings=("raw",), build=_raw_only_bytes(lambda _: b"")
    ),
    Craft(
        "header-without-newline",
        "multi-turn",
        lambda ls: ls,
        encodings=("raw",),
        build=_raw_only_bytes(lambda ls: ls[0]),
    ),
    Craft(
        "zstd-skippable-frame",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_skippable_mid),
    ),
    Craft(
        "zstd-no-checksum", "multi-turn", lambda ls: ls, encodings=("zstd",), build=_zstd_layout(_no_checksum)
    ),
    Craft(
        "zstd-header-frame-with-event",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_header_frame_with_event),
    ),
    Craft(
        "zstd-bitflip-mid-frame",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_bitflip_mid),
    ),
    Craft(
        "zstd-record-straddles-frames",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_straddle),
    ),
    Craft(
        "zstd-complete-frame-ends-mid-record",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_last_frame_mid_record),
    ),
    Craft(
        "zstd-trailing-partial-magic",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_trailing_3_bytes),
    ),
    Craft(
        "zstd-trailing-garbage",
        "multi-turn",
        lambda ls: ls,
        encodings=("zstd",),
        build=_zstd_layout(_trailing_garbage),
    ),
)


def craft_cases() -> Iterator[tuple[Craft, str]]:
    for craft in CRAFTS:
        for encoding in craft.encodings:
            yield craft, encoding


def base_variant(craft: Craft, encoding: str) -> str:
    return f"{encoding}-{'packed' if craft.packed else 'unpacked'}"


def make_crafted(craft: Craft, encoding: str, base: Log, out_dir: Path) -> Path:
    """Write the crafted log under ``out_dir``, named as the backend names its file."""
    src_encoding, lines = read_log_lines(base.path)
    assert src_encoding == encoding
    edited = craft.edit(lines)
    data = craft.build(encoding, edited) if craft.build is not None else encode_log(encoding, edited)
    target = (
        out_dir
        / f"{craft.name}.{encoding}"
        / ("session.jsonl.zstd" if encoding == "zstd" else "session.jsonl")
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target
