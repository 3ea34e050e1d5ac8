"""`make bench-codex` (also the last step of `make bench`): a generated Codex rollout (100 MiB
and 1 GiB by default), `sesstool validate` against a bare `orjson.loads` loop over the same file,
and peak RSS, printed beside the dsh figures of the same `make bench`.

The rollout is the ``parallel-calls`` fixture (recorded from the real Codex CLI) repeated as
whole turns, with call ids renumbered per copy so pairing stays exact; every copy is a complete
turn, so the file is clean and validate must exit 0. The bare loop and validate run back to back,
alternating, ``--repeat`` times (default 3); the ratio bare/validate is given for the medians and
for the fastest runs (``bench/run.py`` keeps the fastest), beside the dsh ratio
``validate/bare-loop throughput`` at the same size from ``bench/out/results.json`` when that
file is from the same checkout. Reports only; exit 1 only when a command fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from run import BARE_LOOP, DEFAULT_OUT, byte_compile, machine_facts, measure, warm  # noqa: E402

FIXTURE = next((ROOT / "fixtures" / "codex" / "parallel-calls").glob("rollout-*.jsonl"))
MIB = 1 << 20
UNITS = {"M": MIB, "G": 1 << 30}


def generate(target: int, path: Path) -> None:
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    head, body = lines[0], b"".join(lines[1:])
    copy = 0
    written = 0
    with path.open("wb") as out:
        out.write(head)
        while written < target:
            tag = f"{copy:08d}".encode()
            chunk = body.replace(b'"call_one"', b'"call_one_' + tag + b'"').replace(
                b'"call_two"', b'"call_two_' + tag + b'"'
            )
            out.write(chunk)
            written += len(chunk)
            copy += 1


def dsh_ratios(results: Path) -> tuple[dict[str, float], str]:
    """``{size: validate/bare-loop throughput}`` of the dsh run in ``results`` and where from."""
    try:
        report = json.loads(results.read_text())
    except (OSError, ValueError):
        return {}, f"no dsh figures: {results} is missing (run `make bench`)"
    head = machine_facts().get("git_head")
    theirs = report.get("machine", {}).get("git_head")
    ratios: dict[str, float] = {}
    for label, size in report.get("sizes", {}).items():
        for check in size.get("checks", []):
            if check.get("name") == "validate/bare-loop throughput" and check.get("value") is not None:
                ratios[label] = float(check["value"])
    note = f"dsh figures: {results.name} of {report.get('timestamp')}"
    if theirs != head:
        note += f" (commit {str(theirs)[:10]}, not this checkout's {str(head)[:10]})"
    return ratios, note


def run_size(label: str, repeat: int, keep: bool, out_dir: Path) -> dict[str, Any]:
    target = int(label[:-1]) * UNITS[label[-1]]
    path = out_dir / f"codex-{label}.jsonl"
    if not path.exists() or path.stat().st_size < target:
        print(f"generating {path.name} …", flush=True)
        generate(target, path)
    size = path.stat().st_size
    warm(path)
    bare: list[float] = []
    validate: list[float] = []
    rss = 0
    failed = False
    try:
        for _ in range(repeat):  # alternating, so both see the same load
            b = measure([sys.executable, "-c", BARE_LOOP, str(path)], timeout=1800)
            v = measure([sys.executable, "-m", "sesstool", "validate", str(path)], timeout=1800)
            failed |= b.exit_code != 0 or v.exit_code != 0
            bare.append(b.seconds)
            validate.append(v.seconds)
            rss = max(rss, v.peak_rss_kib)
            print(
                f"  {label}: bare {b.seconds:.2f} s, validate {v.seconds:.2f} s (exit {v.exit_code})",
                flush=True,
            )
    finally:
        if not keep:
            path.unlink()
    median_bare, median_validate = statistics.median(bare), statistics.median(validate)
    return {
        "size": label,
        "bytes": size,
        "bare_seconds": [round(s, 2) for s in bare],
        "validate_seconds": [round(s, 2) for s in validate],
        "validate_mib_per_s": round(size / MIB / median_validate, 1),
        "ratio_medians": round(median_bare / median_validate, 3),
        "ratio_fastest": round(min(bare) / min(validate), 3),
        "validate_peak_rss_mib": round(rss / 1024, 1),
        "failed": failed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100M,1G")
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs per size (medians)")
    parser.add_argument("--keep", action="store_true", help="keep the generated rollouts for reuse")
    parser.add_argument("--dsh", default=str(DEFAULT_OUT), help="the dsh report to compare with")
    args = parser.parse_args(argv)
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    print(f"\n== Codex rollouts ({byte_compile()}; load average {os.getloadavg()[0]:.1f}) ==", flush=True)
    started = time.time()
    rows = [run_size(label, args.repeat, args.keep, out_dir) for label in args.sizes.split(",")]
    dsh, dsh_note = dsh_ratios(Path(args.dsh))
    print(f"\nvalidate throughput ratio, bare orjson loop time / validate time ({dsh_note})")
    print(f"{'size':>5}  {'codex median':>12}  {'codex fastest':>13}  {'dsh (fastest)':>13}  {'RSS MiB':>7}")
    for row in rows:
        theirs = dsh.get(row["size"])
        row["dsh_ratio"] = theirs
        print(
            f"{row['size']:>5}  {row['ratio_medians']:>12.3f}  {row['ratio_fastest']:>13.3f}  "
            f"{'-' if theirs is None else format(theirs, '.3f'):>13}  {row['validate_peak_rss_mib']:>7.1f}"
        )
    if len(rows) > 1:
        growth = rows[-1]["validate_peak_rss_mib"] / rows[0]["validate_peak_rss_mib"]
        print(f"peak RSS {rows[-1]['size']} / {rows[0]['size']}: ×{growth:.2f} (flat memory ⇒ ~1.0)")
    report = {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "load_average_at_start": os.getloadavg()[0],
        "repeat": args.repeat,
        "dsh_note": dsh_note,
        "sizes": rows,
    }
    (out_dir / "codex-results.json").write_text(json.dumps(report, indent=1) + "\n")
    return 1 if any(row["failed"] for row in rows) else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    raise SystemExit(main())
