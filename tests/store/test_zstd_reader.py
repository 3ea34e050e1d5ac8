"""ZstdReader: frame walking, torn tails at every byte, and every fatal rule (spec §6.3, §7.4,
§9.2; RELIABILITY test plan 15–20)."""

from __future__ import annotations

import io
import os
import random
import time
import tracemalloc
from typing import Any, BinaryIO, cast

import pytest
import zstandard

from sesstool.core.physical import (
    FRAME_0_MORE_LINES,
    FRAME_0_OPEN_LINE,
    Batch,
    FramingFact,
    PartialLine,
    PhysicalIssue,
    ReadSummary,
    TornFrame,
)
from sesstool.core.rules import RULES
from sesstool.store.zstd_reader import ZSTD_MAGIC, ZstdReader, sniff_encoding

BAD_MAGIC = "zstd-bad-magic"
SKIPPABLE = "zstd-skippable-frame"
RESERVED_BIT = "zstd-reserved-bit"
RESERVED_BLOCK = "zstd-reserved-block"
WINDOW = "zstd-window-too-large"
CHECKSUM = "zstd-checksum"
DECODE = "zstd-decode-error"
BUDGET = "zstd-budget-exceeded"
BOUNDARY = "zstd-frame-boundary"
NO_CHECKSUM = "zstd-no-checksum"
LINE_TOO_LONG = "line-too-long"

HEADER = b'{"type":"session/header","v":4}\n'
BODY1 = b"".join(b'{"seq":%d,"type":"turn/start","pad":"aaaaaaaaaaaa"}\n' % i for i in range(1, 6))
BODY2 = b'{"seq":6,"x":"\x8f\x01\xfe\xff"}\n{"seq":7}\n'  # small enough for a raw block


Item = Batch | PhysicalIssue
Line = tuple[bytes, int, int, int | None]  # (line, plaintext offset, line number, frame)


def compress(payload: bytes, **params: Any) -> bytes:
    """One frame, as the writer makes it (checksum on, default level)."""
    params.setdefault("write_checksum", True)
    return zstandard.ZstdCompressor(**params).compress(payload)


def read(data: bytes, **options: Any) -> tuple[list[Item], ReadSummary]:
    reader = ZstdReader(io.BytesIO(data), **options)
    items = list(reader.batches())
    return items, reader.summary


def lines_of(items: list[Item]) -> list[Line]:
    out: list[Line] = []
    for item in items:
        if isinstance(item, PhysicalIssue):
            continue
        lines, offset, number, frame = item
        for data in lines:
            out.append((data, offset, number, frame))
            offset += len(data) + 1
            number += 1
    return out


def issues_of(items: list[Item]) -> list[PhysicalIssue]:
    return [item for item in items if isinstance(item, PhysicalIssue)]


def expected_lines(plaintext: bytes, frame_of: list[int]) -> list[Line]:
    """Complete lines of ``plaintext``; ``frame_of[i]`` is the frame that byte i came from."""
    out: list[Line] = []
    offset = 0
    for number, data in enumerate(plaintext.split(b"\n")[:-1], start=1):
        out.append((data, offset, number, frame_of[offset + len(data)]))
        offset += len(data) + 1
    return out


def only_fatal_last(items: list[Item], rule: str, frame: int, frame_offset: int) -> PhysicalIssue:
    """The fatal issue is the last item, addressed to the frame, and nothing follows it."""
    assert items, "expected a fatal issue"
    last = items[-1]
    assert isinstance(last, PhysicalIssue), items
    assert (last.rule, last.fatal, last.frame) == (rule, True, frame)
    assert last.frame_offset == frame_offset
    assert [i for i in issues_of(items) if i.fatal] == [last]
    return last


def test_rule_ids_are_registered() -> None:
    for rule in (BAD_MAGIC, SKIPPABLE, RESERVED_BIT, RESERVED_BLOCK, WINDOW, CHECKSUM, DECODE,
                 BUDGET, BOUNDARY, NO_CHECKSUM, LINE_TOO_LONG):  # fmt: skip
        assert rule in RULES


