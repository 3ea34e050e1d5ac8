"""Deterministic generator of large, realistic, valid DeepSeek Harness v0 session logs.

Used by ``bench/run.py``; also a small CLI of its own::

    python bench/genlog.py gen OUT.jsonl --size 100M [--seed 1] [--torn] [--packed]
    python bench/genlog.py compress OUT.jsonl OUT.jsonl.zstd
    python bench/genlog.py verify OUT.jsonl[.zstd] [--torn]
    python bench/genlog.py selftest

The logs follow ``spec/session-format.md`` (v0): a header line, then turns made of steps with a
user message, a request envelope (``request/header`` + ``request/context``) on the first step of
every turn, streamed ``assistant/chunk`` events cited by the ``assistant/message`` that follows
them, ``tool/call`` + ``tool/result`` pairs, and every few turns a replace compaction between
turns. Seqs are contiguous from 0 and times strictly increase. Everything is derived from one
seeded ``random.Random``: the same arguments always give the same bytes.

``verify`` is an independent checker of the invariants the generator promises (it is not
sesstool's validator and shares no code with it): envelope shape and key order, contiguity,
times, surface metadata and the replace fold, turn/step/tool-call structure, assistant content
equal to its assembled stream, packed rows, zstd framing.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn

import orjson
import zstandard

# Bump when the bytes produced for a given (target, seed, torn, packed) change: run.py reuses
# generated files only when their sidecar records the same generator version.
GENERATOR_VERSION = 1

T0 = 1_760_000_000_000
PROVIDER = "deepseek"
MODEL = "deepseek-chat"
CWD = "/home/dev/projects/orbit"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
PACK_TAGS = {
    "text-delta": "text-chunks",
    "reasoning-delta": "reasoning-chunks",
    "tool-call-delta": "tool-call-chunks",
}
UNPACK_KIND = {tag: kind for kind, tag in PACK_TAGS.items()}
MIN_RUN = 3
BATCH_END_TYPES = frozenset({"step/end", "turn/end"})
MAX_SAFE = 2**53 - 1

Event = dict[str, Any]

# --------------------------------------------------------------------------------------------
# Text material (built once per generator from its seeded RNG)
# --------------------------------------------------------------------------------------------

_WORD_TEXT = (
    "the a an to of in for on with is are be this that it we should can will not and or but "
    "function module class method test tests file files path config value error errors return "
    "import parse parser reader writer stream buffer frame line lines offset byte bytes seq "
    "event events turn step tool call result message session log index cache state update "
    "check fix refactor rename move delete add create handle retry timeout async await lock "
    "schema field key keys type types list dict set map filter reduce sort merge split join "
    "request response header context model provider token tokens usage limit budget memory "
    "performance latency throughput benchmark profile trace debug warning info verbose quiet "
    "build compile install package dependency version release branch commit diff patch "
    "repository directory workspace terminal shell command output exit status signal process "
    "naïve café résumé → ✓ ✗ … 日本語 über straße"
)
_WORDS = tuple(_WORD_TEXT.split())

_IDENT_TEXT = (
    "reader scanner planner encoder decoder publisher validator projector folder checker "
    "frame_index line_offset surface_nodes pending_calls open_turn seq_ranges chunk_rows "
    "load_header iter_records decode_row expand_packed assemble_stream plan_repair fork_seed"
)
_IDENTS = tuple(_IDENT_TEXT.split())

_DIRS = ("src/orbit", "src/orbit/core", "src/orbit/store", "src/orbit/cli", "tests", "docs")
_EXTS = (".py", ".py", ".py", ".md", ".toml", ".json", ".ts")


def _rand_path(rng: random.Random) -> str:
    return f"{rng.choice(_DIRS)}/{rng.choice(_IDENTS)}{rng.choice(_EXTS)}"


def _build_corpus(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    n = 0
    words = _WORDS
    while n < size:
        r = rng.random()
        if r < 0.04:
            w = f"`{rng.choice(_IDENTS)}()`"
        elif r < 0.07:
            w = _rand_path(rng)
        elif r < 0.09:
            w = str(rng.randrange(10_000))
        else:
            w = words[int(rng.random() * len(words))]
        r = rng.random()
        if r < 0.06:
            w += "."
        elif r < 0.1:
            w += ","
        elif r < 0.115:
            w += "\n"
        elif r < 0.12:
            w += ':\n\n    "quoted"\t'
        parts.append(w)
        n += len(w) + 1
    return " ".join(parts)


def _ls_line(rng: random.Random) -> str:
    mode = rng.choice(("-rw-r--r--", "-rwxr-xr-x", "drwxr-xr-x"))
    return (
        f"{mode}  1 dev dev {rng.randrange(40, 90_000):>6} Nov {rng.randrange(1, 31):>2} "
        f"{rng.randrange(24):02d}:{rng.randrange(60):02d} {_rand_path(rng)}"
    )


def _pytest_line(rng: random.Random) -> str:
    verdict = rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
    colour = {"PASSED": "\x1b[32m", "FAILED": "\x1b[31m", "SKIPPED": "\x1b[33m"}[verdict]
    return (
        f"tests/test_{rng.choice(_IDENTS)}.py::test_{rng.choice(_IDENTS)}_{rng.randrange(99)} "
        f"{colour}{verdict}\x1b[0m [{rng.randrange(101):>3}%]"
    )


def _grep_line(rng: random.Random) -> str:
    return (
        f"{_rand_path(rng)}:{rng.randrange(1, 900)}:    "
        f"{rng.choice(('def', 'return', 'if', 'for', 'self.'))} {rng.choice(_IDENTS)}("
        f"{rng.choice(_IDENTS)}, {rng.randrange(64)})"
    )


def _code_line(rng: random.Random) -> str:
    indent = " " * (4 * rng.randrange(4))
    a, b = rng.choice(_IDENTS), rng.choice(_IDENTS)
    return rng.choice(
        (
            f"{indent}def {a}(self, {b}: bytes) -> int:",
            f"{indent}{a} = {b}[{rng.randrange(64)}:] + b'\\n'",
            f'{indent}raise ValueError(f"bad {a}: {{{b}!r}}")',
            f"{indent}for {b} in self.{a}:",
            f"{indent}return {a} is not None and {b} > {rng.randrange(1000)}",
            f"{indent}# {a}: keep {b} flat — it is on the hot path",
        )
    )


def _diff_line(rng: random.Random) -> str:
    return rng.choice(("+", "-", " ", " ")) + _code_line(rng)


def _traceback(rng: random.Random) -> str:
    frames = "\n".join(
        f'  File "/home/dev/projects/orbit/{_rand_path(rng)}", line {rng.randrange(1, 900)}, '
        f"in {rng.choice(_IDENTS)}\n    {_code_line(rng).strip()}"
        for _ in range(rng.randrange(2, 7))
    )
    return (
        f"Traceback (most recent call last):\n{frames}\n"
        f"{rng.choice(('KeyError', 'ValueError', 'OSError', 'TypeError'))}: "
        f"'{rng.choice(_IDENTS)}'\n"
    )


def _sized(rng: random.Random, maker: Any, size: int) -> str:
    lines: list[str] = []
    n = 0
    while n < size:
        line = maker(rng)
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)[:size]


def _output_size(rng: random.Random) -> int:
    # log-uniform 200 B .. 8 KiB: most outputs are small, a few are large
    return int(math.exp(rng.uniform(math.log(200), math.log(8192))))


def _build_outputs(rng: random.Random, n: int) -> dict[str, list[tuple[str, bool]]]:
    pools: dict[str, list[tuple[str, bool]]] = {"bash": [], "read_file": [], "grep": []}
    for _ in range(n):
        size = _output_size(rng)
        kind = rng.random()
        if kind < 0.3:
            pools["bash"].append((_sized(rng, _ls_line, size), False))
        elif kind < 0.5:
            text = _sized(rng, _pytest_line, size - 60)
            text += f"\n===== {rng.randrange(1, 400)} passed in {rng.random() * 9:.2f}s ====="
            pools["bash"].append((text, False))
        elif kind < 0.6:
            pools["bash"].append((_sized(rng, _diff_line, size), False))
        elif kind < 0.68:
            tb = _traceback(rng)
            pools["bash"].append((f"{tb}\n[exit status 1]", True))
        elif kind < 0.88:
            pools["read_file"].append((_sized(rng, _code_line, size), False))
        else:
            pools["grep"].append((_sized(rng, _grep_line, size), False))
    pools["read_file"].append(("Error: ENOENT: no such file or directory", True))
    pools["grep"].append(("[exit status 1: no matches]", True))
    return pools


_TOOL_PARAMS: dict[str, dict[str, Any]] = {
    "bash": {
        "command": ("string", "The shell command to run, executed with bash -lc in the cwd."),
        "timeoutMs": ("integer", "Kill the command after this many milliseconds (default 120000)."),
    },
    "read_file": {
        "path": ("string", "Path of the file to read, relative to the workspace root."),
        "offset": ("integer", "First line to return (1-based)."),
        "limit": ("integer", "Maximum number of lines to return."),
    },
    "write_file": {
        "path": ("string", "Path of the file to create or overwrite."),
        "content": ("string", "The complete new content of the file."),
    },
    "grep": {
        "pattern": ("string", "A regular expression (ripgrep syntax) to search for."),
        "path": ("string", "Directory or file to search in; defaults to the workspace root."),
    },
    "edit_file": {
        "path": ("string", "Path of the file to edit."),
        "oldText": ("string", "Exact text to replace; must occur exactly once."),
        "newText": ("string", "Replacement text."),
    },
}
_TOOL_DESCRIPTIONS = {
    "bash": "Run a shell command in the workspace and return its combined output.",
    "read_file": "Read a text file from the workspace, optionally a range of lines.",
    "write_file": "Create or overwrite a text file in the workspace.",
    "grep": "Search file contents with a regular expression.",
    "edit_file": "Replace one exact occurrence of a text in a file.",
}


def _tool_schemas() -> list[dict[str, Any]]:
    tools = []
    for name, params in _TOOL_PARAMS.items():
        props = {k: {"type": t, "description": d} for k, (t, d) in params.items()}
        tools.append(
            {
                "name": name,
                "description": _TOOL_DESCRIPTIONS[name],
                "parameters": {
                    "type": "object",
                    "properties": props,
                    "required": [next(iter(params))],
                },
            }
        )
    return tools


_SYSTEM_PROMPT = (
    "You are a careful coding agent working in a git repository. Use the tools to inspect "
    "files before changing them, keep edits minimal, run the tests after every change, and "
    "explain what you did in a few sentences."
)

# --------------------------------------------------------------------------------------------
# Packing (spec §9.3)
# --------------------------------------------------------------------------------------------


def _delta_key(ev: Event) -> tuple[Any, ...] | None:
    """The run key of a pack-eligible delta event, or None when the event is not eligible."""
    if ev.get("type") != "assistant/chunk" or len(ev) != 4 or "data" not in ev:
        return None
    seq, time = ev.get("seq"), ev.get("time")
    if type(seq) is not int or type(time) is not int:
        return None
    data = ev["data"]
    if type(data) is not dict or len(data) != 3 or "chunk" not in data:
        return None
    turn, step, chunk = data.get("turn"), data.get("step"), data["chunk"]
    if "turn" not in data or "step" not in data or type(chunk) is not dict:
        return None
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta"):
        if len(chunk) != 3 or type(chunk.get("text")) is not str or "index" not in chunk:
            return None
        return (kind, turn, step, chunk["index"])
    if kind == "tool-call-delta":
        keys = set(chunk)
        has_name = "name" in keys
        want = {"type", "index", "id", "argumentsDelta"} | ({"name"} if has_name else set())
        if keys != want or type(chunk["argumentsDelta"]) is not str:
            return None
        if type(chunk["id"]) is not str or (has_name and type(chunk["name"]) is not str):
            return None
        return (kind, turn, step, chunk["index"], chunk["id"], has_name, chunk.get("name"))
    return None


def _make_row(run: list[Event]) -> Event:
    first = run[0]
    d0 = first["data"]
    c0 = d0["chunk"]
    times = [ev["time"] for ev in run]
    dt = [b - a for a, b in itertools.pairwise(times)]
    kind = c0["type"]
    data: Event = {"turn": d0["turn"], "step": d0["step"], "index": c0["index"], "dt": dt}
    if kind == "tool-call-delta":
        data["id"] = c0["id"]
        if "name" in c0:
            data["name"] = c0["name"]
        data["args"] = [ev["data"]["chunk"]["argumentsDelta"] for ev in run]
    else:
        data["texts"] = [ev["data"]["chunk"]["text"] for ev in run]
    return {"type": PACK_TAGS[kind], "seq0": first["seq"], "time0": first["time"], "data": data}


def pack_batch(events: list[Event]) -> list[Event]:
    """Pack runs of >= MIN_RUN eligible delta events of one write batch into chunk rows."""
    out: list[Event] = []
    run: list[Event] = []
    run_key: tuple[Any, ...] | None = None

    def close() -> None:
        if len(run) >= MIN_RUN:
            out.append(_make_row(run))
        else:
            out.extend(run)
        run.clear()

    for ev in events:
        key = _delta_key(ev)
        if key is not None and key == run_key and ev["seq"] == run[-1]["seq"] + 1:
            run.append(ev)
            continue
        close()
        if key is None:
            run_key = None
            out.append(ev)
        else:
            run_key = key
            run.append(ev)
    close()
    return out


def expand_row(row: Event) -> list[Event]:
    """Expand one packed chunk row into its ``assistant/chunk`` events (spec §9.3)."""
    kind = UNPACK_KIND[row["type"]]
    if set(row) != {"type", "seq0", "time0", "data"}:
        raise ValueError(f"malformed {row['type']} row keys {sorted(row)}")
    data = row["data"]
    seq0, time = row["seq0"], row["time0"]
    if kind == "tool-call-delta":
        allowed = {"turn", "step", "index", "dt", "id", "args"} | ({"name"} if "name" in data else set())
        members = data["args"]
    else:
        allowed = {"turn", "step", "index", "dt", "texts"}
        members = data["texts"]
    if set(data) != allowed:
        raise ValueError(f"malformed {row['type']} row data keys {sorted(data)}")
    if not members or len(data["dt"]) != len(members) - 1:
        raise ValueError(f"malformed {row['type']} row: {len(members)} members, dt {data['dt']}")
    events = []
    for k, member in enumerate(members):
        if k:
            time += data["dt"][k - 1]
        if kind == "tool-call-delta":
            chunk: Event = {"type": kind, "index": data["index"], "id": data["id"]}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = member
        else:
            chunk = {"type": kind, "index": data["index"], "text": member}
        events.append(
            {
                "type": "assistant/chunk",
                "seq": seq0 + k,
                "time": time,
                "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
            }
        )
    return events


# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------


@dataclass
class GenStats:
    path: str
    bytes: int = 0
    lines: int = 0
    events: int = 0
    turns: int = 0
    compactions: int = 0
    tool_calls: int = 0
    torn: bool = False
    packed: bool = False
    seed: int = 1


class _Torn(Exception):
    """Raised inside the torn turn once the partial line has been written."""


class _Generator:
    def __init__(self, out: IO[bytes], seed: int, packed: bool) -> None:
        self.rng = random.Random(seed)
        self.out = out
        self.packed = packed
        self.seed = seed
        rng = self.rng
        self.corpus = _build_corpus(rng, 1 << 19)
        self.outputs = _build_outputs(rng, 900)
        self.tools = _tool_schemas()
        self.seq = 0
        self.time = T0 + 7
        self.turn = 0
        self.batch: list[Event] = []
        self.nodes: list[int] = []  # current surface node list (seqs, surface order)
        self.turn_first_node = 0  # index in nodes of the current turn's first node
        self.counter = 0  # id counter for messages and calls
        self.compaction_id = 0
        self.turns_since_compaction = 0
        self.next_compaction = rng.randint(4, 8)
        self.stats = GenStats(path="", packed=packed, seed=seed)
        self.torn_at: int | None = None  # in the torn turn: stop after this tool/call

    # -- low level -----------------------------------------------------------------------------

    def text(self, lo: int, hi: int) -> str:
        n = lo + int(self.rng.random() * (hi - lo + 1))
        o = int(self.rng.random() * (len(self.corpus) - n))
        return self.corpus[o : o + n]

    def tick(self, lo: int, hi: int) -> int:
        self.time += lo + int(self.rng.random() * (hi - lo + 1))
        return self.time

    def emit(
        self,
        type_: str,
        data: Any,
        dt: tuple[int, int] = (1, 3),
        src: list[int] | None = None,
        op: Any = None,
    ) -> int:
        seq = self.seq
        ev: Event = {"type": type_, "seq": seq, "time": self.tick(*dt), "data": data}
        if src is not None:
            ev["sourceEventSeqs"] = src
        if op is not None:
            ev["surfaceOp"] = op
        self.batch.append(ev)
        self.seq = seq + 1
        self.stats.events += 1
        if op == "append":
            self.nodes.append(seq)
        if type_ in BATCH_END_TYPES:
            self.flush()
        return seq

    def flush(self) -> None:
        if not self.batch:
            return
        records = pack_batch(self.batch) if self.packed else self.batch
        dumps = orjson.dumps
        buf = b"\n".join([dumps(r) for r in records]) + b"\n"
        self.out.write(buf)
        self.stats.bytes += len(buf)
        self.stats.lines += len(records)
        self.batch = []

    def write_header(self) -> None:
        header = {
            "type": "session",
            "version": 0,
            "id": f"bench-{self.seed}",
            "createdAt": T0,
            "cwd": CWD,
            "delegationDepth": 0,
        }
        buf = orjson.dumps(header) + b"\n"
        self.out.write(buf)
        self.stats.bytes += len(buf)
        self.stats.lines += 1

    def next_id(self) -> int:
        self.counter += 1
        return self.counter

    # -- content ---------------------------------------------------------------------------------

    def tool_arguments(self, name: str) -> str:
        rng = self.rng
        args: dict[str, Any]
        if name == "bash":
            cmd = rng.choice(
                (
                    f"ls -la {rng.choice(_DIRS)}",
                    f"python -m pytest -q tests/test_{rng.choice(_IDENTS)}.py",
                    "git diff --stat",
                    f"git log --oneline -n {rng.randrange(5, 30)}",
                    f"sed -n {rng.randrange(1, 200)},+40p {_rand_path(rng)}",
                    "make lint",
                )
            )
            args = {"command": cmd}
        elif name == "read_file":
            args = {"path": _rand_path(rng), "offset": rng.randrange(1, 400), "limit": 120}
        elif name == "grep":
            args = {"pattern": f"def {rng.choice(_IDENTS)}\\b", "path": rng.choice(_DIRS)}
        else:
            args = {"path": _rand_path(rng), "oldText": self.text(20, 120)}
            args["newText"] = self.text(*self.NEW_TEXT)
        return orjson.dumps(args).decode()

    def split(self, s: str, n: int) -> list[str]:
        """Split ``s`` into at most ``n`` non-empty pieces at random points."""
        n = max(1, min(n, len(s)))
        if n == 1:
            return [s]
        cuts = sorted(self.rng.sample(range(1, len(s)), n - 1))
        return [s[a:b] for a, b in zip([0, *cuts], [*cuts, len(s)], strict=True)]

    # -- workload knobs (the chunk-heavy defaults; _SmallEventGenerator overrides them) ---------

    TEXT_IN_TOOL_STEP = 0.5  # share of tool-calling steps whose answer also has a text block
    TOOL_CHOICES: tuple[str, ...] = ("bash", "bash", "read_file", "grep", "edit_file")
    NEW_TEXT = (20, 160)  # size range of an edit_file call's new text

    def chunk_budget(self) -> int:
        return self.rng.randint(20, 120)

    def call_delta_count(self) -> int:
        return self.rng.randint(3, 10)

    def steps_in_turn(self, torn: bool) -> int:
        return self.rng.randint(1, 6) if not torn else self.rng.randint(2, 4)

    def user_text(self) -> str:
        return self.text(100, 800)

    def request_header_due(self, turn: int) -> bool:
        return True

    def tool_output(self, text: str) -> str:
        return text

    def reasoning(self) -> bool:
        return self.rng.random() < 0.6

    def calls_in_step(self) -> int:
        return self.rng.randint(1, 3)

    def before_step_end(self, turn: int, step: int) -> None:
        """Log-only events closing a step (none in the chunk-heavy workload)."""

    def around_call(self, turn: int, step: int, call: Event, before: bool) -> None:
        """Log-only events around a tool call (none in the chunk-heavy workload)."""

    # -- structure -------------------------------------------------------------------------------

    def assistant(self, turn: int, step: int, tool_step: bool, ncalls: int) -> list[Event]:
        """Emit the chunk stream and the assistant/message; return the tool-call blocks."""
        rng = self.rng
        # blocks: (blockType, pieces, extra)
        kinds: list[str] = []
        if self.reasoning():
            kinds.append("reasoning")
        if not tool_step or rng.random() < self.TEXT_IN_TOOL_STEP:
            kinds.append("text")
        kinds.extend(["tool-call"] * ncalls)
        total = self.chunk_budget()
        budget = max(len(kinds), total - 2 * len(kinds) - 2)
        n_calls = kinds.count("tool-call")
        call_deltas = [self.call_delta_count() for _ in range(n_calls)]
        left = max(budget - sum(call_deltas), 0)
        n_text = len(kinds) - n_calls
        text_deltas = []
        if n_text:
            share = [rng.random() + 0.2 for _ in range(n_text)]
            total_share = sum(share)
            text_deltas = [max(1, int(left * s / total_share)) for s in share]
        base = {"turn": turn, "step": step}
        seqs: list[int] = []
        content: list[Event] = []
        calls: list[Event] = []
        ti = ci = 0
        for index, kind in enumerate(kinds):
            seqs.append(
                self.emit(
                    "assistant/chunk",
                    {**base, "chunk": {"type": "block-start", "index": index, "blockType": kind}},
                    dt=(150, 900) if index == 0 else (1, 30),
                )
            )
            if kind == "tool-call":
                name = rng.choice(self.TOOL_CHOICES)
                call_id = f"call_{self.next_id():07x}"
                arguments = self.tool_arguments(name)
                pieces = self.split(arguments, call_deltas[ci])
                ci += 1
                name_always = rng.random() < 0.3
                for i, piece in enumerate(pieces):
                    chunk: Event = {"type": "tool-call-delta", "index": index, "id": call_id}
                    if i == 0 or name_always:
                        chunk["name"] = name
                    chunk["argumentsDelta"] = piece
                    seqs.append(self.emit("assistant/chunk", {**base, "chunk": chunk}, (1, 25)))
                block: Event = {
                    "type": "tool-call",
                    "id": call_id,
                    "name": name,
                    "arguments": arguments,
                }
                calls.append(block)
            else:
                delta_type = "text-delta" if kind == "text" else "reasoning-delta"
                ndelta = text_deltas[ti]
                ti += 1
                pieces = []
                for _ in range(ndelta):
                    piece = self.text(1, 14)
                    pieces.append(piece)
                    seqs.append(
                        self.emit(
                            "assistant/chunk",
                            {
                                **base,
                                "chunk": {"type": delta_type, "index": index, "text": piece},
                            },
                            (1, 40),
                        )
                    )
                block = {"type": kind, "text": "".join(pieces)}
            content.append(block)
            seqs.append(
                self.emit(
                    "assistant/chunk",
                    {**base, "chunk": {"type": "block-end", "index": index, "block": block}},
                    (1, 5),
                )
            )
        usage: Event = {
            "inputTokens": rng.randint(2_000, 120_000),
            "outputTokens": rng.randint(20, 2_000),
            "cacheReadTokens": rng.randint(0, 100_000),
        }
        if kinds[0] == "reasoning":
            usage["reasoningTokens"] = rng.randint(10, 800)
        seqs.append(self.emit("assistant/chunk", {**base, "chunk": {"type": "usage", "usage": usage}}))
        finish = "tool-calls" if calls else "stop"
        seqs.append(
            self.emit(
                "assistant/chunk",
                {**base, "chunk": {"type": "finish", "reason": {"kind": finish}}},
            )
        )
        message = {
            "id": f"m-a{self.next_id()}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": PROVIDER, "model": MODEL},
        }
        self.emit(
            "assistant/message",
            {**base, "message": message, "usage": usage},
            src=seqs,
            op="append",
        )
        return calls

    def tool_round(self, turn: int, step: int, calls: list[Event]) -> None:
        rng = self.rng
        for i, call in enumerate(calls):
            call_id, name = call["id"], call["name"]
            self.around_call(turn, step, call, before=True)
            call_seq = self.emit(
                "tool/call",
                {
                    "turn": turn,
                    "step": step,
                    "callId": call_id,
                    "name": name,
                    "arguments": call["arguments"],
                },
            )
            pool = self.outputs["read_file" if name in ("read_file", "edit_file") else name]
            text, is_error = pool[int(rng.random() * len(pool))]
            text = self.tool_output(text)
            if name == "edit_file" and not is_error:
                text = f"Edited {orjson.loads(call['arguments'])['path']}: 1 replacement."
            message = {
                "id": f"m-t{self.next_id()}",
                "role": "user",
                "source": {"kind": "tool", "callId": call_id},
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": call_id,
                        "content": [{"type": "text", "text": text}],
                        "isError": is_error,
                    }
                ],
            }
            data = {"turn": turn, "step": step, "message": message}
            if self.torn_at is not None and i == self.torn_at:
                # the process died while appending the result: a prefix without its newline
                self.flush()
                ev = {
                    "type": "tool/result",
                    "seq": self.seq,
                    "time": self.tick(40, 3_000),
                    "data": data,
                    "sourceEventSeqs": [call_seq],
                    "surfaceOp": "append",
                }
                line = orjson.dumps(ev)
                partial = line[: max(1, len(line) // 2)]
                self.out.write(partial)
                self.stats.bytes += len(partial)
                raise _Torn
            self.around_call(turn, step, call, before=False)
            self.emit("tool/result", data, dt=(40, 3_000), src=[call_seq], op="append")
            self.stats.tool_calls += 1

    def do_turn(self, torn: bool = False) -> None:
        rng = self.rng
        self.turn += 1
        turn = self.turn
        self.turn_first_node = len(self.nodes)
        self.emit("turn/start", {"turn": turn}, dt=(2_000, 60_000))
        nsteps = self.steps_in_turn(torn)
        for step in range(1, nsteps + 1):
            self.emit("step/start", {"turn": turn, "step": step})
            if step == 1:
                user = {
                    "id": f"m-u{self.next_id()}",
                    "role": "user",
                    "source": {"kind": "user"},
                    "content": [{"type": "text", "text": self.user_text()}],
                }
                self.emit("user/message", user, op="append")
            if step == 1 and self.request_header_due(turn):
                header = {
                    "config": {"provider": PROVIDER, "model": MODEL, "maxTokens": 8192},
                    "system": _SYSTEM_PROMPT,
                    "tools": self.tools,
                }
                self.emit(
                    "request/header",
                    {"header": header, "reason": "initial" if turn == 1 else "change"},
                )
            if step == 1:
                self.emit(
                    "request/context",
                    {"provider": PROVIDER, "model": MODEL, "contextWindow": 131_072},
                )
            tool_step = step < nsteps
            ncalls = (rng.randint(2, 3) if torn else self.calls_in_step()) if tool_step else 0
            calls = self.assistant(turn, step, tool_step, ncalls)
            if torn and calls:
                self.torn_at = 0  # >= 2 calls: one started (dangling), the rest never started
                self.tool_round(turn, step, calls)  # raises _Torn
            self.tool_round(turn, step, calls)
            self.before_step_end(turn, step)
            self.emit("step/end", {"turn": turn, "step": step})
        self.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        self.stats.turns += 1

    def compaction(self) -> None:
        """Replace every surface node before the last turn's by one summary user message."""
        end_index = self.turn_first_node - 1
        if end_index < 1:
            return
        removed = self.nodes[: end_index + 1]
        start, end = removed[0], removed[-1]
        self.compaction_id += 1
        cid = f"cmp-{self.compaction_id}"
        summary_text = "Summary of the earlier conversation: " + self.text(200, 900)
        self.emit("compaction/start", {"compactionId": cid, "turn": None}, dt=(500, 3_000))
        cited = sorted(removed)
        self.emit(
            "compaction/summary",
            {
                "compactionId": cid,
                "summary": [{"type": "text", "text": summary_text}],
                "shadowedRange": {"start": start, "end": end},
                "shadowedSeqs": cited,
                "shadowedTokenCount": 150 * len(removed) + self.rng.randrange(1000),
                "provider": PROVIDER,
                "model": MODEL,
            },
            dt=(2_000, 20_000),
        )
        message = {
            "id": f"m-sum{self.compaction_id}",
            "role": "user",
            "source": {"kind": "plugin", "plugin": "compact"},
            "content": [{"type": "text", "text": summary_text}],
        }
        seq = self.emit(
            "user/message",
            message,
            src=cited,
            op={"op": "replace", "start": start, "end": end},
        )
        self.nodes[: end_index + 1] = [seq]
        self.emit("compaction/end", {"compactionId": cid, "turn": None})
        self.flush()
        self.stats.compactions += 1

    def run(self, target_bytes: int, torn: bool) -> None:
        self.write_header()
        while self.stats.bytes < target_bytes:
            self.do_turn()
            self.turns_since_compaction += 1
            if self.turns_since_compaction >= self.next_compaction:
                self.compaction()
                self.turns_since_compaction = 0
                self.next_compaction = self.rng.randint(4, 8)
        if torn:
            try:
                self.do_turn(torn=True)
            except _Torn:
                self.stats.torn = True
                return
            raise AssertionError("torn turn did not tear")  # pragma: no cover
        self.flush()


