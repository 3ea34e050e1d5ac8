"""Generators of small hostile logs that once cost far more memory or time than their size
(issue 11 items 1 and 2), and a way to run a command under a memory limit and read its peak.

Peak memory is read from the kernel's accounting of the one child (``os.wait4``), never timed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

V4_HEADER = (
    b'{"type":"session","version":4,"id":"s1","createdAt":1000,"isSeeded":false,"delegationDepth":0}\n'
)
V0_HEADER = b'{"type":"session","version":0,"id":"s0","createdAt":1000,"cwd":"/w","delegationDepth":0}\n'


def _line(obj: object) -> bytes:
    return orjson.dumps(obj) + b"\n"


def v4_user(seq: int, text: str = "hi", **extra: object) -> bytes:
    event: dict[str, object] = {
        "type": "user/message",
        "seq": seq,
        "time": 1000 + seq,
        "data": {
            "id": f"u{seq}",
            "role": "user",
            "source": {"kind": "user"},
            "content": [{"type": "text", "text": text}],
        },
    }
    event.update(extra)
    event.setdefault("surfaceOp", "append")
    return _line(event)


def v4_messages(path: Path, count: int, text: Callable[[int], str]) -> Path:
    """A v4 log of ``count`` appended user messages (``text(seq)``), none ever replaced."""
    with open(path, "wb") as f:
        f.write(V4_HEADER)
        for seq in range(count):
            f.write(v4_user(seq, text(seq)))
    return path


def v4_tool_calls(path: Path, calls: int) -> Path:
    """A v4 log of one turn and one step in which ``calls`` tool calls are each started and
    answered (a tool/call, then its tool/result appended to the surface), never compacted."""
    with open(path, "wb") as f:
        f.write(V4_HEADER)
        f.write(_line({"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}}))
        f.write(_line({"type": "step/start", "seq": 1, "time": 1000, "data": {"turn": 1, "step": 1}}))
        seq = 2
        for n in range(calls):
            cid = f"c{n}"
            call = {"turn": 1, "step": 1, "callId": cid, "name": "ls", "arguments": "{}"}
            f.write(_line({"type": "tool/call", "seq": seq, "time": 1000, "data": call}))
            message = {
                "role": "tool",
                "source": {"kind": "tool", "callId": cid},
                "toolCallId": cid,
                "content": [{"type": "text", "text": "ok"}],
                "isError": False,
                "id": f"t{n}",
            }
            result = {"type": "tool/result", "seq": seq + 1, "time": 1000}
            result |= {"data": {"turn": 1, "step": 1, "message": message}, "sourceEventSeqs": [seq]}
            f.write(_line({**result, "surfaceOp": "append"}))
            seq += 2
        f.write(_line({"type": "step/end", "seq": seq, "time": 1000, "data": {"turn": 1, "step": 1}}))
        end = {"turn": 1, "reason": {"kind": "completed"}}
        f.write(_line({"type": "turn/end", "seq": seq + 1, "time": 1000, "data": end}))
    return path


def seq_range_bomb(events: int = 8611, ranges: int = 10_000) -> bytes:
    """A v4 log whose last event cites ``ranges`` copies of [0, events - 1]: overlapping ranges
    that an expanding decoder turns into ``events × ranges`` ints (issue 11, 1a)."""
    body = b"".join(v4_user(s) for s in range(events))
    bomb = v4_user(events, sourceEventSeqs=[[0, events - 1]] * ranges)
    return V4_HEADER + body + bomb


def packed_row_bomb(members: int = 1_000_000, balanced: bool = True) -> bytes:
    """A valid v0 log with one packed ``text-chunks`` row of ``members`` one-letter members
    (issue 11, 1b): one line, millions of events."""
    lines = [
        V0_HEADER,
        _line({"type": "turn/start", "seq": 0, "time": 1001, "data": {"turn": 1}}),
        _line({"type": "step/start", "seq": 1, "time": 1002, "data": {"turn": 1, "step": 1}}),
        _line(
            {
                "type": "assistant/chunk",
                "seq": 2,
                "time": 1003,
                "data": {
                    "turn": 1,
                    "step": 1,
                    "chunk": {"type": "block-start", "index": 0, "blockType": "text"},
                },
            }
        ),
        _line(
            {
                "type": "text-chunks",
                "seq0": 3,
                "time0": 1004,
                "data": {
                    "turn": 1,
                    "step": 1,
                    "index": 0,
                    "dt": [0] * (members - 1),
                    "texts": ["a"] * members,
                },
            }
        ),
    ]
    seq = 3 + members
    if balanced:
        lines.append(_line({"type": "step/end", "seq": seq, "time": 1005, "data": {"turn": 1, "step": 1}}))
        lines.append(
            _line(
                {
                    "type": "turn/end",
                    "seq": seq + 1,
                    "time": 1006,
                    "data": {"turn": 1, "reason": {"kind": "completed"}},
                }
            )
        )
    return b"".join(lines)


@dataclass(frozen=True)
class Measured:
    exit_code: int
    peak_rss: int  # bytes
    stdout: bytes
    stderr: str


# Linux keeps a process's peak RSS across exec, and a child forked from the (large) test process
# starts with that process's pages: the command is therefore forked from a small launcher.
_LAUNCHER = """
import os, resource, sys
report, limit, *args = sys.argv[1:]
pid = os.fork()
if pid == 0:
    if int(limit):
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    os.execv(args[0], args)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


