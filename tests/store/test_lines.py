"""The line splitter shared by both readers: exact offsets and line numbers whatever the chunk
boundaries, and a bounded, exactly reported over-long line (DESIGN §7, RELIABILITY item 20)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.physical import Batch, PartialLine, PhysicalIssue
from sesstool.store.lines import DEFAULT_MAX_LINE, LineSplitter

Item = Batch | PhysicalIssue | PartialLine


def split(chunks: list[bytes], max_line: int = DEFAULT_MAX_LINE, frame: int | None = None) -> list[Item]:
    splitter = LineSplitter(max_line)
    out: list[Item] = []
    for i, chunk in enumerate(chunks):
        out.extend(splitter.feed(chunk, frame, None if frame is None else 100 + i))
    partial = splitter.finish()
    if partial is not None:
        out.append(partial)
    return out


def too_long(offset: int, line: int, length: int, limit: int, at_least: bool = False) -> PhysicalIssue:
    more = "more than " if at_least else ""
    return PhysicalIssue(
        "line-too-long", f"line is {more}{length} bytes, over the limit of {limit}", offset, line
    )


def lines_of(items: list[Item]) -> list[tuple[bytes, int, int]]:
    """Every delivered line with its own offset and line number."""
    out = []
    for item in items:
        if isinstance(item, tuple):
            data, offset, line, _ = item
            for d in data:
                out.append((d, offset, line))
                offset += len(d) + 1
                line += 1
    return out


def test_the_default_limit_is_64_mib() -> None:
    assert DEFAULT_MAX_LINE == 64 * 1024 * 1024
    assert LineSplitter().max_line == DEFAULT_MAX_LINE


def test_one_chunk() -> None:
    assert split([b"a\nbc\n"]) == [([b"a", b"bc"], 0, 1, None)]
    assert split([b"a\nbc\nde"]) == [([b"a", b"bc"], 0, 1, None), PartialLine(5, 2, 3)]
    assert split([b""]) == []
    assert split([b"\n\n"]) == [([b"", b""], 0, 1, None)]


def test_a_line_split_over_feeds_keeps_its_start() -> None:
    splitter = LineSplitter(100)
    assert list(splitter.feed(b"ab")) == []
    assert splitter.pending_bytes == 2
    assert list(splitter.feed(b"cd")) == []
    assert splitter.pending_bytes == 4
    assert splitter.take_partial() == b"abcd"
    assert list(splitter.feed(b"e\nfg\nh", 3, 40)) == [([b"abcde", b"fg"], 0, 1, 3)]
    assert (splitter.offset, splitter.line, splitter.lines, splitter.pending_bytes) == (10, 3, 2, 1)
    assert splitter.take_partial() == b"h"
    assert splitter.finish() == PartialLine(9, 1, 3, 3, 40)  # "h" came from frame 3 (file byte 40)
    assert splitter.pending_bytes == 0 and splitter.finish() is None
    assert splitter.take_partial() == b""  # finish() forgets the partial line (line salvage reads it before)


def test_a_partial_line_names_the_frame_it_starts_in() -> None:
    """A torn last line begun in one zstd frame and continued in the next is addressed to the
    first (its first byte's), whatever frames come after it; raw input names none."""
    splitter = LineSplitter(100)
    assert list(splitter.feed(b"a\nbc", 2, 30)) == [([b"a"], 0, 1, 2)]
    assert list(splitter.feed(b"de", 3, 50)) == []
    assert list(splitter.feed(b"f", 4, 70)) == []
    assert splitter.finish() == PartialLine(2, 5, 2, 2, 30)
    ended = LineSplitter(100)  # a line ended in a later frame: the next partial line is that frame's
    assert list(ended.feed(b"bc", 2, 30)) == []
    assert list(ended.feed(b"\ng", 5, 90)) == [([b"bc"], 0, 1, 5)]
    assert ended.finish() == PartialLine(3, 1, 2, 5, 90)
    raw = LineSplitter(100)
    assert list(raw.feed(b"a\nb")) == [([b"a"], 0, 1, None)]
    assert raw.finish() == PartialLine(2, 1, 2)
    assert raw.finish() is None


def test_an_empty_feed_changes_nothing() -> None:
    splitter = LineSplitter(4)
    assert list(splitter.feed(b"ab")) == []
    assert list(splitter.feed(b"")) == []
    assert list(splitter.feed(b"\n")) == [([b"ab"], 0, 1, None)]
    assert (splitter.offset, splitter.line) == (3, 2)


def test_over_long_line_split_across_feeds_then_the_next_line_is_kept_exactly() -> None:
    # issue 12: after the over-long line, `ok` must come with its own offset (9) and line (2)
    assert split([b"abcdef", b"gh\nok", b"\nxy\n"], max_line=4) == [
        too_long(0, 1, 6, 4, at_least=True),
        ([b"ok", b"xy"], 9, 2, None),
    ]


def test_over_long_line_over_three_feeds_then_lines_in_the_same_chunk() -> None:
    assert split([b"abc", b"defg", b"hij", b"k\nok\nno\nt"], max_line=4) == [
        too_long(0, 1, 7, 4, at_least=True),
        ([b"ok", b"no"], 12, 2, None),
        PartialLine(18, 1, 4),
    ]


def test_over_long_line_completed_in_one_feed_reports_its_real_length() -> None:
    assert split([b"ab", b"cdefg\nok\n"], max_line=4) == [too_long(0, 1, 7, 4), ([b"ok"], 8, 2, None)]
    assert split([b"ok\nabcdefgh\nxy\n"], max_line=4) == [
        ([b"ok"], 0, 1, None),
        too_long(3, 2, 8, 4),
        ([b"xy"], 12, 3, None),
    ]


def test_over_long_first_part_of_a_chunk_without_pending_bytes() -> None:
    splitter = LineSplitter(4)
    assert list(splitter.feed(b"ok\n")) == [([b"ok"], 0, 1, None)]
    assert list(splitter.feed(b"abcdefg\nxy\nz")) == [too_long(3, 2, 7, 4), ([b"xy"], 11, 3, None)]
    assert (splitter.line, splitter.lines) == (4, 2)


def test_a_line_of_exactly_the_limit_is_not_too_long() -> None:
    assert split([b"abcd\n"], max_line=4) == [([b"abcd"], 0, 1, None)]
    assert split([b"ab", b"cd\nx\n"], max_line=4) == [([b"abcd", b"x"], 0, 1, None)]
    assert split([b"ab", b"cd", b"\n"], max_line=4) == [([b"abcd"], 0, 1, None)]
    assert split([b"abcd"], max_line=4) == [PartialLine(0, 4, 1)]
    # one byte more is
    assert split([b"ab", b"cde", b"\n"], max_line=4) == [too_long(0, 1, 5, 4, at_least=True)]
    # beside an over-long line in the same chunk, a line of exactly the limit is still kept
    assert split([b"abcd\nabcde\nwxyz\n"], max_line=4) == [
        ([b"abcd"], 0, 1, None),
        too_long(5, 2, 5, 4),
        ([b"wxyz"], 11, 3, None),
    ]


def test_over_long_lines_among_short_ones_in_one_chunk() -> None:
    data = b"a\nbbbbbb\nc\nd\neeeeeee\n\nf"
    assert split([data], max_line=4) == [
        ([b"a"], 0, 1, None),
        too_long(2, 2, 6, 4),
        ([b"c", b"d"], 9, 3, None),
        too_long(13, 5, 7, 4),
        ([b""], 21, 6, None),
        PartialLine(22, 1, 7),
    ]
    assert split([b"bbbbbb\nc\n"], max_line=4) == [too_long(0, 1, 6, 4), ([b"c"], 7, 2, None)]
    assert split([b"c\nbbbbbb\n"], max_line=4) == [([b"c"], 0, 1, None), too_long(2, 2, 6, 4)]


def test_a_torn_over_long_tail_reports_its_full_length() -> None:
    assert split([b"ok\nabcdef", b"ghij"], max_line=4) == [
        ([b"ok"], 0, 1, None),
        too_long(3, 2, 6, 4, at_least=True),
        PartialLine(3, 10, 2),
    ]
    splitter = LineSplitter(4)
    list(splitter.feed(b"abcdefgh"))
    assert splitter.take_partial() == b""  # discarded, never buffered
    assert splitter.finish() == PartialLine(0, 8, 1)


def test_the_frame_and_its_offset_are_carried() -> None:
    assert split([b"abcdef", b"x\nok\n"], max_line=4, frame=2) == [
        PhysicalIssue("line-too-long", "line is more than 6 bytes, over the limit of 4", 0, 1, 2, 100),
        ([b"ok"], 8, 2, 2),
    ]
    assert split([b"a\nbbbbbb\n"], max_line=4, frame=7) == [
        ([b"a"], 0, 1, 7),
        PhysicalIssue("line-too-long", "line is 6 bytes, over the limit of 4", 2, 2, 7, 100),
    ]
    assert split([b"abc", b"defghi\nz\n"], max_line=4, frame=1) == [
        PhysicalIssue("line-too-long", "line is 9 bytes, over the limit of 4", 0, 1, 1, 101),
        ([b"z"], 10, 2, 1),
    ]


def _reference(data: bytes, limit: int) -> tuple[list[tuple[bytes, int, int]], list[tuple[int, int]], int]:
    """(kept lines with offset and number, (offset, line) of each over-long one, torn bytes)."""
    kept: list[tuple[bytes, int, int]] = []
    long: list[tuple[int, int]] = []
    offset = 0
    parts = data.split(b"\n")
    for number, part in enumerate(parts[:-1], start=1):
        if len(part) > limit:
            long.append((offset, number))
        else:
            kept.append((part, offset, number))
        offset += len(part) + 1
    return kept, long, len(parts[-1])


@given(
    data=st.lists(st.sampled_from([b"a", b"bb", b"\n", b"cccccc", b"dddd"]), max_size=30).map(b"".join),
    cuts=st.lists(st.integers(0, 200), max_size=8),
    limit=st.integers(1, 6),
)
def test_any_chunking_gives_the_same_lines(data: bytes, cuts: list[int], limit: int) -> None:
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in pairwise(bounds)]
    items = split(chunks, max_line=limit)
    kept, long, torn = _reference(data, limit)
    assert lines_of(items) == kept
    issues = [(i.offset, i.line) for i in items if isinstance(i, PhysicalIssue)]
    # a torn tail over the limit is reported as over-long, and then still as the torn tail
    assert issues == long + ([(len(data) - torn, len(kept) + len(long) + 1)] if torn > limit else [])
    partial = [i for i in items if isinstance(i, PartialLine)]
    assert partial == ([PartialLine(len(data) - torn, torn, len(kept) + len(long) + 1)] if torn else [])