class _SmallEventGenerator(_Generator):
    """The small-event workload (issue 14): what a chatty agent writes.

    Many short steps with few chunks each, short user messages, the request header only on the
    first turn, tool calls wrapped in ``hook/invoked`` / ``hook/result`` log-only events (and an
    ``approval/asked`` / ``approval/decided`` pair before some shell calls), and mostly short
    tool outputs with a long tail. Median line ~100 B, p90 ~1.2 KB (``genlog.py stats``).
    """

    # shares of the step shape: chunk budget per assistant message and tool-call deltas
    CHUNKS = (1, 2)
    CALL_DELTAS = (1, 1)
    TEXT_IN_TOOL_STEP = 0.2
    TOOL_CHOICES = ("bash", "bash", "read_file", "grep", "edit_file", "edit_file", "edit_file")
    NEW_TEXT = (500, 2200)

    def chunk_budget(self) -> int:
        return self.rng.randint(*self.CHUNKS)

    def call_delta_count(self) -> int:
        return self.rng.randint(*self.CALL_DELTAS)

    def steps_in_turn(self, torn: bool) -> int:
        return self.rng.randint(2, 4) if torn else self.rng.randint(2, 12)

    def user_text(self) -> str:
        return self.text(20, 300)

    def request_header_due(self, turn: int) -> bool:
        return turn == 1

    def tool_output(self, text: str) -> str:
        # log-normal around 2.4 KB, capped by the pooled output (<= 8 KiB)
        n = max(16, int(math.exp(self.rng.gauss(math.log(2400), 0.8))))
        if n > len(text) + 1:  # pad with corpus text (the pooled outputs are 200 B .. 8 KiB)
            text += "\n" + self.text(n - len(text) - 1, n - len(text) - 1)
        return text[:n]

    def reasoning(self) -> bool:
        return self.rng.random() < 0.15

    def calls_in_step(self) -> int:
        return 1 if self.rng.random() < 0.85 else 2

    def before_step_end(self, turn: int, step: int) -> None:
        self.emit("hook/invoked", {"hook": "stop", "turn": turn}, (1, 4))
        self.emit("hook/result", {"hook": "stop", "turn": turn}, (1, 30))

    def around_call(self, turn: int, step: int, call: Event, before: bool) -> None:
        rng = self.rng
        call_id, name = call["id"], call["name"]
        if before and rng.random() < 0.8:
            self.emit("approval/asked", {"callId": call_id, "tool": name}, (1, 4))
            decision = "allow" if rng.random() < 0.9 else "allow-always"
            self.emit("approval/decided", {"callId": call_id, "decision": decision}, (300, 9_000))
        hook = "pre" if before else "post"
        self.emit("hook/invoked", {"hook": hook, "callId": call_id}, (1, 4))
        self.emit("hook/result", {"hook": hook, "callId": call_id}, (1, 30))


