"""``store.line_fetch.LineFetcher``: any line of a scanned log by its plaintext offset, raw, zstd
and a stream's copy, in any order, memory bounded by its cache (issue 11 item 1)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import zstandard

from sesstool.core.errors import InputError
from sesstool.core.physical import Encoding
from sesstool.store.line_fetch import ENTRY_BYTES, LineFetcher
from sesstool.store.source import ReadLimits

LINES = [b'{"n":%d,"pad":"%s"}' % (i, b"x" * (i % 97)) for i in range(500)]
PLAIN = b"".join(line + b"\n" for line in LINES)
OFFSETS = [sum(len(x) + 1 for x in LINES[:i]) for i in range(len(LINES))]


def _zstd(lines_per_frame: int) -> bytes:
    c = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(
        c.compress(b"".join(x + b"\n" for x in LINES[i : i + lines_per_frame]))
        for i in range(0, len(LINES), lines_per_frame)
    )


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
@pytest.mark.parametrize("given", ["path", "stream copy"])
def test_every_line_in_any_order(tmp_path: Path, encoding: Encoding, given: str) -> None:
    data = PLAIN if encoding == "raw" else _zstd(16)
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    order = list(range(len(LINES)))
    random.Random(7).shuffle(order)
    with open(path, "rb") as copy:
        fetcher = LineFetcher(path if given == "path" else copy, encoding, ReadLimits(), len(PLAIN), 1024)
        for i in order:
            assert fetcher.get(OFFSETS[i]) == LINES[i]
        fetcher.close()
        assert not copy.closed  # the caller's copy is the caller's to close


def test_zstd_reads_forward_without_starting_again(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl.zstd"
    path.write_bytes(_zstd(1))
    fetcher = LineFetcher(path, "zstd", ReadLimits(), len(PLAIN), 0)
    for i in range(0, len(LINES), 3):
        assert fetcher.get(OFFSETS[i]) == LINES[i]
    assert fetcher.restarts == 0
    assert fetcher.get(OFFSETS[1]) == LINES[1]  # behind the cursor, not cached (no cache)
    assert fetcher.restarts == 1
    fetcher.close()


def test_the_cache_is_bounded_in_bytes_but_keeps_the_latest_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl.zstd"
    path.write_bytes(_zstd(8))
    fetcher = LineFetcher(path, "zstd", ReadLimits(), len(PLAIN), 200)
    for i in range(len(LINES)):
        fetcher.get(OFFSETS[i])
        assert fetcher._cached <= max(200, ENTRY_BYTES + len(LINES[i]))  # the bound, or the latest line
    assert fetcher.get(OFFSETS[-1]) == LINES[-1] and fetcher.restarts == 0  # cached
    fetcher.get(OFFSETS[0])
    assert fetcher.restarts == 1  # long gone from the cache


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_a_changed_file_is_an_input_error(tmp_path: Path, encoding: Encoding) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(PLAIN if encoding == "raw" else _zstd(16))
    fetcher = LineFetcher(path, encoding, ReadLimits(), len(PLAIN), 0)
    with pytest.raises(InputError, match="changed"):
        fetcher.get(OFFSETS[10] + 1)  # no line starts there
    fetcher.close()
    path.write_bytes(PLAIN[:100] if encoding == "raw" else _zstd(16)[:50])
    fetcher = LineFetcher(path, encoding, ReadLimits(), len(PLAIN), 0)
    with pytest.raises(InputError):
        fetcher.get(OFFSETS[-1])
    fetcher.close()
