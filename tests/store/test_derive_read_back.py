"""derive's read-back by address (issue 14): lines come in file order and leave in surface
order; a line a replacement moved ahead waits in the spool, in memory or on disk."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from itertools import pairwise
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


class _Sorts:
    """Forces ``derive_read.SORT_AT`` and counts the sorts that went to a spill file."""

    def __init__(self) -> None:
        self.spilled = 0
        self.saved = derive_read.SORT_AT

    def run(self, threshold: int, lines: list[bytes], order: list[int]) -> list[bytes] | str:
        from sesstool.store import spill_sort

        original = spill_sort.SpilledOrder.sorted_pairs

        def counted(this: spill_sort.SpilledOrder, values: Iterable[int]) -> Iterator[tuple[int, int]]:
            self.spilled += 1
            return original(this, values)

        derive_read.SORT_AT = threshold
        spill_sort.SpilledOrder.sorted_pairs = counted  # type: ignore[method-assign,assignment]
        try:
            return list(in_surface_order(numbered_lines(lines), order, "x"))
        except InputError as err:
            return str(err)
        finally:
            derive_read.SORT_AT = self.saved
            spill_sort.SpilledOrder.sorted_pairs = original  # type: ignore[method-assign]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.data())
def test_the_spilled_sort_reads_back_what_the_sort_in_memory_reads(n: int, data: st.DataObject) -> None:
    """Past ``SORT_AT`` (forced to 0, 1, 5) the sort and the waiting lines go to a spill file
    (store/spill_sort.py): the same lines in the same order, the same refusal when a wanted
    line is gone (an offset that is not a line's: the file changed)."""
    lines = _file(n)
    offsets = _offsets(lines)
    chosen = data.draw(st.lists(st.sampled_from(range(n)), unique=True, min_size=1))
    order = [offsets[i] for i in chosen]
    if data.draw(st.booleans()):  # a line the log no longer has
        order.insert(data.draw(st.integers(0, len(order))), offsets[-1] + len(lines[-1]) + 1)
    sorts = _Sorts()
    held = sorts.run(1 << 62, lines, order)
    assert sorts.spilled == 0
    for threshold in (0, 1, 5):
        assert sorts.run(threshold, lines, order) == held, threshold
    out_of_order = not all(a < b for a, b in pairwise(order))
    assert sorts.spilled == sum(out_of_order and len(order) > t for t in (0, 1, 5))


def test_a_long_read_back_out_of_order_goes_through_the_spill_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line but the last waits for it (the last line replaced the head), past the
    threshold: the waiting lines are rows of the spill file, none in the LineSpool."""
    monkeypatch.setattr(derive_read, "SORT_AT", 10)
    monkeypatch.setattr(derive_read, "LineSpool", None)  # the in-memory path is not taken
    lines = _file(2_000)
    offsets = _offsets(lines)
    order = [offsets[-1], *offsets[:-1]]
    got = list(in_surface_order(numbered_lines(lines), order, "x"))
    assert got == [lines[-1][:-1], *(line[:-1] for line in lines[:-1])]


def test_escaped_offsets_are_read_as_offsets_without_a_copy() -> None:
    """``-1 - offset`` (a message orjson cannot encode) reads as ``offset``; slices too."""
    kept = [5, -1 - 7, 0, -1]
    view = derive_read.Unescaped(kept)
    assert list(view) == [5, 7, 0, 0] and len(view) == 4
    assert [view[i] for i in range(4)] == [5, 7, 0, 0] and view[1:3] == [7, 0] and view[-3] == 7