WORKLOADS: dict[str, type[_Generator]] = {"chunk": _Generator, "small": _SmallEventGenerator}


def generate(
    path: str | os.PathLike[str],
    target_bytes: int,
    *,
    seed: int = 1,
    torn: bool = False,
    packed: bool = False,
    workload: str = "chunk",
) -> GenStats:
    """Write a valid v0 log of about ``target_bytes`` (at least that much) to ``path``.

    The log is balanced (every turn ends ``completed``) unless ``torn``: then it goes on into
    one more turn that stops after a ``tool/call`` and ends with a partial line (no newline).
    ``packed`` packs runs of >= 3 eligible deltas into chunk rows (spec §9.3). ``workload`` is
    ``chunk`` (chunk-heavy: long streamed answers, the default) or ``small`` (small events).
    """
    with open(path, "wb", buffering=1 << 20) as out:
        gen = WORKLOADS[workload](out, seed, packed)
        gen.run(target_bytes, torn)
    gen.stats.path = os.fspath(path)
    return gen.stats


# --------------------------------------------------------------------------------------------
# zstd twin (spec §9.2)
# --------------------------------------------------------------------------------------------


def _line_type(line: bytes) -> str | None:
    if line.startswith(b'{"type":"'):
        end = line.find(b'"', 9)
        return line[9:end].decode() if end > 0 else None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    t = value.get("type") if isinstance(value, dict) else None
    return t if isinstance(t, str) else None


