"""``thread_rolled_back`` (dialects/codex/history.py ``_Items.roll_back``, issue 11 item 1;
agent-formats §3.4 step 2: "drops the newest N user turns"): the newest ``num_turns`` segments
holding a user message are dropped, every other item kept in order — a segment holding none (a
turn without a user message) and a compaction's base items (segment -1) stay.

Stop 29 found the segments walking back, holding nothing per segment; stop 30 makes a rollback
cost what it drops: the segments holding a user message are listed where they start, the dropped
items marked where they are and the columns compacted in place once the dead outnumber the
living. Proved here on any history whose segments never decrease (what ``HistoryBuilder``
makes): the items kept equal a plain model's (every user segment's set, the newest dropped),
after any mix of appends and rollbacks, in memory and spilled; and through ``HistoryBuilder``,
what ``derive`` returns equals a list model of the rollout's items. The cost is counted in reads
and writes of the columns (never timed): ``tests/dialects/codex/test_rollback_cost.py``."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.codex import history
from sesstool.dialects.codex.history import _USER, HistoryBuilder, _Items, _Spill

# per item: (step of the segment: 0 the same, 1+ a later one; is it a user message)
HISTORIES = st.tuples(
    st.integers(0, 3),  # items of a compaction (segment -1) first
    st.lists(st.tuples(st.integers(0, 2), st.booleans()), max_size=60),
)
# a mix of appends (step, user) and rollbacks (turns), in any order
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("item"), st.integers(0, 2), st.booleans()),
        st.tuples(st.just("rollback"), st.integers(1, 4), st.just(False)),
    ),
    max_size=80,
)


def _user_row(segment: int, user: bool) -> dict[str, Any]:
    return {"type": "message", "role": "user" if user else "assistant"}


def _rows(items: _Items) -> list[tuple[int, int, int]]:
    return [(items.segment[i], items.ref[i], items.kind[i]) for i in range(len(items)) if items.kind[i] != 7]


def _model_roll_back(rows: list[tuple[int, int, int]], turns: int) -> list[tuple[int, int, int]]:
    """The rule as the sets said it: the newest ``turns`` segments >= 0 holding a user message."""
    segments = sorted({segment for segment, _, kind in rows if segment >= 0 and kind == _USER})
    doomed = set(segments[-turns:])
    return [row for row in rows if row[0] not in doomed]


def _spilled(spill: bool, at: int = 4) -> int:
    saved = history.SPILL_AT
    if spill:
        history.SPILL_AT = at
    return saved


@settings(max_examples=300, deadline=None)
@given(HISTORIES, st.integers(1, 8), st.booleans())
def test_rollback_keeps_what_the_sets_kept(
    history_: tuple[int, list[tuple[int, bool]]], turns: int, spill: bool
) -> None:
    compacted, steps = history_
    saved = _spilled(spill)
    try:
        items = _Items(_Spill() if spill else None)
        segment = 0
        rows = [(-1, False)] * compacted
        for step, user in steps:
            segment += step
            rows.append((segment, user))
        for n, (segment, user) in enumerate(rows):
            items.append(segment, n, -1, _user_row(segment, user))
        expected = _model_roll_back(_rows(items), turns)
        items.roll_back(turns)
        assert _rows(items) == expected
    finally:
        history.SPILL_AT = saved


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3), OPERATIONS, st.booleans())
def test_appends_and_rollbacks_in_any_order_keep_what_the_model_keeps(
    compacted: int, operations: list[tuple[str, int, bool]], spill: bool
) -> None:
    """After every operation the living items (and where each user segment starts) are the
    model's; the dead never outnumber the living after a rollback."""
    saved = _spilled(spill)
    try:
        items = _Items(_Spill() if spill else None)
        model: list[tuple[int, int, int]] = []
        segment, ref = 0, 0
        for _ in range(compacted):
            items.append(-1, ref, -1, _user_row(-1, True))
            model.append((-1, ref, _USER))
            ref += 1
        for op, value, user in operations:
            if op == "rollback":
                items.roll_back(value)
                model = _model_roll_back(model, value)
                assert 2 * items.dead <= len(items)
            else:
                segment += value
                row = _user_row(segment, user)
                items.append(segment, ref, -1, row)
                model.append((segment, ref, _USER if user else 0))
                ref += 1
            assert _rows(items) == model
            starts = [items.users[u] for u in range(items.users_n)]
            assert [items.segment[i] for i in starts] == sorted(
                {s for s, _, kind in model if s >= 0 and kind == _USER}
            )
            assert all(
                items.kind[i] != 7
                and (i == 0 or items.segment[i - 1] != items.segment[i] or items.kind[i - 1] == 7)
                for i in starts
            )
    finally:
        history.SPILL_AT = saved


