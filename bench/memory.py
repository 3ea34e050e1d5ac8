"""`make bench-memory`: peak RSS and wall time of EVERY command and format, sizes side by side.

Issue 14 asks for every command in flat memory: peak RSS < 150 MB at 1 GiB and growing less
than 10 % from 100 MiB to 1 GiB. This harness generates (``bench/genlog.py``) for each size a
raw log, its zstd twin, a torn log and its zstd twin, and a *surface* log: the same generator
with compaction switched off, so the surface node list (and what derive prints) grows with the
log, the worst case for derive. It then runs every command in a subprocess under the launcher
of ``bench/run.py`` (peak RSS from ``os.wait4``, not inherited from the harness) and prints one
row per command: RSS and seconds per size, the RSS growth from the smallest to the largest
size, and the throughput ratios issue 14 targets (migrate → v4 vs validate, fork vs validate,
repair vs validate on the torn log).

It reports; it is not a test (exit 0 even when a target is missed; 1 when a command fails).
Generated logs go to ``bench/out/`` and are reused with ``--keep`` (sidecars as in run.py).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import genlog
import orjson
import run as bench_run
import zstandard

HERE = Path(__file__).resolve().parent
MIB = 1 << 20
LIMIT_MIB = bench_run.RSS_LIMIT_BYTES / MIB


class _SurfaceGenerator(genlog._Generator):
    """genlog's chunk-heavy workload without compactions: every surface node stays current."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.next_compaction = 1 << 62


def ensure_surface(out_dir: Path, target: int, seed: int) -> Path:
    path = out_dir / f"v0-{bench_run.size_label(target)}-s{seed}-surface.jsonl"
    want = {"generator_version": genlog.GENERATOR_VERSION, "target_bytes": target, "seed": seed}
    meta = bench_run._read_sidecar(path)
    if meta is not None and all(meta.get(k) == v for k, v in want.items()):
        return path
    print(f"generating {path.name} (no compactions) …", flush=True)
    with open(path, "wb", buffering=1 << 20) as out:
        gen = _SurfaceGenerator(out, seed, False)
        gen.run(target, False)
    bench_run._write_sidecar(path, {**want, "bytes": gen.stats.bytes, "events": gen.stats.events})
    return path


def ensure_zstd_of(raw: Path) -> Path:
    path = raw.with_name(raw.name + ".zstd")
    want = {"source": raw.name, "source_bytes": raw.stat().st_size}
    meta = bench_run._read_sidecar(path)
    if meta is not None and all(meta.get(k) == v for k, v in want.items()):
        return path
    print(f"compressing {raw.name} …", flush=True)
    frames = genlog.compress(raw, path)
    with open(raw, "rb") as f:  # a torn log: its partial last line becomes a truncated frame
        f.seek(max(0, raw.stat().st_size - (1 << 20)))
        tail = f.read()
    partial = tail[tail.rfind(b"\n") + 1 :]
    if partial:
        _truncate_last_frame(raw, path, len(partial))
    bench_run._write_sidecar(path, {**want, "bytes": path.stat().st_size, "frames": frames})
    return path