def compress(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> int:
    """Write the zstd twin of a raw log; return the number of frames.

    Frame 1 is the header line alone; then one checksummed frame per write batch, a batch
    ending after every ``step/end`` / ``turn/end`` line (whatever follows the last one goes into
    a final frame). Streams line by line; memory is bounded by one batch.
    """
    cctx = zstandard.ZstdCompressor(level=3, write_checksum=True)
    frames = 0
    with open(src, "rb", buffering=1 << 20) as fi, open(dst, "wb", buffering=1 << 20) as fo:
        header = fi.readline()
        if header:
            fo.write(cctx.compress(header))
            frames += 1
        batch: list[bytes] = []
        for line in fi:
            batch.append(line)
            if _line_type(line) in BATCH_END_TYPES:
                fo.write(cctx.compress(b"".join(batch)))
                frames += 1
                batch = []
        if batch:
            fo.write(cctx.compress(b"".join(batch)))
            frames += 1
    return frames


def iter_zstd_frames(path: str | os.PathLike[str]) -> Iterator[tuple[bool, bytes]]:
    """Yield (checksum flag, plaintext) per frame of a multi-frame zstd file."""
    with open(path, "rb") as f:
        pending = b""
        eof = False
        while True:
            if not pending:
                pending = f.read(1 << 20)
                if not pending:
                    return
            if pending[:4] != ZSTD_MAGIC:
                raise ValueError(f"bad frame magic {pending[:4]!r}")
            while len(pending) < 5 and not eof:
                more = f.read(1 << 20)
                eof = not more
                pending += more
            checksum = bool(pending[4] & 0x04)
            dobj = zstandard.ZstdDecompressor().decompressobj()
            parts = [dobj.decompress(pending)]
            while not dobj.eof:
                more = f.read(1 << 20)
                if not more:
                    raise ValueError("truncated zstd frame")
                parts.append(dobj.decompress(more))
            pending = dobj.unused_data
            yield checksum, b"".join(parts)


# --------------------------------------------------------------------------------------------
# Independent verifier of the generator's promises
# --------------------------------------------------------------------------------------------


class VerifyError(Exception):
    pass


@dataclass
class _Block:
    kind: str
    parts: list[str] = field(default_factory=list)
    call_id: str | None = None
    name: str | None = None
    end: Event | None = None


@dataclass
class VerifyReport:
    lines: int = 0
    events: int = 0
    packed_rows: int = 0
    turns: int = 0
    compactions: int = 0
    tool_calls: int = 0
    torn_tail: bool = False
    open_turn: bool = False
    frames: int = 0


_HEADER_KEYS = ["type", "version", "id", "createdAt", "cwd", "delegationDepth"]
_ENVELOPE_ORDER = ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]


