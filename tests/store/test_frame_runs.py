"""``store.frame_runs.FrameRuns``: the zstd frame of each line, kept as runs, answers what a
map of every batch would (a property over drawn layouts, in memory and spilled), and the layouts
writers make — one frame for the whole log, a frame per line — cost one run however long."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.store import frame_runs
from sesstool.store.frame_runs import FrameRuns
from sesstool.store.spill import SpillFile
from tests.conftest import examples

# A layout: per frame, the lines that end in it (0: a frame holding only part of a line) and
# the batches its lines are handed over in (the reader splits a frame's output in chunks).
Layout = list[tuple[int, int]]


def batches(layout: Layout) -> list[tuple[int, int, int]]:
    """(first line, its count, frame) of each batch the reader would hand over."""
    out: list[tuple[int, int, int]] = []
    line = 1
    for frame, (count, pieces) in enumerate(layout):
        left = count
        for piece in range(pieces):
            n = left if piece == pieces - 1 else min(left, 1 + piece)
            if n:
                out.append((line, n, frame))
                line, left = line + n, left - n
    return out


def expected(layout: Layout) -> dict[int, int]:
    """A map of every line to the frame of its batch: what the runs must answer."""
    return {line + i: frame for line, count, frame in batches(layout) for i in range(count)}


def feed(runs: FrameRuns, layout: Layout) -> None:
    for line, _, frame in batches(layout):
        runs.seen(line, frame)


LAYOUTS = st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3)), min_size=1, max_size=60)


@settings(max_examples=examples(300))
@given(LAYOUTS)
def test_runs_answer_as_a_map_of_every_batch(layout: Layout) -> None:
    runs = FrameRuns()
    feed(runs, layout)
    want = expected(layout)
    assert {line: runs.frame_of(line) for line in want} == want
    assert runs.frame_of(0) is None  # before the first line: nothing


@settings(max_examples=examples(60))
@given(LAYOUTS)
def test_spilled_runs_answer_the_same(layout: Layout) -> None:
    spill = SpillFile("test frame runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frame_runs, "SPILL_AT", 2)
        runs = FrameRuns(lambda: spill)
        feed(runs, layout)
        copy = runs.copy()
        want = expected(layout)
        assert {line: runs.frame_of(line) for line in want} == want
        assert {line: copy.frame_of(line) for line in want} == want
        assert runs.spilled == (len(runs) > 2)


def test_a_copy_goes_its_own_way() -> None:
    runs = FrameRuns()
    feed(runs, [(1, 1), (1, 1)])
    copy = runs.copy()
    runs.seen(3, 7)
    assert (runs.frame_of(3), copy.frame_of(3)) == (7, 1)


@pytest.mark.parametrize("lines", [1, 2, 100_000])
def test_the_layouts_writers_make_are_one_run(lines: int) -> None:
    per_line = FrameRuns()
    for line in range(1, lines + 1):
        per_line.seen(line, line - 1)
    assert len(per_line) == 1 and per_line.frame_of(lines) == lines - 1 and per_line.frame_of(1) == 0
    whole = FrameRuns()
    for line in range(1, lines + 1, 4096):  # one frame, handed over in chunks
        whole.seen(line, 0)
    assert len(whole) == 1 and whole.frame_of(lines) == 0
    header_apart = FrameRuns()  # the harness: the header alone in frame 0, then a frame per append
    header_apart.seen(1, 0)
    for line in range(2, lines + 2):
        header_apart.seen(line, line - 1)
    assert len(header_apart) == 1 and header_apart.frame_of(lines + 1) == lines


def test_a_run_broken_by_a_frame_of_two_lines() -> None:
    """One line a frame, then a frame of three lines: the run ends at that frame's start."""
    runs = FrameRuns()
    for line, frame in ((1, 0), (2, 1), (3, 2), (6, 3), (7, 4)):
        runs.seen(line, frame)
    assert [runs.frame_of(line) for line in range(1, 9)] == [0, 1, 2, 2, 2, 3, 4, 4]


def test_raw_input_maps_nothing() -> None:
    runs = FrameRuns()
    runs.seen(1, None)
    runs.seen(5, None)
    assert len(runs) == 0 and runs.frame_of(3) is None