class _AlwaysSearching(LineSplitter):
    """The splitter without its no-filler shortcut: every chunk goes through the bulk search."""

    _shortcut = False


def _split_with(cls: type[LineSplitter], chunks: list[bytes], max_line: int) -> list[Item]:
    splitter = cls(max_line)
    out: list[Item] = []
    for i, chunk in enumerate(chunks):
        out.extend(splitter.feed(chunk, 3, 100 + i))
    partial = splitter.finish()
    if partial is not None:
        out.append(partial)
    return out


_PIECES = [
    b"a",
    b"{}",
    b"\n",
    b"\n\n",
    b"\x00",
    b"\x00\n",
    b"\n" * 70,
    b"\x00\n" * 66,
    b"\x00" * 5 + b"\n",
    b"xyz",
]


@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=40),
    cuts=st.lists(st.integers(0, 600), max_size=6),
    limit=st.sampled_from([4, 64, DEFAULT_MAX_LINE]),
)
def test_the_no_filler_shortcut_changes_nothing(pieces: list[bytes], cuts: list[int], limit: int) -> None:
    """Issue 14: a chunk without a NUL byte or an empty line skips the bulk filler search. The
    items delivered (batches, issues with their addresses, the partial line) are exactly those
    of the splitter that searches every chunk, for any input and any chunking."""
    data = b"".join(pieces)
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in pairwise(bounds)]
    assert _split_with(LineSplitter, chunks, limit) == _split_with(_AlwaysSearching, chunks, limit)