def test_sniff_encoding() -> None:
    assert sniff_encoding(compress(HEADER)) == "zstd"
    assert sniff_encoding(ZSTD_MAGIC) == "zstd"
    assert sniff_encoding(ZSTD_MAGIC[:3]) == "raw"
    assert sniff_encoding(HEADER) == "raw"
    assert sniff_encoding(b"") == "raw"


def test_multi_frame_happy_path_addresses() -> None:
    f0, f1, f2 = compress(b'{"h":1}\n'), compress(b"a\nbb\n"), compress(b"ccc\n")
    items, summary = read(f0 + f1 + f2)
    assert items == [
        ([b'{"h":1}'], 0, 1, 0),
        ([b"a", b"bb"], 8, 2, 1),
        ([b"ccc"], 13, 4, 2),
    ]
    total = len(f0 + f1 + f2)
    assert summary == ReadSummary(
        encoding="zstd",
        file_bytes=total,
        plaintext_bytes=17,
        lines=4,
        frames=3,
        partial_line=None,
        torn_frame=None,
        stopped_early=False,
        last_good_frame_end=total,
    )


def test_multi_block_frame_and_short_reads() -> None:
    """A frame of many 128 KiB blocks, read through a stream that returns 7 bytes at a time."""
    rng = random.Random(7)
    body = b"".join(b'{"seq":%d,"r":"%x"}\n' % (i, rng.getrandbits(64)) for i in range(40_000))
    assert len(body) > 4 * (128 << 10)
    data = compress(HEADER) + compress(body) + compress(b'{"seq":40001}\n')

    class Trickle(io.RawIOBase):
        def __init__(self) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            chunk = self._data.read(min(len(buffer), 7))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    reader = ZstdReader(cast(BinaryIO, Trickle()), chunk_size=4096)
    items = list(reader.batches())
    plaintext = HEADER + body + b'{"seq":40001}\n'
    frame_of = [0] * len(HEADER) + [1] * len(body) + [2] * 14
    assert lines_of(items) == expected_lines(plaintext, frame_of)
    assert issues_of(items) == []
    assert reader.summary.frames == 3
    assert reader.summary.file_bytes == len(data)


def test_record_straddling_frames_mid_file_is_one_line() -> None:
    items, summary = read(compress(HEADER) + compress(b"ab") + compress(b"c\n"))
    assert lines_of(items)[1:] == [(b"abc", len(HEADER), 2, 2)]
    assert issues_of(items) == []
    assert summary.stopped_early is False


def test_empty_file() -> None:
    items, summary = read(b"")
    assert items == []
    assert summary == ReadSummary("zstd", 0, 0, 0, 0, None, None, False, None)


def test_summary_and_batches_are_one_pass() -> None:
    reader = ZstdReader(io.BytesIO(compress(HEADER)))
    with pytest.raises(RuntimeError):
        _ = reader.summary
    batches = reader.batches()
    with pytest.raises(RuntimeError):
        reader.batches()
    next(batches)
    with pytest.raises(RuntimeError):
        _ = reader.summary
    list(batches)
    assert reader.summary.lines == 1


# --- torn tail (spec §7.4) ---------------------------------------------------------------


def decodable_prefix(frame_prefix: bytes) -> bytes:
    """Oracle: what a one-shot prefix decoder makes of the present bytes of a frame."""
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(frame_prefix)
    except zstandard.ZstdError:
        return b""


