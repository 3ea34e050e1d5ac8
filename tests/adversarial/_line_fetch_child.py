"""``python -m tests.adversarial._line_fetch_child LOG N``: a ``store.line_fetch.LineFetcher`` over
LOG, a raw log of N lines ``{}`` (each three bytes with its newline), asked for every line in
file order, its cache at ``line_fetch.CACHE_BYTES`` (what derive uses). The longest line allowed
is 64 bytes, so that a fetch reads a few bytes, not ``_PIECE``: only the cache is measured (a
zstd log's read-ahead fills up to a fixed size of its own). The peak RSS is the caller's to read."""

from __future__ import annotations

import sys
from pathlib import Path

from sesstool.store.line_fetch import LineFetcher
from sesstool.store.source import ReadLimits


def main() -> None:
    log, n = Path(sys.argv[1]), int(sys.argv[2])
    fetcher = LineFetcher(log, "raw", ReadLimits(max_line=64), 3 * n)
    for i in range(n):
        if fetcher.get(3 * i) != b"{}":
            raise SystemExit(f"line {i} is not what was written")
    fetcher.close()


if __name__ == "__main__":
    main()