# A fixed mmap threshold, for a child whose peak must not depend on how many large buffers it
# freed: glibc raises its threshold to the size of each mmapped block freed (up to 32 MiB), and
# later blocks of that size then come from the heap, where a small object allocated above one
# keeps its pages after it is freed. How often that happens depends on how many chunks a run
# reads, not on what it holds: a mini-agent fork of 4N never-answered calls peaked 1.6 to 3.4
# MiB above one of N (10,000) in five of five runs, and of 8N no higher than of 4N (+0.3 MiB on
# average), with Python's traced peak (17.3, 17.0 MiB) and SQLite's (0.75, 0.76) flat. At 128
# KiB (glibc's initial value) every such block stays in mmap, its pages returned when freed: the
# same fork then peaked 0.3 MiB lower at 4N than at N. Python's objects (pymalloc's arenas are
# mmapped on their own) and anything held count exactly as before.
FIXED_MMAP = {"MALLOC_MMAP_THRESHOLD_": str(128 << 10)}


def run_measured(
    args: list[str],
    *,
    address_space: int | None = None,
    cwd: Path | None = None,
    stdin: Path | None = None,
    env: dict[str, str] | None = None,
    module: tuple[str, ...] = ("sesstool",),
) -> Measured:
    """Run ``sesstool ARGS`` in a child (optionally under RLIMIT_AS, with standard input read
    from the file ``stdin`` and ``env`` added to the environment, which sets one malloc arena
    and ``FIXED_MMAP`` unless ``env`` says otherwise) and read its peak RSS.
    ``module``: what ``python -m`` runs, with its own arguments before ARGS."""
    where = cwd or Path.cwd()
    # One malloc arena: glibc gives each thread that allocates an arena of its own, and how many
    # pages those hold at the peak depends on which thread ran when (a fork's peak moved by about
    # 1 MiB between identical runs on a loaded machine, its growth from N to 4N nodes by as much).
    # One arena measures what the program holds, not how the scheduler interleaved its threads.
    # And a fixed mmap threshold (``FIXED_MMAP``, the default since stop 35): a large block's
    # pages are returned when it is freed, so a peak does not depend on which earlier blocks
    # happened to raise glibc's threshold. Measured, each over three runs on stop 35's code:
    # Claude ``inspect --json`` of N -> 4N distinct values +0.88 to +1.42 MiB (CI: +2.09),
    # -0.07 to +0.38 fixed; ``validate`` of fanned branches +0.42 to +1.64 (CI: +2.05), -0.27 to
    # +0.04 fixed; a Claude fork of a transcript of one 16 MiB prompt 127.7 or 144.4 MiB from
    # run to run of the same file, 112.2 every time fixed.
    env = {"MALLOC_ARENA_MAX": "1", **FIXED_MMAP, **(env or {})}
    out_path = where / f".measured-{os.getpid()}.out"
    report = where / f".measured-{os.getpid()}.rss"
    command = [sys.executable, "-m", *module, *args]
    with open(out_path, "wb") as out, open(stdin or os.devnull, "rb") as given:
        proc = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, str(report), str(address_space or 0), *command],
            stdout=out,
            stderr=subprocess.PIPE,
            stdin=given,
            cwd=cwd,
            env={**os.environ, **env},
            check=True,
        )
    code, peak_kib = map(int, report.read_text().split())
    report.unlink()
    stdout = out_path.read_bytes()
    out_path.unlink()
    return Measured(code, peak_kib * 1024, stdout, proc.stderr.decode("utf-8", "replace"))