# a rollout as (event, value): a turn starts, an item of a kind, a rollback of n turns, a
# compaction of the history so far (its replacement history: what the model holds), a restart
ROLLOUT = st.lists(
    st.one_of(
        st.tuples(st.just("task_started"), st.just(0)),
        st.tuples(st.just("item"), st.integers(0, 5)),
        st.tuples(st.just("rollback"), st.integers(0, 4)),
        st.tuples(st.just("compacted"), st.just(0)),
        st.tuples(st.just("legacy"), st.just(0)),
        st.tuples(st.just("session_meta"), st.just(0)),
    ),
    max_size=70,
)


def _item(kind: int, n: int) -> dict[str, Any]:
    call = f"c{n // 3}"  # calls and outputs meet now and then
    kinds: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"u{n}"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"a{n}"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": call},
        {"type": "function_call_output", "call_id": call, "output": f"o{n}"},
        {"type": "custom_tool_call", "name": "apply", "input": "", "call_id": call},
        {"type": "reasoning", "summary": [], "id": f"r{n}"},
    ]
    return kinds[kind]


class _Model:
    """The history as a plain list of (turn, item), the rules of agent-formats §3.4 written
    directly: a rollback drops every item of the newest ``n`` turns holding a user message."""

    def __init__(self) -> None:
        self.items: list[tuple[int, dict[str, Any]]] = []
        self.turn = 0

    def rollback(self, turns: int) -> None:
        users = sorted({t for t, item in self.items if t >= 0 and history._is_user_message(item)})
        doomed = set(users[-turns:]) if turns > 0 else set()
        self.items = [(t, item) for t, item in self.items if t not in doomed]


def _lines(ops: list[tuple[str, int]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rollout's lines and the history the model keeps after them."""
    model = _Model()
    lines: list[dict[str, Any]] = [{"type": "session_meta", "payload": {"id": "t"}}]
    for n, (op, value) in enumerate(ops):
        if op == "task_started":
            model.turn += 1
            lines.append({"type": "event_msg", "payload": {"type": "task_started"}})
        elif op == "item":
            item = _item(value, n)
            model.items.append((model.turn, item))
            lines.append({"type": "response_item", "payload": item})
        elif op == "rollback":
            if value > 0:
                model.rollback(value)
            lines.append({"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": value}})
        elif op == "compacted":
            replacement = [item for _, item in model.items]
            model.items = [(-1, item) for item in replacement]
            lines.append(
                {"type": "compacted", "payload": {"message": "", "replacement_history": replacement}}
            )
        elif op == "legacy":
            users = [item for _, item in model.items if history._is_user_message(item)]
            summary = history.legacy_summary({"message": f"s{n}"})
            model.items = [(-1, item) for item in [*users, summary]]
            lines.append({"type": "compacted", "payload": {"message": f"s{n}"}})
        else:
            model.items = []
            lines.append({"type": "session_meta", "payload": {"id": "t"}})
    return lines, [item for _, item in model.items]


def _derived(lines: list[dict[str, Any]], by_address: bool) -> list[dict[str, Any]]:
    builder = HistoryBuilder(by_address)
    for offset, line in enumerate(lines):
        builder.feed(line, offset)
    if not by_address:
        return list(builder.derive().items)
    return list(builder.derivation(lambda offset, sub: history.item_in(lines[offset], sub)).items())


@settings(max_examples=300, deadline=None)
@given(ROLLOUT, st.sampled_from([None, 0, 3]))
def test_the_derived_history_is_the_models(ops: list[tuple[str, int]], spill_at: int | None) -> None:
    """Random turns, items, rollbacks, compactions and restarts: what ``derive`` sends equals the
    normalised list model, held in memory and read by address (spilled from ``spill_at`` items)."""
    lines, kept = _lines(ops)
    expected = list(history.Derivation(_held(kept), lambda ref, sub: kept[ref], False, 0).items())
    assert _derived(lines, False) == expected
    saved = _spilled(spill_at is not None, spill_at or 0)
    try:
        assert _derived(lines, True) == expected
    finally:
        history.SPILL_AT = saved


def _held(kept: list[dict[str, Any]]) -> _Items:
    """The model's items as columns in memory, for the same normalisation (normalize.rs)."""
    items = _Items()
    for ref, item in enumerate(kept):
        items.append(0, ref, -1, item)
    return items
