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
* ``prefilter`` — the same plus the scanner's unsafe-integer prefilter of every batch
  (``core.unsafe_integers.maybe_unsafe_integers``: join, digit map, 16-digit search);
* ``scan`` — ``engine.scan.scan_source``: reader, dialect detection, the scanner and its
  handlers, classification — everything ``validate`` does except start-up and rendering;

Differences name the phases: split = read, parse = decode - read, prefilter = prefilter -
decode, handlers = scan - prefilter (envelope, dispatch, handlers, fold). ``cpu_seconds``
holds the same phases in CPU time of this process (user + system; start-up: of its child),
which a shared machine's load moves far less than wall time.
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


def _startup() -> tuple[float, float]:
    """(wall, CPU) seconds of ``import sesstool.cli.main`` in a fresh interpreter."""
    code = (
        "import time; t, c = time.perf_counter(), time.process_time(); import sesstool.cli.main; "
        "print(time.perf_counter() - t, time.process_time() - c)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def _read(path: str, decode: bool, prefilter: bool = False) -> int:
    from sesstool.core.unsafe_integers import maybe_unsafe_integers
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
                if prefilter:
                    maybe_unsafe_integers(lines)
    return n


def _scan(path: str) -> int:
    from sesstool.core.options import ScanOptions
    from sesstool.engine.scan import scan_source

    report = scan_source(path, ScanOptions())
    return report.read.lines


def _timed(fn: Any, *args: Any) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, result


PHASES = ("startup", "read", "decode", "prefilter", "scan")


def measure(path: str, repeat: int) -> dict[str, Any]:
    """Every phase once per round, ``repeat`` rounds, the fastest of each: interleaving the
    phases keeps a load change on a shared machine from landing on one phase only."""
    best = dict.fromkeys(PHASES, float("inf"))
    cpu = dict.fromkeys(PHASES, float("inf"))
    counted: dict[str, int] = {}
    for _ in range(repeat):
        wall_cpu = _startup()
        best["startup"], cpu["startup"] = min(best["startup"], wall_cpu[0]), min(cpu["startup"], wall_cpu[1])
        runs = (
            ("read", _read, (path, False)),
            ("decode", _read, (path, True)),
            ("prefilter", _read, (path, True, True)),
            ("scan", _scan, (path,)),
        )
        for name, fn, args in runs:
            wall, spent, counted[name] = _timed(fn, *args)
            best[name], cpu[name] = min(best[name], wall), min(cpu[name], spent)
    if len(set(counted.values())) != 1:
        raise SystemExit(f"the phases read different line counts: {counted}")
    lines = counted["read"]
    per_line = {
        "split": best["read"],
        "parse": best["decode"] - best["read"],
        "prefilter": best["prefilter"] - best["decode"],
        "handlers": best["scan"] - best["prefilter"],
    }
    return {
        "lines": lines,
        "seconds": {k: round(v, 4) for k, v in best.items()},
        "cpu_seconds": {k: round(v, 4) for k, v in cpu.items()},
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
