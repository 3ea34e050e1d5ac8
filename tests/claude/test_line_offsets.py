"""The per-line offsets derive keeps for a Claude transcript (dialects/claude/line_offsets.py,
issues 11 and 17) answer like a plain list of every line's offset (-1 for filler), in memory
and spilled from any line on; a run of filler lines costs one gap record, not a word per line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.claude.line_offsets import LineOffsets
from sesstool.store import spill
from sesstool.store.spill import SpillFile

# batches: (filler lines before the batch, the lengths of its lines)
_BATCHES = st.lists(
    st.tuples(st.integers(0, 200), st.lists(st.integers(0, 30), min_size=1, max_size=12)), max_size=30
)


def _fed(batches: list[tuple[int, list[int]]], spill_at: int) -> tuple[LineOffsets, list[int]]:
    made = LineOffsets(spill_at, SpillFile)
    plain: list[int] = []
    offset = 0
    for filler, lengths in batches:
        offset += filler  # a newline each
        plain.extend([-1] * filler)
        lines = [b"x" * n for n in lengths]
        made.add(lines, offset, len(plain) + 1)
        for line in lines:
            plain.append(offset)
            offset += len(line) + 1
    return made, plain


@settings(max_examples=150, deadline=None)
@given(_BATCHES, st.sampled_from([0, 1, 7, 1 << 30]))
def test_offsets_answer_like_a_list(batches: list[tuple[int, list[int]]], spill_at: int) -> None:
    old_page, old_cached = spill.PAGE, spill.CACHED_PAGES
    spill.PAGE, spill.CACHED_PAGES = 4, 2
    try:
        made, plain = _fed(batches, spill_at)
        assert made.lines == len(plain)
        assert [made.at(n) for n in range(0, len(plain) + 3)] == [-1, *plain, -1, -1]
        assert made.spilled == (
            bool(batches)
            and spill_at <= len(plain) - sum(f for f, _ in batches) + sum(1 for f, _ in batches if f)
        )
    finally:
        spill.PAGE, spill.CACHED_PAGES = old_page, old_cached


def test_a_filler_run_costs_one_record() -> None:
    made = LineOffsets(1 << 30, SpillFile)
    made.add([b"{}"], 0, 1)
    made.add([b"{}"], 3 + 50_000_000, 50_000_002)  # fifty million blank lines handed over whole
    assert len(made.offsets) == 2 and not made.spilled
    assert (made.at(1), made.at(2), made.at(50_000_001), made.at(50_000_002)) == (0, -1, -1, 50_000_003)
