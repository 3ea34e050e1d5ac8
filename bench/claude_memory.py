"""Claude transcripts at scale: generate one of each given size (100 MiB and 1 GiB by default)
in a scratch directory under $TMPDIR (deleted at the end), run `sesstool validate`, `inspect`,
`derive`, `repair` and `fork` on it, and record each run's time and peak memory
(``make bench-claude``; not part of ``make bench``'s dsh table): ``derive`` in each format
(``derive`` is JSONL) and ``report`` too (issue 17). The last lines print
the peak RSS of each command at every size side by side, with the growth from the first size
to the last (issue 17: flat memory means under 150 MB at 1 GiB and under 10 % growth).
``SESSTOOL_BENCH_COMMANDS=validate,inspect`` picks commands; ``SESSTOOL_BENCH_PYTHON`` names
the interpreter that runs them (another build's, to compare before and after).

The transcript repeats the ``tool-one`` fixture's turn (prompt, attachments, a tool call, its
result, a reply) with fresh uuids, message ids and tool ids, each turn parented to the last,
so it is one valid session of many turns; the last turn ends on its tool call. Prints one JSON line per run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parent.parent
SEED = sorted((ROOT / "fixtures" / "claude" / "projects" / "tool-one").glob("*.jsonl"))[0]


def generate(path: Path, target: int) -> tuple[int, int]:
    """Whole turns up to ``target`` bytes, then one more cut after its tool call (a SIGKILL while
    the tool ran): the session is interrupted, so ``repair`` and ``fork`` append closers."""
    entries = [json.loads(line) for line in SEED.read_bytes().split(b"\n")[:-1]]
    cut = entries[: 1 + max(i for i, e in enumerate(entries) if _calls(e))]
    size = turn = 0
    last: str | None = None
    with path.open("wb") as out:
        while size < target:
            written, last = _turn(out, entries, turn, last)
            size, turn = size + written, turn + 1
        written, last = _turn(out, cut, turn, last)
    return size + written, turn + 1


def _turn(
    out: BinaryIO, entries: list[dict[str, Any]], turn: int, last: str | None
) -> tuple[int, str | None]:
    """The seed's entries with this turn's uuids, message ids and tool ids, the first parented
    to ``last``; answers the bytes written and the last graph entry's uuid."""
    graph = [e for e in entries if isinstance(e.get("uuid"), str)]
    remap = {e["uuid"]: str(uuid.UUID(int=(turn << 32) + i)) for i, e in enumerate(graph)}
    size = 0
    for entry in entries:
        e: dict[str, Any] = dict(entry)
        if isinstance(e.get("uuid"), str):
            e["uuid"] = remap[e["uuid"]]
            parent = e.get("parentUuid")
            e["parentUuid"] = remap.get(parent, last) if parent is not None else last
        message = e.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            blocks = []
            for b in message["content"]:
                if b.get("type") == "tool_use":
                    b = {**b, "id": f"{b['id']}_{turn}"}
                elif b.get("type") == "tool_result":
                    b = {**b, "tool_use_id": f"{b['tool_use_id']}_{turn}"}
                blocks.append(b)
            message = {**message, "content": blocks}
            if e.get("type") == "assistant":
                message["id"] = f"{message.get('id')}_{turn}"
            e["message"] = message
        line = json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        out.write(line)
        size += len(line)
    return size, remap[graph[-1]["uuid"]]


def _calls(entry: dict[str, Any]) -> bool:
    content = (entry.get("message") or {}).get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_use" for b in content)


COMMANDS = {  # "{out}": a file in the scratch directory, deleted after the run
    "validate": ["validate", "--format", "json"],
    "inspect": ["inspect", "--json"],
    "derive": ["derive", "--format", "jsonl"],
    "derive-json": ["derive", "--format", "json"],
    "derive-md": ["derive", "--format", "markdown"],
    "report": ["report", "-o", "{out}"],
    "repair": ["repair", "--json", "-o", "{out}"],
    "fork": ["fork", "--json", "-o", "{out}"],
}


def measure(command: str, path: Path) -> dict[str, Any]:
    """One sesstool run: exit status, seconds (wall and CPU) and its own peak RSS (``wait4``:
    this child's, not the largest of every child so far); its output is discarded."""
    out = path.with_name(f"{command}-output.jsonl")
    args = [str(out) if a == "{out}" else a for a in COMMANDS[command]]
    python = os.environ.get("SESSTOOL_BENCH_PYTHON", sys.executable)  # another build, to compare
    argv = [python, "-m", "sesstool", *args, str(path)]
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.monotonic() - start
        err.seek(0)
        tail = err.read()[-300:].decode("utf-8", "replace")
    out.unlink(missing_ok=True)
    row: dict[str, Any] = {"exit": os.waitstatus_to_exitcode(status), "seconds": round(elapsed, 1)}
    row["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 1)  # what the load average does not move
    row["peak_rss_MB"] = round(usage.ru_maxrss / 1024)  # kilobytes on Linux
    return row | ({"stderr": tail} if tail else {})


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sesstool-bench-claude-") as scratch:  # $TMPDIR, /tmp
        run(Path(scratch))


def run(scratch: Path) -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [104857600, 1073741824]
    commands = os.environ.get("SESSTOOL_BENCH_COMMANDS", ",".join(COMMANDS)).split(",")
    print(json.dumps({"load_average": os.getloadavg(), "cpus": os.cpu_count()}), flush=True)
    table: dict[str, dict[int, Any]] = {c: {} for c in commands}
    for target in sizes:
        path = scratch / f"claude-{target}.jsonl"
        size, turns = generate(path, target)
        for command in commands:
            row = measure(command, path)
            table[command][target] = row["peak_rss_MB"]
            speed = round(size / max(row["seconds"], 0.1) / 1e6, 1)
            print(
                json.dumps({"command": command, "bytes": size, "turns": turns, **row, "MB_per_s": speed}),
                flush=True,
            )
        path.unlink()
    print("peak RSS (MB) by size:", flush=True)
    for command, by_size in table.items():
        cells = "  ".join(f"{size / 2**20:,.0f} MiB: {rss}" for size, rss in by_size.items())
        values = list(by_size.values())
        growth = f"  growth {100 * (values[-1] - values[0]) / values[0]:.1f} %" if len(values) > 1 else ""
        print(f"  {command:<11} {cells}{growth}", flush=True)
    print(json.dumps({"load_average_at_end": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
