"""`make bench-codex`: a generated Codex rollout (100 MiB and 1 GiB by default), `sesstool
validate` against a bare `orjson.loads` loop over the same file, and peak RSS.

The rollout is the ``parallel-calls`` fixture (recorded from the real Codex CLI) repeated as
whole turns, with call ids and turn ids renumbered per copy so pairing stays exact; every copy is
a complete turn, so the file is clean. The ratio bare/validate is the figure DESIGN §8 sets for
dsh (≥ 0.6 on small events); it is printed beside the dsh ratio of the last ``make bench`` run
when ``bench/out/results.json`` has one. Reports only; exit 1 only when a command fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from run import BARE_LOOP, measure, size_label  # noqa: E402

FIXTURE = next((ROOT / "fixtures" / "codex" / "parallel-calls").glob("rollout-*.jsonl"))
MIB = 1 << 20


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100M,1G")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    units = {"M": MIB, "G": 1 << 30}
    report: list[dict[str, object]] = []
    failed = False
    for label in args.sizes.split(","):
        target = int(label[:-1]) * units[label[-1]]
        path = out_dir / f"codex-{label}.jsonl"
        if not path.exists() or path.stat().st_size < target:
            generate(target, path)
        size = path.stat().st_size
        bare = measure([sys.executable, "-c", BARE_LOOP, str(path)], timeout=1800)
        validate = measure([sys.executable, "-m", "sesstool", "validate", str(path)], timeout=1800)
        failed |= validate.exit_code != 0 or bare.exit_code != 0
        row = {
            "size": size_label(size),
            "bytes": size,
            "bare_seconds": round(bare.seconds, 2),
            "validate_seconds": round(validate.seconds, 2),
            "validate_mib_per_s": round(size / MIB / validate.seconds, 1) if validate.seconds else None,
            "ratio_bare_over_validate": round(bare.seconds / validate.seconds, 3)
            if validate.seconds
            else None,
            "validate_peak_rss_mib": round(validate.peak_rss_kib / 1024, 1),
            "validate_exit": validate.exit_code,
        }
        report.append(row)
        print(json.dumps(row))
        if not args.keep:
            path.unlink()
    dsh = out_dir / "results.json"
    if dsh.exists():
        print("dsh figures of the last make bench:", dsh)
    (out_dir / "codex-results.json").write_text(json.dumps(report, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    raise SystemExit(main())