def test_cut_at_every_byte() -> None:
    frames = [compress(HEADER), compress(BODY1), compress(BODY2)]
    plains = [HEADER, BODY1, BODY2]
    data = b"".join(frames)
    starts = [sum(map(len, frames[:i])) for i in range(4)]  # frame starts, then the file end
    saw_partial_raw_block = False
    for cut in range(len(data) + 1):
        items, summary = read(data[:cut])
        assert issues_of(items) == [], cut
        complete = sum(1 for end in starts[1:] if end <= cut)
        plaintext = b"".join(plains[:complete])
        frame_of = [i for i in range(complete) for _ in plains[i]]
        torn: TornFrame | None = None
        if complete < 3 and cut > starts[complete]:
            start = starts[complete]
            recovered = decodable_prefix(data[start:cut])
            assert plains[complete].startswith(recovered)
            torn = TornFrame(
                complete, start, cut - start, len(plaintext), len(recovered), lines=recovered.count(b"\n")
            )
            plaintext += recovered
            frame_of += [complete] * len(recovered)
            saw_partial_raw_block |= 0 < len(recovered) < len(plains[complete]) and complete == 2
        assert lines_of(items) == expected_lines(plaintext, frame_of), cut
        tail = len(plaintext) - plaintext.rfind(b"\n") - 1
        partial = None
        if tail:
            at = len(plaintext) - tail  # the torn record's first byte, and the frame it came from
            partial = PartialLine(at, tail, plaintext.count(b"\n") + 1, frame_of[at], starts[frame_of[at]])
        assert summary == ReadSummary(
            encoding="zstd",
            file_bytes=cut,
            plaintext_bytes=len(plaintext),
            lines=plaintext.count(b"\n"),
            frames=complete,
            partial_line=partial,
            torn_frame=torn,
            stopped_early=False,
            last_good_frame_end=starts[complete] if complete else None,
        ), cut
        if cut == len(data) - 4:  # only the checksum of the last frame is missing
            assert plaintext == HEADER + BODY1 + BODY2
    assert saw_partial_raw_block  # the oracle did exercise a mid-block tear


def test_torn_frame_that_fails_to_decode_is_just_dropped() -> None:
    """A tear whose present bytes fail to decode is still a tear, not an issue (§7.4)."""
    good = compress(HEADER)
    body = compress(BODY1 * 50)
    assert body[4] == 0x64  # single segment, 2-byte content size, checksum: the block is at 7
    assert body[7] & 0x07 == 0x05  # one compressed block, flagged last
    undecodable = 0
    for at in range(10, len(body) - 4):
        broken = bytearray(body)
        broken[at] ^= 0xFF
        torn = bytes(broken[:-1])
        try:
            zstandard.ZstdDecompressor().decompressobj().decompress(torn)
        except zstandard.ZstdError:
            undecodable += 1
        else:
            continue
        items, summary = read(good + torn)
        assert issues_of(items) == [], at
        assert lines_of(items) == [(HEADER[:-1], 0, 1, 0)], at
        assert summary.torn_frame == TornFrame(1, len(good), len(torn), len(HEADER), 0), at
    assert undecodable > 10


def test_trailing_magic_prefix_is_a_tear_but_other_bytes_are_not() -> None:
    good = compress(HEADER)
    items, summary = read(good + ZSTD_MAGIC[:2])
    assert issues_of(items) == []
    assert summary.torn_frame == TornFrame(1, len(good), 2, len(HEADER), 0)
    items, summary = read(good + b"\x00\x00")
    only_fatal_last(items, BAD_MAGIC, 1, len(good))
    assert summary.stopped_early and summary.torn_frame is None


# --- fatal defects (spec §6.3) -------------------------------------------------------------


def corrupt_middle_frame(flip_at: int) -> tuple[bytes, int]:
    """header + body + body + body with one bit flipped at ``flip_at`` inside frame 1."""
    frames = [compress(HEADER), compress(BODY1), compress(BODY1), compress(BODY2)]
    data = bytearray(b"".join(frames))
    data[len(frames[0]) + flip_at] ^= 0x10
    return bytes(data), len(frames[0])


def assert_nothing_after_frame_one(items: list[Item], summary: ReadSummary, start: int) -> None:
    assert all(item[3] in (0, 1) for item in items if not isinstance(item, PhysicalIssue))
    assert summary.stopped_early
    assert summary.frames == 1
    assert summary.last_good_frame_end == start
    assert summary.torn_frame is None


def test_checksum_bit_flip_in_earlier_frame() -> None:
    frame1 = compress(BODY1)
    data, start = corrupt_middle_frame(len(frame1) - 2)
    items, summary = read(data)
    issue = only_fatal_last(items, CHECKSUM, 1, start)
    assert (issue.offset, issue.line) == (len(HEADER), 2)
    assert "checksum" in issue.message
    assert_nothing_after_frame_one(items, summary, start)


