"""Claude transcripts at scale: generate one of a given size, time `sesstool validate` on it and
record its peak memory (``make bench-claude``; not part of ``make bench``'s dsh table).

The transcript repeats the ``tool-one`` fixture's turn (prompt, attachments, a tool call, its
result, a reply) with fresh uuids, message ids and tool ids, each turn parented to the last,
so it is one valid session of many turns. Prints one JSON line per size.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
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


def main() -> None:
    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    for arg in sys.argv[1:] or ["104857600", "1073741824"]:
        path = out_dir / f"claude-{arg}.jsonl"
        size, turns = generate(path, int(arg))
        start = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        proc = subprocess.run(
            [sys.executable, "-m", "sesstool", "validate", "--format", "json", str(path)],
            capture_output=True, check=False,
        )  # fmt: skip
        elapsed = time.monotonic() - start
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        verdict = json.loads(proc.stdout)["files"][0]["verdict"] if proc.stdout else proc.stderr.decode()
        print(json.dumps({
            "bytes": size, "turns": turns, "exit": proc.returncode, "verdict": verdict,
            "seconds": round(elapsed, 1), "MB_per_s": round(size / elapsed / 1e6, 1),
            "peak_rss_MB": round(max(rss, before) / 1024), "note": "peak RSS of the largest child so far",
        }), flush=True)  # fmt: skip
        path.unlink()


if __name__ == "__main__":
    main()
