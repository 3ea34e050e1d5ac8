"""Claude transcripts at scale: generate one of each given size (100 MiB and 1 GiB by default),
run `sesstool validate`, `inspect` and `derive` on it, and record each run's time and peak
memory (``make bench-claude``; not part of ``make bench``'s dsh table). The last lines print
the peak RSS of each command at every size side by side, with the growth from the first size
to the last (issue 17: flat memory means under 150 MB at 1 GiB and under 10 % growth).
``SESSTOOL_BENCH_COMMANDS=validate,inspect`` picks commands.

The transcript repeats the ``tool-one`` fixture's turn (prompt, attachments, a tool call, its
result, a reply) with fresh uuids, message ids and tool ids, each turn parented to the last,
so it is one valid session of many turns. Prints one JSON line per run.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEED = sorted((ROOT / "fixtures" / "claude" / "projects" / "tool-one").glob("*.jsonl"))[0]


def generate(path: Path, target: int) -> tuple[int, int]:
    entries = [json.loads(line) for line in SEED.read_bytes().split(b"\n")[:-1]]
    graph = [e for e in entries if isinstance(e.get("uuid"), str)]
    size = turn = 0
    last: str | None = None
    with path.open("wb") as out:
        while size < target:
            remap = {e["uuid"]: str(uuid.UUID(int=(turn << 32) + i)) for i, e in enumerate(graph)}
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
            last = remap[graph[-1]["uuid"]]
            turn += 1
    return size, turn


COMMANDS = {
    "validate": ["validate", "--format", "json"],
    "inspect": ["inspect", "--json"],
    "derive": ["derive", "--format", "jsonl"],
}


def measure(command: str, path: Path) -> dict[str, Any]:
    """One sesstool run: exit status, seconds and its own peak RSS (``wait4``: this child's,
    not the largest of every child so far); its output is discarded."""
    argv = [sys.executable, "-m", "sesstool", *COMMANDS[command], str(path)]
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.monotonic() - start
        err.seek(0)
        tail = err.read()[-300:].decode("utf-8", "replace")
    row: dict[str, Any] = {"exit": os.waitstatus_to_exitcode(status), "seconds": round(elapsed, 1)}
    row["peak_rss_MB"] = round(usage.ru_maxrss / 1024)  # kilobytes on Linux
    return row | ({"stderr": tail} if tail else {})


def main() -> None:
    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(a) for a in sys.argv[1:]] or [104857600, 1073741824]
    commands = os.environ.get("SESSTOOL_BENCH_COMMANDS", "validate,inspect,derive").split(",")
    print(json.dumps({"load_average": os.getloadavg(), "cpus": os.cpu_count()}), flush=True)
    table: dict[str, dict[int, Any]] = {c: {} for c in commands}
    for target in sizes:
        path = out_dir / f"claude-{target}.jsonl"
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
        print(f"  {command:<9} {cells}{growth}", flush=True)


if __name__ == "__main__":
    main()
