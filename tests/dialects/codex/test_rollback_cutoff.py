"""``thread_rolled_back`` (dialects/codex/history.py ``_roll_back``, issue 11 item 1): the
newest ``num_turns`` segments holding a user message are found walking back and dropped a
segment at a time, holding nothing per segment. The same items are kept as by the set and
sorted list of every user segment it replaced (the reference below), in memory and spilled, on
any history whose segments never decrease (what ``HistoryBuilder`` makes: a compaction's -1
items first, then ``task_started`` counting up)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.codex import history
from sesstool.dialects.codex.history import _USER, _Items, _rollback_cutoff, _rolled_back, _Spill

# per item: (step of the segment: 0 the same, 1+ a later one; is it a user message)
HISTORIES = st.tuples(
    st.integers(0, 3),  # items of a compaction (segment -1) first
    st.lists(st.tuples(st.integers(0, 2), st.booleans()), max_size=60),
)


def _items(compacted: int, steps: list[tuple[int, bool]], spill: bool) -> _Items:
    items = _Items(_Spill() if spill else None)
    rows = [(-1, False)] * compacted
    segment = 0
    for step, user in steps:
        segment += step
        rows.append((segment, user))
    for n, (segment, user) in enumerate(rows):
        item: dict[str, Any] = {"type": "message", "role": "user" if user else "assistant"}
        items.append(segment, n, -1, item)
    return items


def _reference(items: _Items, turns: int) -> list[int]:
    segments = sorted(
        {items.segment[i] for i in range(len(items)) if items.segment[i] >= 0 and items.kind[i] == _USER}
    )
    doomed = set(segments[-turns:])
    return [items.ref[i] for i in range(len(items)) if items.segment[i] not in doomed]


@settings(max_examples=300, deadline=None)
@given(HISTORIES, st.integers(1, 8), st.booleans())
def test_rollback_keeps_what_the_sets_kept(
    history_: tuple[int, list[tuple[int, bool]]], turns: int, spill: bool
) -> None:
    compacted, steps = history_
    if spill:
        history.SPILL_AT, saved = 4, history.SPILL_AT
    try:
        items = _items(compacted, steps, spill)
        expected = _reference(items, turns)
        cutoff = _rollback_cutoff(items, turns)
        kept = items if cutoff is None else items.keep(_rolled_back(items, cutoff))
        assert [kept.ref[i] for i in range(len(kept))] == expected
        assert all(items.kind[i] != _USER or items.segment[i] < 0 for i in range(len(items))) == (
            cutoff is None
        )
    finally:
        if spill:
            history.SPILL_AT = saved
