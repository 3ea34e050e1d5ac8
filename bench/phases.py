"""Per-phase breakdown of sesstool's read path on one log, in one process (`make bench` runs it).

    python bench/phases.py LOG [--repeat N]

Prints one JSON object: seconds for each phase, each measured from scratch over the whole file
(fastest of ``--repeat``), with the number of lines. Each phase includes the ones before it:

* ``startup`` — ``import sesstool.cli.main`` in a fresh interpreter (what every command pays
  before it reads a byte; measured as a subprocess so module caches do not help);
* ``read`` — the store's reader (``store.readers.make_reader``: raw or zstd, the line splitter)
  yielding every batch, nothing decoded;
* ``decode`` — the same plus ``orjson.loads`` of every line (the floor a Python scanner that
  decodes every record cannot go below);
* ``scan`` — ``engine.scan.scan_source``: reader, dialect detection, the scanner and its
  handlers, classification — everything ``validate`` does except start-up and rendering.

Differences name the phases: split = read, parse = decode - read, handlers = scan - decode.
The CLI run of the same file (measured by ``bench/run.py``) minus ``scan`` is start-up plus
rendering. Per-line figures are microseconds per line.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import Any

import orjson


def _startup() -> float:
    code = "import time; t = time.perf_counter(); import sesstool.cli.main; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    return float(out.stdout.strip())


def _read(path: str, decode: bool) -> int:
    from sesstool.store.readers import make_reader
    from sesstool.store.source import ReadLimits, open_source

    loads = orjson.loads
    n = 0
    with open_source(path) as (stream, info):
        for item in make_reader(stream, info.encoding, ReadLimits()).batches():
            if type(item) is tuple:
                lines = item[0]
                n += len(lines)
                if decode:
                    for line in lines:
                        loads(line)
    return n


def _scan(path: str) -> int:
    from sesstool.engine.scan import scan_source

    report = scan_source(path)
    return report.read.lines


def measure(path: str, repeat: int) -> dict[str, Any]:
    """Every phase once per round, ``repeat`` rounds, the fastest of each: interleaving the
    phases keeps a load change on a shared machine from landing on one phase only."""
    best = {"startup": float("inf"), "read": float("inf"), "decode": float("inf"), "scan": float("inf")}
    lines = scanned = 0
    for _ in range(repeat):
        best["startup"] = min(best["startup"], _startup())
        for name, decode in (("read", False), ("decode", True)):
            start = time.perf_counter()
            lines = _read(path, decode)
            best[name] = min(best[name], time.perf_counter() - start)
        start = time.perf_counter()
        scanned = _scan(path)
        best["scan"] = min(best["scan"], time.perf_counter() - start)
    if scanned != lines:
        raise SystemExit(f"the scan read {scanned} lines, the reader {lines}")
    per_line = {
        "split": best["read"],
        "parse": best["decode"] - best["read"],
        "handlers": best["scan"] - best["decode"],
    }
    return {
        "lines": lines,
        "seconds": {k: round(v, 4) for k, v in best.items()},
        "us_per_line": {k: round(v / lines * 1e6, 3) if lines else None for k, v in per_line.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    print(orjson.dumps(measure(args.path, max(1, args.repeat))).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