def test_a_filler_run_after_clean_chunks_is_still_one_issue() -> None:
    """The shortcut takes the clean chunks; the chunk holding the run is searched."""
    head = b'{"a":1}\n' * 100
    items = split([head, head, b"\n" * 100 + b'{"b":2}\n'])
    issues = [i for i in items if isinstance(i, PhysicalIssue)]
    assert [(i.offset, i.line, i.lines, i.blank) for i in issues] == [(1600, 201, 100, True)]
    assert lines_of(items)[-1] == (b'{"b":2}', 1700, 301)


# --- runs of filler lines (issue 12: mutants of the bulk search lived on the equivalence
# property above, which compares two splitters that share the search) -----------------------


def filler(offset: int, line: int, count: int, length: int, nul: bool = False) -> PhysicalIssue:
    return PhysicalIssue(
        "nul-bytes" if nul else "invalid-json",
        f"{count} filler lines (empty or NUL bytes only) where records should be",
        offset,
        line,
        lines=count,
        length=length,
        blank=not nul,
    )


def test_a_run_of_64_filler_lines_is_one_issue_and_63_are_lines() -> None:
    assert split([b"\n" * 64 + b"x\n"]) == [filler(0, 1, 64, 64), ([b"x"], 64, 65, None)]
    assert split([b"\n" * 63 + b"x\n"]) == [([b""] * 63 + [b"x"], 0, 1, None)]
    assert split([b"\x00\n" * 64 + b"x\n"]) == [filler(0, 1, 64, 128, nul=True), ([b"x"], 128, 65, None)]
    assert split([b"\x00\n" * 63 + b"x\n"]) == [([b"\x00"] * 63 + [b"x"], 0, 1, None)]