def test_payload_bit_flip_in_earlier_frame() -> None:
    frame1 = compress(BODY1)
    block_start = 4 + 2 + 3  # magic, descriptor + single-segment size, block header
    assert frame1[4] & 0x20 and frame1[4] >> 6 == 0  # single segment, 1-byte content size
    for at in range(block_start, len(frame1) - 4):
        data, start = corrupt_middle_frame(at)
        items, summary = read(data)
        issue = items[-1]
        assert isinstance(issue, PhysicalIssue), at
        assert issue.rule in (CHECKSUM, DECODE), at
        only_fatal_last(items, issue.rule, 1, start)
        assert_nothing_after_frame_one(items, summary, start)


def test_skippable_frame() -> None:
    good = compress(HEADER)
    skippable = (0x184D2A53).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    items, summary = read(good + skippable + compress(BODY1))
    issue = only_fatal_last(items, SKIPPABLE, 1, len(good))
    assert "0x184d2a53" in issue.message
    assert lines_of(items) == [(HEADER[:-1], 0, 1, 0)]
    assert summary.frames == 1 and summary.last_good_frame_end == len(good)


def test_garbage_between_frames() -> None:
    good = compress(HEADER) + compress(BODY1)
    items, summary = read(good + b"garbage!" + compress(BODY2))
    issue = only_fatal_last(items, BAD_MAGIC, 2, len(good))
    assert (issue.offset, issue.line) == (len(HEADER + BODY1), 7)
    assert [line[3] for line in lines_of(items)] == [0, 1, 1, 1, 1, 1]
    assert summary.frames == 2


def test_garbage_instead_of_first_frame() -> None:
    items, summary = read(HEADER)
    only_fatal_last(items, BAD_MAGIC, 0, 0)
    assert lines_of(items) == []
    assert summary.stopped_early and summary.last_good_frame_end is None


def handmade_frame(descriptor: int, block_header: int, body: bytes) -> bytes:
    """magic, descriptor, 1 KiB window, one block, a (meaningless) checksum."""
    block = block_header.to_bytes(3, "little") + body
    return ZSTD_MAGIC + bytes([descriptor, 0x00]) + block + b"\0" * 4


def test_reserved_block_type() -> None:
    good = compress(HEADER)
    reserved = handmade_frame(0x04, (1 << 3) | (3 << 1) | 1, b"x")
    items, _ = read(good + reserved + compress(BODY1))
    issue = only_fatal_last(items, RESERVED_BLOCK, 1, len(good))
    assert f"offset {len(good) + 6}" in issue.message


def test_reserved_bit() -> None:
    good = compress(HEADER)
    items, _ = read(good + handmade_frame(0x0C, (4 << 3) | 1, b"ab\n\n"))
    only_fatal_last(items, RESERVED_BIT, 1, len(good))


def test_oversized_block_refused_before_reading_it() -> None:
    good = compress(HEADER)
    items, _ = read(good + handmade_frame(0x04, ((1 << 21) - 1) << 3 | 1, b""))
    only_fatal_last(items, DECODE, 1, len(good))


def test_frame_that_does_not_end_after_its_last_block() -> None:
    """A raw block flagged last whose declared content size promises more bytes."""
    good = compress(HEADER)
    # single segment, 1-byte content size 9, but the last block holds only 4 bytes
    bad = ZSTD_MAGIC + bytes([0x24, 9]) + ((4 << 3) | 1).to_bytes(3, "little") + b"ab\n\n"
    bad += b"\0" * 4
    items, _ = read(good + bad)
    only_fatal_last(items, DECODE, 1, len(good))


