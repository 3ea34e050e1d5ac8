"""derive's read-back by address (issue 14): lines come in file order and leave in surface
order; a line a replacement moved ahead waits in the spool, in memory or on disk."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.errors import InputError
from sesstool.engine import derive_read
from sesstool.engine.derive_read import in_surface_order, numbered_lines
from sesstool.store.plaintext import plaintext_lines
from sesstool.store.source import ReadLimits
from sesstool.store.spool import LineSpool


def _file(n: int) -> list[bytes]:
    return [b"line %d " % i + b"x" * (i % 7) + b"\n" for i in range(n)]


def _offsets(lines: list[bytes]) -> list[int]:
    out, at = [], 0
    for line in lines:
        out.append(at)
        at += len(line)
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60), st.data())
def test_any_surface_order_comes_out_as_asked(n: int, data: st.DataObject) -> None:
    lines = _file(n)
    offsets = _offsets(lines)
    chosen = data.draw(st.lists(st.sampled_from(range(n)), unique=True))
    order = [offsets[i] for i in chosen]
    got = list(in_surface_order(numbered_lines(lines), order, "x"))
    assert got == [lines[i][:-1] for i in chosen]


def test_the_spool_moves_to_disk_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[LineSpool] = []

    def small() -> LineSpool:
        spool = LineSpool(memory=64)
        made.append(spool)
        return spool

    monkeypatch.setattr(derive_read, "LineSpool", small)
    lines = _file(500)
    offsets = _offsets(lines)
    order = [offsets[-1], *offsets[:-1]]  # the last line replaced the head: everything waits
    got = list(in_surface_order(numbered_lines(lines), order, "x"))
    assert got == [lines[-1][:-1], *(line[:-1] for line in lines[:-1])]
    assert made and getattr(made[0]._file, "_rolled")  # noqa: B009 - it did spill to a temporary file


def test_a_line_that_is_gone_is_an_input_error() -> None:
    lines = _file(10)
    offsets = _offsets(lines)
    shorter = lines[:5]
    with pytest.raises(InputError, match="changed while derive read it back"):
        list(in_surface_order(numbered_lines(shorter), [offsets[1], offsets[8]], "x"))
    moved = [b"y" + line for line in lines]  # every offset moved by one byte per line
    with pytest.raises(InputError):
        list(in_surface_order(numbered_lines(moved), [offsets[3]], "x"))


def test_spool_take_is_once() -> None:
    spool = LineSpool(memory=8)
    rng = random.Random(3)
    items = {k: bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for k in range(50)}
    for k, v in items.items():
        spool.put(k, v)
    assert len(spool) == 50
    for k in rng.sample(list(items), 50):
        assert spool.take(k) == items[k]
        assert spool.take(k) is None
    spool.close()


def test_plaintext_lines_gives_the_whole_lines_of_a_range_raw_and_zstd(tmp_path: Path) -> None:
    lines = _file(9)
    offsets = _offsets(lines)
    raw = tmp_path / "log.jsonl"
    raw.write_bytes(b"".join(lines))
    packed = tmp_path / "log.jsonl.zstd"
    packed.write_bytes(b"".join(zstandard.ZstdCompressor().compress(line) for line in lines))
    start, end = offsets[2], offsets[7]  # lines 2..6; the torn-tail side: nothing at or past end
    want = [(offsets[i], lines[i][:-1]) for i in range(2, 7)]
    assert list(plaintext_lines(raw, "raw", ReadLimits(), start, end)) == want
    assert list(plaintext_lines(packed, "zstd", ReadLimits(), start, end)) == want


def test_plaintext_lines_of_a_log_that_no_longer_decodes_is_an_input_error(tmp_path: Path) -> None:
    lines = _file(9)
    packed = tmp_path / "log.jsonl.zstd"
    frames = [zstandard.ZstdCompressor(write_checksum=True).compress(line) for line in lines]
    broken = frames[4][:-4] + bytes(b ^ 0xFF for b in frames[4][-4:])  # frame 4's checksum is wrong
    packed.write_bytes(b"".join(frames[:4]) + broken + b"".join(frames[5:]))
    with pytest.raises(InputError, match="the log no longer reads cleanly"):
        list(plaintext_lines(packed, "zstd", ReadLimits(), 0, sum(map(len, lines))))