MiB = 1 << 20


def output_of(args: list[str], log: Path) -> bytes:
    """What ``sesstool ARGS LOG`` prints, run in a child in the log's folder (exit 0, or 1: a
    verdict on a damaged log)."""
    measured = run_measured([*args, str(log)], cwd=log.parent, env={"PYTHONPATH": str(_ROOT)})
    assert measured.exit_code in (0, 1), measured.stderr
    return measured.stdout


def peak_of(args: list[str], log: Path) -> int:
    """The peak RSS of ``sesstool ARGS LOG`` in a child under a 2 GiB address space (exit 0 or
    1), run in the log's folder."""
    env = {"PYTHONPATH": str(_ROOT)}
    measured = run_measured([*args, str(log)], address_space=2 << 30, cwd=log.parent, env=env)
    assert measured.exit_code in (0, 1), measured.stderr
    return measured.peak_rss


def assert_flat(small: int, large: int, bound: int = 2 * MiB, *, label: str = "") -> None:
    """The peak RSS of the 4N child within ``bound`` of the N child's; the two peaks and the
    growth printed first (``pytest -s``: a memory test's figures), after ``label``."""
    figures = f"{small / MiB:.2f} -> {large / MiB:.2f} MiB ({(large - small) / MiB:+.2f})"
    print(f"{label}: {figures}" if label else figures)
    assert large - small < bound, (round(small / MiB, 2), round(large / MiB, 2))


def json_objects(doc: object) -> list[dict[str, object]]:
    """Every JSON object in ``doc``, outermost first."""
    found: list[dict[str, object]] = []
    if isinstance(doc, dict):
        found.append(doc)
        for value in doc.values():
            found.extend(json_objects(value))
    elif isinstance(doc, list):
        for value in doc:
            found.extend(json_objects(value))
    return found


_ROOT = Path(__file__).resolve().parent.parent.parent  # the repository (children import sesstool from it)


# The commands every memory property runs on one log (each test adds its fork, and the dialect
# property ``redact`` and ``report``): reads, the second-pass views, and the writes.
EVERY_COMMAND: tuple[tuple[str, ...], ...] = (
    ("validate",),
    ("inspect",),
    ("inspect", "--timeline", "--json"),
    ("derive",),
    ("derive", "--format", "jsonl"),
    ("repair",),
    ("migrate",),
)


def output_args(command: list[str] | tuple[str, ...], directory: Path) -> list[str]:
    """Where a measured command publishes, fresh (what a memory test adds before the log): a
    writing command (``repair``, ``migrate``, ``fork``, ``redact``) an empty folder of its own
    in ``directory``, ``report`` a page there; a reading command nothing."""
    if command[0] == "report":
        page = directory / "report.html"
        page.unlink(missing_ok=True)
        return ["-o", str(page)]
    if command[0] in ("repair", "migrate", "fork", "redact"):
        target = directory / f"out-{command[0]}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        return ["-o", str(target)]
    return []