def test_a_run_after_lines_in_the_same_chunk_keeps_them_and_their_addresses() -> None:
    assert split([b"a\nbb\n" + b"\n" * 64 + b"c\n"]) == [
        ([b"a", b"bb"], 0, 1, None),
        filler(5, 3, 64, 64),
        ([b"c"], 69, 67, None),
    ]
    mixed = b"\x00\n\n" * 32  # NUL-only and empty lines alternating: one run, its first line NUL
    assert split([b"a\n" + mixed + b"b"]) == [
        ([b"a"], 0, 1, None),
        filler(2, 2, 64, 96, nul=True),
        PartialLine(98, 1, 66),
    ]


def test_the_newline_that_ends_a_pending_line_does_not_start_a_run() -> None:
    splitter = LineSplitter()
    assert list(splitter.feed(b"abc")) == []
    assert list(splitter.feed(b"\n" * 65 + b"x\n")) == [
        ([b"abc"], 0, 1, None),
        filler(4, 2, 64, 64),
        ([b"x"], 68, 66, None),
    ]
    assert (splitter.offset, splitter.line, splitter.lines) == (70, 67, 66)


def test_a_run_at_the_start_of_a_chunk_that_ends_mid_line() -> None:
    """The first line of the chunk is filler: the run starts at its first byte, however the
    chunk ends."""
    assert split([b"\n" * 64 + b"x"]) == [filler(0, 1, 64, 64), PartialLine(64, 1, 65)]
    assert split([b"\x00\n" * 64 + b"xy"]) == [filler(0, 1, 64, 128, nul=True), PartialLine(128, 2, 65)]
    splitter = LineSplitter()
    assert list(splitter.feed(b"a\n")) == [([b"a"], 0, 1, None)]
    assert list(splitter.feed(b"\n" * 64 + b"{")) == [filler(2, 2, 64, 64)]


def test_the_first_run_in_a_chunk_is_found_whichever_kind_of_line_it_starts_with() -> None:
    """A run starts after a newline followed by a newline or by a NUL byte; where the chunk has
    both kinds, the earlier start wins, and a chunk may have only one kind."""
    splitter = LineSplitter()
    list(splitter.feed(b"abc"))
    assert list(splitter.feed(b"\n" + b"\n" * 64 + b"x\n\x00\n")) == [
        ([b"abc"], 0, 1, None),
        filler(4, 2, 64, 64),
        ([b"x", b"\x00"], 68, 66, None),
    ]
    splitter = LineSplitter()
    list(splitter.feed(b"abc"))
    assert list(splitter.feed(b"\n" + b"\x00\n" * 64 + b"y\n\n")) == [
        ([b"abc"], 0, 1, None),
        filler(4, 2, 64, 128, nul=True),
        ([b"y", b""], 132, 66, None),
    ]
    assert split([b"x\n" + b"\x00\n" * 64]) == [([b"x"], 0, 1, None), filler(2, 2, 64, 128, nul=True)]


def test_a_run_ends_after_its_last_newline_not_inside_the_next_line() -> None:
    """NUL bytes that begin the next (non-filler) line, or a torn tail, are not part of the run."""
    assert split([b"\n" * 64 + b"\x00\x00x\n"]) == [filler(0, 1, 64, 64), ([b"\x00\x00x"], 64, 65, None)]
    assert split([b"\n" * 64 + b"\x00\x00"]) == [filler(0, 1, 64, 64), PartialLine(64, 2, 65)]


def test_every_run_in_a_chunk_is_found_after_a_short_one() -> None:
    """A blank line too short to be a run does not end the search, nor does a first run."""
    assert split([b"a\n\nb\n" + b"\n" * 64 + b"c\n" + b"\x00\n" * 64]) == [
        ([b"a", b"", b"b"], 0, 1, None),
        filler(5, 4, 64, 64),
        ([b"c"], 69, 68, None),
        filler(71, 69, 64, 128, nul=True),
    ]