class _Checker:
    def __init__(self) -> None:
        self.r = VerifyReport()
        self.seq = 0
        self.time: int | None = None
        self.turn: int | None = None
        self.last_turn = 0
        self.step: int | None = None
        self.next_step = 1
        self.nodes: list[int] = []
        self.chunk_seqs: list[int] = []
        self.blocks: dict[int, _Block] = {}
        self.usage: Any = None
        self.finish: Any = None
        self.advertised: dict[str, int] = {}  # callId -> tool/call seq or -1 when not called
        self.pending: set[str] = set()
        self.summary_seqs: list[int] | None = None
        self.last_type = ""

    def fail(self, ev: Event, why: str) -> NoReturn:
        raise VerifyError(f"seq {ev.get('seq')} ({ev.get('type')}): {why}")

    def header(self, value: Any) -> None:
        if not isinstance(value, dict) or list(value) != _HEADER_KEYS:
            raise VerifyError(f"bad header {value!r}")
        if value["type"] != "session" or value["version"] != 0:
            raise VerifyError(f"bad header {value!r}")

    def record(self, value: Any) -> None:
        self.r.lines += 1
        if not isinstance(value, dict):
            raise VerifyError(f"line {self.r.lines + 1}: not an object")
        if value.get("type") in UNPACK_KIND:
            self.r.packed_rows += 1
            try:
                events = expand_row(value)
            except (ValueError, KeyError, TypeError) as exc:
                raise VerifyError(f"line {self.r.lines + 1}: {exc}") from exc
            for ev in events:
                self.event(ev)
        else:
            self.event(value)

    def event(self, ev: Event) -> None:
        self.r.events += 1
        keys = list(ev)
        if [k for k in _ENVELOPE_ORDER if k in ev] != keys:
            self.fail(ev, f"envelope keys/order {keys}")
        if ev["seq"] != self.seq:
            self.fail(ev, f"seq not contiguous, expected {self.seq}")
        self.seq += 1
        t = ev["time"]
        if type(t) is not int or (self.time is not None and t <= self.time):
            self.fail(ev, f"time {t} does not increase past {self.time}")
        self.time = t
        type_ = ev["type"]
        data = ev["data"]
        surface = type_ in SURFACE_TYPES
        if surface != ("surfaceOp" in ev):
            self.fail(ev, "surfaceOp presence does not match the surface-ness of the type")
        if not surface and "sourceEventSeqs" in ev:
            self.fail(ev, "sourceEventSeqs on a non-surface event")
        src = ev.get("sourceEventSeqs")
        if src is not None and (
            not isinstance(src, list)
            or len(set(src)) != len(src)
            or any(type(s) is not int or not 0 <= s < ev["seq"] for s in src)
        ):
            self.fail(ev, f"bad sourceEventSeqs {src}")
        if surface:
            self.surface(ev, src)
        handler = getattr(self, "on_" + re.sub(r"[/-]", "_", type_), None)
        if handler is None:
            self.fail(ev, "unexpected type")
        handler(ev, data)
        self.last_type = type_

    def surface(self, ev: Event, src: list[int] | None) -> None:
        op = ev["surfaceOp"]
        if op == "append":
            self.nodes.append(ev["seq"])
            return
        if not isinstance(op, dict) or list(op) != ["op", "start", "end"] or op["op"] != "replace":
            self.fail(ev, f"bad surfaceOp {op}")
        try:
            i, j = self.nodes.index(op["start"]), self.nodes.index(op["end"])
        except ValueError:
            self.fail(ev, f"replace endpoints {op} not current surface nodes")
        if i > j:
            self.fail(ev, "replace start after end in surface order")
        removed = self.nodes[i : j + 1]
        if src is None or not set(removed) <= set(src):
            self.fail(ev, "replace sourceEventSeqs do not cite every removed node")
        if self.summary_seqs is not None and sorted(removed) != self.summary_seqs:
            self.fail(ev, "compaction/summary shadowedSeqs differ from the removed nodes")
        self.nodes[i : j + 1] = [ev["seq"]]

    def in_step(self, ev: Event, data: Any) -> None:
        if self.turn is None or self.step is None:
            self.fail(ev, "outside an open step")
        if data.get("turn") != self.turn or data.get("step") != self.step:
            self.fail(ev, f"names turn/step {data.get('turn')}/{data.get('step')}")

    def on_turn_start(self, ev: Event, data: Any) -> None:
        if self.turn is not None or data != {"turn": self.last_turn + 1}:
            self.fail(ev, "turn/start out of order")
        self.turn = self.last_turn = data["turn"]
        self.next_step = 1
        self.advertised.clear()
        self.pending.clear()

    def on_turn_end(self, ev: Event, data: Any) -> None:
        if self.turn is None or self.step is not None:
            self.fail(ev, "turn/end without open turn or with an open step")
        if data != {"turn": self.turn, "reason": {"kind": "completed"}}:
            self.fail(ev, f"bad turn/end {data}")
        self.turn = None
        self.r.turns += 1

    def on_step_start(self, ev: Event, data: Any) -> None:
        if self.turn is None or self.step is not None:
            self.fail(ev, "step/start outside a turn or inside a step")
        if data != {"turn": self.turn, "step": self.next_step}:
            self.fail(ev, f"bad step/start {data}")
        self.step = self.next_step
        self.next_step += 1
        self.chunk_seqs = []
        self.blocks = {}

    def on_step_end(self, ev: Event, data: Any) -> None:
        self.in_step(ev, data)
        if self.pending or self.chunk_seqs:
            self.fail(ev, "step/end with pending calls or unclaimed chunks")
        self.step = None
        self.advertised.clear()

    def on_user_message(self, ev: Event, data: Any) -> None:
        if list(data) != ["id", "role", "source", "content"] or data["role"] != "user":
            self.fail(ev, "bad user message")
        if isinstance(ev["surfaceOp"], dict):
            if self.last_type != "compaction/summary":
                self.fail(ev, "replace not right after compaction/summary")
        elif self.turn is None or self.last_type != "step/start":
            self.fail(ev, "user message not first in its step")

    def on_request_header(self, ev: Event, data: Any) -> None:
        if self.turn is None:
            self.fail(ev, "request/header outside a turn")
        cfg = data["header"]["config"]
        if not cfg.get("provider") or not cfg.get("model"):
            self.fail(ev, "request/header config lacks provider/model")

    def on_request_context(self, ev: Event, data: Any) -> None:
        if self.turn is None:
            self.fail(ev, "request/context outside a turn")

    def on_assistant_chunk(self, ev: Event, data: Any) -> None:
        self.in_step(ev, data)
        if list(data) != ["turn", "step", "chunk"]:
            self.fail(ev, "bad chunk data keys")
        self.chunk_seqs.append(ev["seq"])
        chunk = data["chunk"]
        kind = chunk["type"]
        if kind == "block-start":
            if chunk["index"] in self.blocks:
                self.fail(ev, "block started twice")
            self.blocks[chunk["index"]] = _Block(chunk["blockType"])
        elif kind in ("text-delta", "reasoning-delta", "tool-call-delta"):
            block = self.blocks.get(chunk["index"])
            if block is None or block.end is not None:
                self.fail(ev, "delta outside its block")
            want = {"text-delta": "text", "reasoning-delta": "reasoning"}.get(kind, "tool-call")
            if block.kind != want:
                self.fail(ev, f"{kind} in a {block.kind} block")
            if kind == "tool-call-delta":
                if block.call_id not in (None, chunk["id"]):
                    self.fail(ev, "tool-call id changes inside a block")
                block.call_id = chunk["id"]
                if "name" in chunk:
                    block.name = chunk["name"]
                block.parts.append(chunk["argumentsDelta"])
            else:
                block.parts.append(chunk["text"])
        elif kind == "block-end":
            block = self.blocks.get(chunk["index"])
            if block is None or block.end is not None:
                self.fail(ev, "block-end without block-start")
            block.end = chunk["block"]
        elif kind == "usage":
            self.usage = chunk["usage"]
        elif kind == "finish":
            self.finish = chunk["reason"]
        else:
            self.fail(ev, f"unknown chunk type {kind}")

    def on_assistant_message(self, ev: Event, data: Any) -> None:
        self.in_step(ev, data)
        if ev.get("sourceEventSeqs") != self.chunk_seqs:
            self.fail(ev, "sourceEventSeqs are not exactly its chunk seqs")
        msg = data["message"]
        if msg["role"] != "assistant" or msg["source"] != {
            "kind": "model",
            "provider": PROVIDER,
            "model": MODEL,
        }:
            self.fail(ev, "bad assistant message role/source")
        assembled = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            text = "".join(block.parts)
            if block.kind == "tool-call":
                want: Event = {
                    "type": "tool-call",
                    "id": block.call_id,
                    "name": block.name,
                    "arguments": text,
                }
                orjson.loads(text)  # arguments must be JSON
            else:
                want = {"type": block.kind, "text": text}
            if block.end != want:
                self.fail(ev, f"block-end {block.end} differs from its deltas {want}")
            assembled.append(want)
        if msg["content"] != assembled:
            self.fail(ev, "content differs from the assembled stream")
        if data.get("usage") != self.usage:
            self.fail(ev, "usage differs from the usage chunk")
        calls = [b for b in assembled if b["type"] == "tool-call"]
        finish = {"kind": "tool-calls" if calls else "stop"}
        if self.finish != finish:
            self.fail(ev, f"finish {self.finish} != {finish}")
        for b in calls:
            if b["id"] in self.advertised:
                self.fail(ev, "call id advertised twice")
            self.advertised[b["id"]] = -1
        self.chunk_seqs = []
        self.blocks = {}
        self.usage = self.finish = None

    def on_tool_call(self, ev: Event, data: Any) -> None:
        self.in_step(ev, data)
        cid = data["callId"]
        if self.advertised.get(cid) != -1:
            self.fail(ev, f"tool/call {cid} not advertised or already called")
        self.advertised[cid] = ev["seq"]
        self.pending.add(cid)

    def on_tool_result(self, ev: Event, data: Any) -> None:
        self.in_step(ev, data)
        msg = data["message"]
        cid = msg["source"]["callId"]
        if cid not in self.pending or ev.get("sourceEventSeqs") != [self.advertised[cid]]:
            self.fail(ev, f"tool/result for {cid} not pending or not citing its call")
        if ev["surfaceOp"] != "append":
            self.fail(ev, "generator never replaces tool results")
        blocks = msg["content"]
        if len(blocks) != 1 or blocks[0]["toolCallId"] != cid or msg["role"] != "user":
            self.fail(ev, "bad tool result message")
        self.pending.discard(cid)
        self.r.tool_calls += 1

    def around_call(self, ev: Event, data: Any) -> None:
        """Log-only events of the small-event workload: inside a step, about an advertised call."""
        if self.turn is None or self.step is None:
            self.fail(ev, "outside an open step")
        if data.get("hook") == "stop":
            if data.get("turn") != self.turn:
                self.fail(ev, "stop hook names another turn")
        elif data.get("callId") not in self.advertised:
            self.fail(ev, f"about a call that was not advertised: {data.get('callId')}")

    on_hook_invoked = on_hook_result = on_approval_asked = on_approval_decided = around_call

    def on_compaction_start(self, ev: Event, data: Any) -> None:
        if self.turn is not None:
            self.fail(ev, "compaction inside a turn")

    def on_compaction_summary(self, ev: Event, data: Any) -> None:
        if self.last_type != "compaction/start":
            self.fail(ev, "summary not after start")
        self.summary_seqs = data["shadowedSeqs"]

    def on_compaction_end(self, ev: Event, data: Any) -> None:
        if self.last_type != "user/message" or self.summary_seqs is None:
            self.fail(ev, "compaction/end not after the replacement")
        self.summary_seqs = None
        self.r.compactions += 1

    def finish_log(self, torn_tail: bool) -> None:
        self.r.torn_tail = torn_tail
        self.r.open_turn = self.turn is not None
        if torn_tail and (not self.r.open_turn or self.last_type != "tool/call"):
            raise VerifyError("torn log does not end inside a turn right after a tool/call")
        if not torn_tail and self.r.open_turn:
            raise VerifyError("complete log ends with an open turn")


