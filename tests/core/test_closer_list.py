"""``core.closer_list``: the closers made on each walk (issue 11 item 1) behave as the tuple
they replaced, and its helpers keep what they say."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.closer_list import Closers, batches, ends, joined


def test_closers_are_made_again_on_each_walk_and_equal_the_held_tuple() -> None:
    made = []

    def make() -> list[dict[str, int]]:
        made.append(1)
        return [{"seq": n} for n in range(5)]

    closers = Closers(make, 5)
    assert made == [] and len(closers) == 5 and closers  # len and bool do not walk
    assert list(closers) == list(closers) and len(made) == 2
    assert closers == tuple({"seq": n} for n in range(5)) == closers
    assert [{"seq": n} for n in range(5)] == closers
    assert closers[0] == {"seq": 0} and closers[-1] == {"seq": 4} and closers[1:3] == ({"seq": 1}, {"seq": 2})
    with pytest.raises(IndexError, match=r"^closer index out of range$"):
        closers[5]
    assert not hasattr(closers, "__dict__")  # slots: one small object per sequence, held per scan
    assert not Closers.of(()) and Closers.of(()) == [] and len(Closers.of([1, 2])) == 2
    assert list(Closers.joined((0,), Closers.of([1, 2]), ())) == [0, 1, 2]
    assert len(Closers.joined((0,), Closers.of([1, 2]))) == 3
    assert list(closers.mapped(lambda c: c["seq"] * 2)) == [0, 2, 4, 6, 8]
    with pytest.raises(TypeError):
        hash(closers)


@given(st.lists(st.integers(), max_size=60), st.integers(min_value=1, max_value=12))
def test_ends_batches_joined(items: list[int], keep: int) -> None:
    first, last = ends(items, keep)
    if len(items) <= 2 * keep:
        assert first == tuple(items) and last == ()
    else:
        assert first == tuple(items[:keep]) and last == tuple(items[-keep:])
    assert [x for batch in batches(items, keep) for x in batch] == items
    assert all(len(b) == keep for b in list(batches(items, keep))[:-1])
    lines = [str(n).encode() + b"\n" for n in items]
    pieces = list(joined(lines, keep))
    assert b"".join(pieces) == b"".join(lines) and all(pieces)
    # each piece but the last ends at the first line that brings it to ``keep`` bytes
    cut = [len(b"".join(lines[:n])) for n in range(len(lines) + 1)]
    ends_at = [sum(map(len, pieces[: i + 1])) for i in range(len(pieces))]
    assert set(ends_at) <= set(cut)
    starts = [0, *ends_at[:-1]]
    for start, end in zip(starts[:-1], ends_at[:-1], strict=True):
        last_line_start = max(c for c in cut if c < end)
        assert end - start >= keep > last_line_start - start


def test_ends_at_exactly_twice_keep_is_one_part() -> None:
    assert ends(range(6), 3) == ((0, 1, 2, 3, 4, 5), ())
    assert ends(range(7), 3) == ((0, 1, 2), (4, 5, 6))
    assert ends((), 1) == ((), ())


def test_joined_pieces_reach_the_size_then_start_again() -> None:
    lines = [b"ab\n", b"c\n", b"defg\n", b"h\n", b"i\n"]
    assert list(joined(lines, 4)) == [b"ab\nc\n", b"defg\n", b"h\ni\n"]
    assert list(joined(lines, 1)) == lines
    assert list(joined(lines, 100)) == [b"".join(lines)]
    assert list(joined([], 4)) == []