def _truncate_last_frame(raw: Path, path: Path, partial: int) -> None:
    """Rewrite ``path`` so the partial last line is the first half of a final frame: a zstd log
    torn mid-write (complete frames ending in a partial record read as corrupt, spec §9.2)."""
    body = raw.with_name(raw.name + ".body")
    with open(raw, "rb") as src, open(body, "wb") as dst:
        left = raw.stat().st_size - partial
        while left > 0 and (piece := src.read(min(left, 1 << 20))):
            dst.write(piece)
            left -= len(piece)
        last = src.read()
    genlog.compress(body, path)
    body.unlink()
    frame = zstandard.ZstdCompressor(level=3, write_checksum=True).compress(last)
    with open(path, "ab") as out:
        out.write(frame[: len(frame) // 2])


@dataclass(frozen=True)
class Case:
    name: str  # row label
    file: str  # raw | zstd | torn | torn-zstd | surface
    args: Callable[[Path, Path], list[str]]  # (log, scratch output path) -> sesstool arguments
    accept: frozenset[int] = frozenset({0})


def _cases() -> list[Case]:
    def plain(*words: str) -> Callable[[Path, Path], list[str]]:
        return lambda log, out: [words[0], str(log), *words[1:]]

    def writing(*words: str) -> Callable[[Path, Path], list[str]]:
        return lambda log, out: [words[0], str(log), *words[1:], "-o", str(out)]

    findings = frozenset({0, 1})
    cases = [
        Case("validate", "raw", plain("validate", "--format", "json"), findings),
        Case("validate", "zstd", plain("validate", "--format", "json"), findings),
        Case("validate", "torn", plain("validate", "--format", "json"), findings),
        Case("inspect --json", "raw", plain("inspect", "--json")),
        Case("inspect --timeline", "raw", plain("inspect", "--timeline")),
        Case("inspect --timeline --json", "zstd", plain("inspect", "--timeline", "--json")),
    ]
    for kind in ("raw", "zstd", "surface"):
        for fmt in ("json", "jsonl"):
            cases.append(Case(f"derive --format {fmt}", kind, plain("derive", "--format", fmt)))
    cases += [
        Case("validate", "surface", plain("validate", "--format", "json"), findings),
        Case("migrate --to 4", "raw", writing("migrate", "--to", "4")),
        Case("migrate --to 4", "zstd", writing("migrate", "--to", "4")),
        Case("fork", "raw", writing("fork", "--created-at", "0")),
        Case("fork", "zstd", writing("fork", "--created-at", "0")),
        Case("repair", "torn", writing("repair")),
        Case("repair", "torn-zstd", writing("repair")),
    ]
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100M,1G")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated row names to run (default: all)")
    ap.add_argument("--files", default="", help="comma-separated file kinds to run on (default: all)")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--keep", action="store_true", help="keep generated logs for reuse")
    ap.add_argument("--sesstool", default="", help="command that runs sesstool")
    ap.add_argument("--out", default=str(HERE / "out" / "memory-results.json"))
    args = ap.parse_args(argv)
    sesstool = shlex.split(args.sesstool) or [sys.executable, "-m", "sesstool"]
    sizes = sorted({genlog.parse_size(s) for s in args.sizes.split(",") if s.strip()})
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    out_dir = HERE / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    print(bench_run.byte_compile(), flush=True)
    kinds = {s.strip() for s in args.files.split(",") if s.strip()}
    cases = [c for c in _cases() if (not only or c.name in only) and (not kinds or c.file in kinds)]
    results: dict[tuple[str, str], dict[str, bench_run.Measurement]] = {}
    created: list[bench_run.GenFile] = []
    failures: list[str] = []
    for size in sizes:
        label = bench_run.size_label(size)
        raw = bench_run.ensure_raw(out_dir, size, args.seed, torn=False)
        torn = bench_run.ensure_raw(out_dir, size, args.seed, torn=True)
        zst = bench_run.ensure_zstd(raw)
        created += [raw, torn, zst]
        files = {
            "raw": raw.path,
            "torn": torn.path,
            "zstd": zst.path,
            "torn-zstd": ensure_zstd_of(torn.path),
            "surface": ensure_surface(out_dir, size, args.seed),
        }
        for path in files.values():
            bench_run.warm(path)
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=f"memory-{label}-") as work:
            for case in cases:
                log = files[case.file]
                suffix = ".jsonl.zstd" if case.file.endswith("zstd") else ".jsonl"
                target = Path(work) / f"out{suffix}"
                m = bench_run.measure([*sesstool, *case.args(log, target)], timeout=args.timeout)
                target.unlink(missing_ok=True)
                results.setdefault((case.name, case.file), {})[label] = m
                ok = m.exit_code in case.accept and not m.timed_out and "Traceback" not in m.stderr_tail
                if not ok:
                    failures.append(f"{case.name} ({case.file}) at {label}: exit {m.exit_code}")
                print(
                    f"  {label:>5} {case.name:<28} {case.file:<9} {m.seconds:8.2f} s "
                    f"{m.peak_rss_kib / 1024:8.1f} MiB {'' if ok else 'FAILED'}",
                    flush=True,
                )
    labels = [bench_run.size_label(s) for s in sizes]
    report = _table(results, labels)
    _ratios(results, labels, report)
    Path(args.out).write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"wrote {args.out}")
    for failure in failures:
        print(f"COMMAND FAILURE: {failure}")
    if not args.keep:
        bench_run.remove_generated(created)
    return 1 if failures else 0


def _table(
    results: dict[tuple[str, str], dict[str, bench_run.Measurement]], labels: list[str]
) -> dict[str, Any]:
    head = [
        "command",
        "file",
        *(f"RSS {x} MiB" for x in labels),
        *(f"s {x}" for x in labels),
        "growth",
        "< 150 MB",
    ]
    rows: list[list[str]] = []
    doc: dict[str, Any] = {"sizes": labels, "rows": []}
    for (name, kind), per in results.items():
        rss = [per[x].peak_rss_kib / 1024 if x in per else None for x in labels]
        secs = [per[x].seconds if x in per else None for x in labels]
        growth = rss[-1] / rss[0] - 1 if len(labels) > 1 and rss[0] and rss[-1] else None
        under = all(r is not None and r < LIMIT_MIB for r in rss)
        rows.append(
            [
                name,
                kind,
                *(bench_run._fmt(r, ".1f") for r in rss),
                *(bench_run._fmt(s, ".2f") for s in secs),
                "-" if growth is None else f"{growth:+.1%}",
                "yes" if under else "NO",
            ]
        )
        doc["rows"].append({"command": name, "file": kind, "rss_mib": rss, "seconds": secs, "growth": growth})
    print()
    bench_run.print_table(head, rows, set(range(2, len(head) - 1)))
    return doc


def _ratios(
    results: dict[tuple[str, str], dict[str, bench_run.Measurement]], labels: list[str], doc: dict[str, Any]
) -> None:
    """Issue 14's time targets, per size: command time / validate time on the same file."""
    pairs = [
        ("migrate --to 4", "raw", "validate", "raw", "<= 2.0 (>= 0.5x validate throughput)", 2.0),
        ("fork", "raw", "validate", "raw", "<= 1.5", 1.5),
        ("fork", "zstd", "validate", "zstd", "<= 1.5", 1.5),
        ("repair", "torn", "validate", "torn", "<= 1.5", 1.5),
        ("repair", "torn-zstd", "validate", "torn", "(zstd repair vs raw validate) report", None),
    ]
    print("\ntime ratios (command seconds / validate seconds)")
    doc["ratios"] = []
    for a, ak, b, bk, target, limit in pairs:
        for x in labels:
            ma, mb = results.get((a, ak), {}).get(x), results.get((b, bk), {}).get(x)
            if ma is None or mb is None or mb.seconds <= 0:
                continue
            value = ma.seconds / mb.seconds
            verdict = "INFO" if limit is None else ("PASS" if value <= limit else "FAIL")
            print(f"  {x:>5} {a} ({ak}) / {b} ({bk}) = {value:.2f}  target {target}  {verdict}")
            doc["ratios"].append(
                {"size": x, "name": f"{a} ({ak}) / {b} ({bk})", "value": value, "result": verdict}
            )


if __name__ == "__main__":
    sys.exit(main())