def _iter_raw_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    with open(path, "rb", buffering=1 << 20) as f:
        yield from f


def verify(path: str | os.PathLike[str], *, torn: bool = False) -> VerifyReport:
    """Check a generated log (raw or zstd, by magic). Raises VerifyError on the first defect."""
    with open(path, "rb") as f:
        zstd = f.read(4) == ZSTD_MAGIC
    checker = _Checker()
    torn_tail = False
    if zstd:
        lines_iter: Iterator[bytes] = _zstd_lines(path, checker.r)
    else:
        lines_iter = _iter_raw_lines(path)
    first = True
    for line in lines_iter:
        if not line.endswith(b"\n"):
            torn_tail = True
            break
        value = orjson.loads(line)
        if first:
            checker.header(value)
            first = False
        else:
            checker.record(value)
    if first:
        raise VerifyError("empty log")
    if torn_tail != torn:
        raise VerifyError(f"torn tail present: {torn_tail}, expected {torn}")
    checker.finish_log(torn_tail)
    return checker.r


def _zstd_lines(path: str | os.PathLike[str], report: VerifyReport) -> Iterator[bytes]:
    open_batch = False  # the previous frame did not end after a step/end or turn/end
    for n, (checksum, plain) in enumerate(iter_zstd_frames(path)):
        report.frames += 1
        if not checksum:
            raise VerifyError(f"frame {n} lacks a content checksum")
        if not plain.endswith(b"\n"):
            raise VerifyError(f"frame {n} does not end on a record boundary")
        if open_batch:
            raise VerifyError(f"frame {n - 1} ends inside a batch but is not the last frame")
        lines = plain.splitlines(keepends=True)
        if n == 0:
            if len(lines) != 1:
                raise VerifyError("frame 0 is not exactly the header line")
        else:
            ends = [_line_type(line) in BATCH_END_TYPES for line in lines]
            if any(ends[:-1]):
                raise VerifyError(f"frame {n} holds more than one batch")
            open_batch = not ends[-1]
        yield from lines


