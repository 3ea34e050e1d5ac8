"""`make bench-fleet`: the fleet's throughput, one process vs a LocalCluster (docs/fleet.md).

Two workloads on local files: files per second over many small logs (default 10,000 copies of
the clean dsh fixtures) and bytes per second over a few large generated ones (default 20 × 64 MiB).
Each is validated by

* one process: the same per-file function the workers run (`sesstool.fleet.work.process`),
  in a loop — the baseline, no Dask at all;
* a LocalCluster (default 2 workers × 1 thread): `run_fleet` with the summary written to disk,
  timed from submission to the last row (cluster start-up is reported on its own).

It reports; it is not a test. The machine is shared: quote figures with that caveat.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import genlog  # noqa: E402

from sesstool.fleet.entry import FleetOutput, run_fleet  # noqa: E402
from sesstool.fleet.run import FleetRequest, plan  # noqa: E402
from sesstool.fleet.work import FleetSettings, process  # noqa: E402

# Small real logs: the clean dsh fixtures of every version (0.5–20 KiB each), copied round-robin.
SMALL_SOURCES = (
    "dsh/v0-tiny/session.jsonl", "dsh/v1-tiny/session.v1.jsonl", "dsh/v2-tiny/session.v2.jsonl",
    "dsh/v3-tiny/session.v3.jsonl", "dsh/v4-tiny/session.v4.jsonl", "dsh/clean-multiturn/session.jsonl",
    "dsh/chunks-packed/session.jsonl", "dsh/compaction/session.jsonl",
)  # fmt: skip


def small_logs(root: Path, count: int) -> list[Path]:
    """``count`` small valid logs in their own session directories."""
    fixtures = HERE.parent / "fixtures"
    sources = [fixtures / s for s in SMALL_SOURCES]
    out = []
    for n in range(count):
        src = sources[n % len(sources)]
        path = root / f"s{n:06d}" / src.name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, path)
        out.append(path)
    return out


def large_logs(root: Path, count: int, size: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(count):
        path = root / f"large-{i:02d}-{size}.jsonl"
        if not path.exists():
            genlog.generate(path, size, seed=100 + i)
        out.append(path)
    return out


def single_process(root: Path) -> dict[str, float]:
    settings = FleetSettings("validate")
    todo = plan(FleetRequest((str(root),), settings))
    started = time.perf_counter()
    rows = [process(settings, item) for item in todo.items]
    seconds = time.perf_counter() - started
    assert all(r.status == "ok" for r in rows), [r for r in rows if r.status != "ok"][:3]
    return {"files": len(rows), "bytes": todo.total_bytes, "seconds": seconds}


def on_cluster(root: Path, scheduler: str, summary: Path) -> dict[str, float]:
    settings = FleetSettings("validate")
    request = FleetRequest((str(root),), settings, scheduler=scheduler)
    started = time.perf_counter()
    report = run_fleet(request, FleetOutput(summary, None, None))
    seconds = time.perf_counter() - started
    assert report.ok and report.files > 0
    return {"files": report.files, "bytes": report.bytes, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000, help="number of small logs")
    parser.add_argument("--large", type=int, default=20, help="number of large logs")
    parser.add_argument("--large-size", type=genlog.parse_size, default=64 << 20, help="bytes per large log")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "fleet")
    parser.add_argument("--keep", action="store_true", help="keep the generated logs for the next run")
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    out: Path = args.out
    small_root, large_root = out / "small", out / "large"
    t = time.perf_counter()
    small_logs(small_root, args.small)
    large_logs(large_root, args.large, args.large_size)
    print(f"generated in {time.perf_counter() - t:.1f} s", file=sys.stderr)

    results: dict[str, Any] = {"machine": machine(), "workers": args.workers}
    results["small_single"] = single_process(small_root)
    results["large_single"] = single_process(large_root)
    t = time.perf_counter()
    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
            host="127.0.0.1",
        ) as cluster,
        Client(cluster),  # type: ignore[no-untyped-call]
    ):  # fmt: skip
        results["cluster_start_seconds"] = time.perf_counter() - t
        stamp, address = int(time.time()), cluster.scheduler.address
        results["small_cluster"] = on_cluster(small_root, address, out / f"small-{stamp}.jsonl")
        results["large_cluster"] = on_cluster(large_root, address, out / f"large-{stamp}.jsonl")
    for summary in out.glob("*-*.jsonl"):
        summary.unlink()

    rows = []
    for label, key in (("10k small: files/s", "small"), ("20 large: MiB/s", "large")):
        single, multi = results[f"{key}_single"], results[f"{key}_cluster"]
        if key == "small":
            a, b = single["files"] / single["seconds"], multi["files"] / multi["seconds"]
        else:
            a, b = single["bytes"] / single["seconds"] / 2**20, multi["bytes"] / multi["seconds"] / 2**20
        rows.append((label, a, b, b / a))
        results[f"{key}_speedup"] = b / a
    print(f"{'workload':<22}{'1 process':>12}{'LocalCluster':>14}{'ratio':>8}")
    for label, a, b, r in rows:
        print(f"{label:<22}{a:>12.1f}{b:>14.1f}{r:>8.2f}")
    small = results["small_single"]
    print(f"small logs: {small['files']} files, {small['bytes'] / small['files'] / 1024:.1f} KiB on average")
    print(f"cluster start-up: {results['cluster_start_seconds']:.1f} s ({args.workers} workers)")
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    if not args.keep:
        shutil.rmtree(small_root)
        shutil.rmtree(large_root)
    return 0


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg_at_start": load,
        "shared": "yes: other engineers' jobs run on the same 2 cores",
    }


if __name__ == "__main__":
    raise SystemExit(main())
