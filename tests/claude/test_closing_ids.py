"""``interrupted.closing_ids`` (issue 11 item 1): the ids among the pending ones that resume
closes (spec agent-formats §0) — a set while the pending ids are in memory (the spill file not
opened), and past ``held.HELD_AT`` pending ids a table of the dangling ids in the derivation's
spill file, never a set of the pending ids; the same answers either way."""

from __future__ import annotations

import pytest

from sesstool.dialects.claude import held
from sesstool.dialects.claude.held import HeldList, Store
from sesstool.dialects.claude.interrupted import closing_ids, interrupted_result
from sesstool.dialects.claude.scan_facts import ToolCall
from sesstool.dialects.claude.vocabulary import INTERRUPTED_TOOL_TEXT


def _calls(*ids: str) -> list[ToolCall]:
    return [ToolCall(i, "Bash", "{}", n, f"uuid-{n}") for n, i in enumerate(ids)]


def test_in_memory_a_set_and_no_spill_file() -> None:
    store = Store()
    pending = HeldList(store, ["a", "b", "c"])
    closing = closing_ids(_calls("b", "c", "z"), pending, store)
    assert closing == {"b", "c"} and isinstance(closing, set)
    assert store.file is None


def test_spilled_a_table_of_the_dangling_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "HELD_AT", 2)
    store = Store()
    pending = HeldList(store, ["a", "b", "c"])
    assert pending.spilled
    closing = closing_ids(_calls("b", "c", "z"), pending, store)
    assert not isinstance(closing, set) and not hasattr(closing, "__dict__")
    assert [i in closing for i in pending] == [False, True, True]
    assert list(closing) == ["b", "c", "z"] and len(closing) == 3
    empty = closing_ids([], pending, store)
    assert [i in empty for i in pending] == [False] * 3 and list(empty) == []


def test_the_interrupted_block() -> None:
    assert list(interrupted_result("t-1").items()) == [
        ("type", "tool_result"),
        ("content", INTERRUPTED_TOOL_TEXT),
        ("is_error", True),
        ("tool_use_id", "t-1"),
    ]