def logical_events(path: str | os.PathLike[str]) -> Iterator[Event]:
    """The decoded events of a raw log (packed rows expanded), header and torn tail skipped."""
    it = _iter_raw_lines(path)
    next(it)
    for line in it:
        if not line.endswith(b"\n"):
            return
        value = orjson.loads(line)
        if value.get("type") in UNPACK_KIND:
            yield from expand_row(value)
        else:
            yield value


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def line_stats(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Line-size distribution of a raw log (bytes without the newline) and lines per type."""
    sizes: list[int] = []
    types: dict[str, int] = {}
    for line in _iter_raw_lines(path):
        sizes.append(len(line.rstrip(b"\n")))
        t = _line_type(line) or "?"
        types[t] = types.get(t, 0) + 1
    sizes.sort()
    n = len(sizes)
    pct = {f"p{q}": sizes[min(n - 1, n * q // 100)] for q in (10, 50, 90, 99)} if n else {}
    total = sum(sizes) + n
    return {
        "lines": n,
        "bytes": total,
        "mean": round(total / n, 1) if n else None,
        **pct,
        "lines_per_mib": round(n / (total / 2**20)) if total else None,
        "types": dict(sorted(types.items(), key=lambda kv: -kv[1])),
    }


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"bad size {text!r} (use e.g. 20M, 100M, 1G)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def selftest(size: int = 3 << 20, seeds: tuple[int, ...] = (1, 2, 3, 7, 42)) -> None:
    """Generate small logs in a temporary directory and check every promise."""
    with tempfile.TemporaryDirectory(prefix="genlog-selftest-") as tmp:
        for seed in seeds[:2]:
            small = os.path.join(tmp, f"small-s{seed}.jsonl")
            st = generate(small, size, seed=seed, workload="small")
            rep = verify(small)
            assert rep.events == st.events and rep.compactions >= 1, (rep, st)
            again = os.path.join(tmp, f"small-s{seed}.again.jsonl")
            generate(again, size, seed=seed, workload="small")
            with open(small, "rb") as a, open(again, "rb") as b:
                assert a.read() == b.read(), "small-event generator is not deterministic"
            dist = line_stats(small)
            assert 80 <= dist["p50"] <= 150 and 700 <= dist["p90"] <= 2000, dist
            frames = compress(small, small + ".zstd")
            assert verify(small + ".zstd").events == rep.events
            torn_path = os.path.join(tmp, f"small-s{seed}.torn.jsonl")
            assert generate(torn_path, size, seed=seed, torn=True, workload="small").torn
            verify(torn_path, torn=True)
            print(
                f"small seed {seed}: ok — {rep.events} events, p50 {dist['p50']} B, "
                f"p90 {dist['p90']} B, {frames} frames"
            )
        for seed in seeds:
            raw = os.path.join(tmp, f"s{seed}.jsonl")
            st = generate(raw, size, seed=seed)
            assert st.bytes == os.path.getsize(raw) >= size, st
            rep = verify(raw)
            assert rep.compactions >= 1 and rep.turns == st.turns, (rep, st)
            assert rep.packed_rows == 0 and rep.events == st.events, (rep, st)
            # determinism
            again = os.path.join(tmp, f"s{seed}.again.jsonl")
            generate(again, size, seed=seed)
            with open(raw, "rb") as a, open(again, "rb") as b:
                assert a.read() == b.read(), "generator is not deterministic"
            # packed rows expand to exactly the unpacked events (packed run is a superset)
            packed = os.path.join(tmp, f"s{seed}.packed.jsonl")
            pst = generate(packed, size, seed=seed, packed=True)
            prep = verify(packed)
            assert prep.packed_rows > 0 and pst.bytes < size * 1.5, prep
            n = 0
            for ev_plain, ev_packed in zip(logical_events(raw), logical_events(packed), strict=False):
                assert ev_plain == ev_packed, (ev_plain, ev_packed)
                n += 1
            assert n == rep.events and prep.events >= rep.events, (n, rep, prep)
            # every pack-eligible run of >= 3 was packed: no 3 consecutive eligible deltas left
            run: list[Event] = []
            for line in _iter_raw_lines(packed):
                value = orjson.loads(line)
                key = _delta_key(value)
                if key is not None and run and _delta_key(run[-1]) == key:
                    run.append(value)
                    assert len(run) < MIN_RUN, "unpacked run of >= 3 eligible deltas"
                else:
                    run = [value] if key is not None else []
            # zstd twin
            zst = raw + ".zstd"
            frames = compress(raw, zst)
            zrep = verify(zst)
            assert zrep.frames == frames and zrep.events == rep.events, (zrep, rep)
            plain = b"".join(p for _, p in iter_zstd_frames(zst))
            with open(raw, "rb") as f:
                assert plain == f.read(), "zstd twin does not decompress to the raw log"
            # torn
            torn_path = os.path.join(tmp, f"s{seed}.torn.jsonl")
            tst = generate(torn_path, size, seed=seed, torn=True)
            trep = verify(torn_path, torn=True)
            assert tst.torn and trep.open_turn and trep.torn_tail, trep
            with open(torn_path, "rb") as f:
                data = f.read()
            with open(raw, "rb") as f:
                assert not data.endswith(b"\n") and data.startswith(f.read())
            ptorn = os.path.join(tmp, f"s{seed}.ptorn.jsonl")
            generate(ptorn, size, seed=seed, torn=True, packed=True)
            verify(ptorn, torn=True)
            print(
                f"seed {seed}: ok — {rep.events} events, {rep.turns} turns, "
                f"{rep.compactions} compactions, {rep.tool_calls} tool calls, "
                f"{prep.packed_rows} packed rows, {frames} zstd frames"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="generate a log")
    g.add_argument("out")
    g.add_argument("--size", default="20M")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--torn", action="store_true")
    g.add_argument("--packed", action="store_true")
    g.add_argument("--workload", choices=sorted(WORKLOADS), default="chunk")
    c = sub.add_parser("compress", help="write the zstd twin of a raw log")
    c.add_argument("src")
    c.add_argument("dst")
    v = sub.add_parser("verify", help="check a generated log")
    v.add_argument("path")
    v.add_argument("--torn", action="store_true")
    stats_cmd = sub.add_parser("stats", help="line-size distribution of a raw log")
    stats_cmd.add_argument("path")
    sub.add_parser("selftest", help="generate small logs and verify them")
    args = ap.parse_args(argv)
    import time

    t = time.perf_counter()
    if args.cmd == "gen":
        st = generate(
            args.out,
            parse_size(args.size),
            seed=args.seed,
            torn=args.torn,
            packed=args.packed,
            workload=args.workload,
        )
        dt = time.perf_counter() - t
        print(f"{st}\n{dt:.2f} s, {st.bytes / dt / 2**20:.1f} MiB/s")
    elif args.cmd == "compress":
        frames = compress(args.src, args.dst)
        dt = time.perf_counter() - t
        print(f"{frames} frames, {os.path.getsize(args.dst)} bytes, {dt:.2f} s")
    elif args.cmd == "verify":
        try:
            rep = verify(args.path, torn=args.torn)
        except VerifyError as exc:
            print(f"INVALID: {exc}", file=sys.stderr)
            return 1
        print(f"valid: {rep} ({time.perf_counter() - t:.2f} s)")
    elif args.cmd == "stats":
        print(orjson.dumps(line_stats(args.path), option=orjson.OPT_INDENT_2).decode())
    else:
        selftest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