def test_zstd_bomb_stops_at_budget_with_bounded_memory() -> None:
    size = 300 << 20
    compressor = zstandard.ZstdCompressor(write_checksum=True, level=1).compressobj(size=size)
    zeros = bytes(1 << 20)
    bomb = b"".join(compressor.compress(zeros) for _ in range(300)) + compressor.flush()
    assert len(bomb) < 16 << 10
    good = compress(HEADER)
    budget = 16 << 20
    # CPU time of this process (every thread of it), not the wall clock: a neighbour (another
    # pytest worker, docs/ci.md) slows the clock, not the work this read does
    began = time.process_time()
    tracemalloc.start()
    try:
        items, summary = read(good + bomb, max_decompressed=budget, max_line=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.process_time() - began < 3
    assert peak < 4 << 20
    issue = only_fatal_last(items, BUDGET, 1, len(good))
    assert issue.offset is not None and issue.offset <= budget
    assert [i.rule for i in issues_of(items)] == [LINE_TOO_LONG, BUDGET]
    assert len(HEADER) < summary.plaintext_bytes <= budget
    assert summary.frames == 1


def test_budget_counts_across_frames_and_exact_fit_passes() -> None:
    data = compress(HEADER) + compress(BODY1) + compress(BODY2)
    total = len(HEADER + BODY1 + BODY2)
    _, summary = read(data, max_decompressed=total)
    assert not summary.stopped_early
    items, summary = read(data, max_decompressed=total - 1)
    only_fatal_last(items, BUDGET, 2, len(data) - len(compress(BODY2)))


def window_frame(window_log: int) -> bytes:
    params = zstandard.ZstdCompressionParameters(window_log=window_log, write_checksum=True)
    compressor = zstandard.ZstdCompressor(compression_params=params).compressobj()
    return compressor.compress(BODY1) + compressor.flush()


def test_window_too_large_is_refused_before_decoding() -> None:
    good = compress(HEADER)
    big = window_frame(28)
    assert big[4] & 0x20 == 0 and big[5] >> 3 == 18  # descriptor says 2**28
    items, summary = read(good + big, max_window=8 << 20)
    issue = only_fatal_last(items, WINDOW, 1, len(good))
    assert str(1 << 28) in issue.message
    assert summary.plaintext_bytes == len(HEADER)
    only_fatal_last(read(good + big)[0], WINDOW, 1, len(good))  # default limit is 32 MiB
    items, summary = read(good + window_frame(23), max_window=8 << 20)  # exactly at the limit
    assert issues_of(items) == [] and summary.frames == 2


def framing_fact(items: list[Item]) -> FramingFact:
    """The one framing fact: no rule id (the reader judges no layout: a dsh scan makes it
    zstd-header-frame or zstd-single-frame, §9.2; other dialects set no rule on it), non-fatal,
    addressed to frame 0; the reader reports no zstd-* issue of its own about it."""
    found = [i for i in issues_of(items) if isinstance(i, FramingFact)]
    assert len(found) == 1, items
    fact = found[0]
    assert (fact.fatal, fact.offset, fact.line, fact.frame, fact.frame_offset) == (False, 0, 1, 0, 0)
    assert fact.rule not in RULES
    assert not [i for i in issues_of(items) if i.fatal]
    assert [i for i in issues_of(items) if i.rule.startswith("zstd-")] == []
    return fact


def test_header_frame_with_two_lines() -> None:
    items, summary = read(compress(HEADER + BODY2) + compress(BODY1))
    fact = framing_fact(items)
    assert (fact.rule, fact.message) == (FRAME_0_MORE_LINES, "frame 0 holds more than one line")
    # right after the lines it speaks of, before frame 1's: the reader holds nothing back
    position = items.index(fact)
    assert [type(i) for i in items[:position]] == [tuple] and items[position - 1][3] == 0  # type: ignore[index]
    assert all(item[3] == 1 for item in items[position + 1 :])  # type: ignore[index]
    assert [line for line, *_ in lines_of(items)] == (HEADER + BODY2 + BODY1).split(b"\n")[:-1]
    assert summary.frames == 2 and not summary.stopped_early and not summary.one_frame


@pytest.mark.parametrize(
    ("payload", "fact_id"),
    [(HEADER[:-1], FRAME_0_OPEN_LINE), (b"", FRAME_0_OPEN_LINE), (HEADER + b"x", FRAME_0_MORE_LINES)],
)
def test_header_frame_not_one_terminated_line(payload: bytes, fact_id: str) -> None:
    items, summary = read(compress(payload) + compress(BODY1))
    assert framing_fact(items).rule == fact_id
    assert summary.frames == 2 and not summary.stopped_early


def test_one_frame_holding_everything_is_a_fact_not_a_finding() -> None:
    """A whole log compressed as one frame (`zstd FILE`): the reader says frame 0 holds more than
    one line and that the log is one frame (the summary); the warning is the dsh dialect's."""
    items, summary = read(compress(HEADER + BODY1))
    assert framing_fact(items).rule == FRAME_0_MORE_LINES
    assert [line for line, *_ in lines_of(items)] == (HEADER + BODY1).split(b"\n")[:-1]
    assert summary.one_frame and summary.frames == 1 and summary.partial_line is None


def test_one_frame_with_a_torn_last_record_is_a_partial_line() -> None:
    """The one frame ends where the file ends: its unterminated last record is a partial line,
    as in the raw log it was made from, not zstd-frame-boundary (only frames written one per
    append promise to end on a record)."""
    plain = HEADER + BODY1 + b'{"seq":6,"ty'
    items, summary = read(compress(plain))
    framing_fact(items)
    assert summary.one_frame and not summary.stopped_early
    assert summary.partial_line == PartialLine(len(HEADER + BODY1), 12, 7, 0, 0)  # in frame 0, at file byte 0


def test_one_line_in_one_frame_says_nothing() -> None:
    items, summary = read(compress(HEADER))
    assert issues_of(items) == [] and summary.one_frame


def test_torn_header_frame_is_a_tear() -> None:
    frame = compress(HEADER)
    items, summary = read(frame[:-6])
    assert items == []
    assert summary.torn_frame is not None and summary.torn_frame.index == 0
    assert not summary.stopped_early


def test_complete_frames_not_ending_in_newline() -> None:
    f0, f1 = compress(HEADER), compress(b"a\nbb")
    items, summary = read(f0 + f1)
    issue = only_fatal_last(items, BOUNDARY, 1, len(f0))
    assert (issue.offset, issue.line) == (len(HEADER) + 2, 3)
    assert lines_of(items)[1:] == [(b"a", len(HEADER), 2, 1)]
    assert summary.partial_line == PartialLine(len(HEADER) + 2, 2, 3, 1, len(f0))  # "bb": frame 1
    assert summary.frames == 2 and summary.stopped_early


def test_complete_frames_not_ending_in_newline_before_a_torn_frame() -> None:
    f0, f1, f2 = compress(HEADER), compress(b"a\nbb"), compress(BODY1)
    items, summary = read(f0 + f1 + f2[:-1])
    only_fatal_last(items, BOUNDARY, 1, len(f0))
    assert summary.torn_frame is not None and summary.torn_frame.index == 2


def test_frame_without_checksum_is_reported_but_read() -> None:
    f0 = compress(HEADER, write_checksum=False)
    f1 = compress(BODY2)
    assert not f0[4] & 0x04
    items, summary = read(f0 + f1)
    assert issues_of(items) == [
        PhysicalIssue(NO_CHECKSUM, issues_of(items)[0].message, 0, 1, 0, 0, fatal=False)
    ]
    assert [line[0] for line in lines_of(items)] == [HEADER[:-1], *BODY2.split(b"\n")[:-1]]
    assert summary.frames == 2 and not summary.stopped_early


def test_line_too_long_passes_through() -> None:
    f0 = compress(HEADER)
    long_line = b"x" * 5000
    items, summary = read(f0 + compress(b"ok\n" + long_line + b"\nend\n"), max_line=4096)
    issues = issues_of(items)
    assert [(i.rule, i.offset, i.line, i.frame, i.frame_offset, i.fatal) for i in issues] == [
        (LINE_TOO_LONG, len(HEADER) + 3, 3, 1, len(f0), False)
    ]
    assert [line[:3] for line in lines_of(items)][1:] == [
        (b"ok", len(HEADER), 2),
        (b"end", len(HEADER) + 3 + 5001, 4),
    ]
    assert not summary.stopped_early


def test_random_garbage_never_raises() -> None:
    """Fuzz-lite: random bytes after a magic, and random bit flips, only ever give issues."""
    rng = random.Random(1)
    data = compress(HEADER) + compress(BODY1) + compress(BODY2)
    for _ in range(300):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        read(bytes(mutated))
        read(ZSTD_MAGIC + os.urandom(rng.randint(0, 64)))


def test_limits_below_what_zstd_accepts_are_refused_up_front() -> None:
    with pytest.raises(ValueError):
        ZstdReader(io.BytesIO(b""), max_window=1000)
    with pytest.raises(ValueError):
        ZstdReader(io.BytesIO(b""), chunk_size=0)
