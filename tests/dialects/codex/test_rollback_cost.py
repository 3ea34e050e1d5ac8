"""A Codex ``thread_rolled_back`` costs what it drops (issue 11 item 1, stop 30): counted in reads
and writes of the history's columns (a counting ``array`` in memory, ``SpilledArray``'s item
access spilled), never timed. Before, each rollback walked back to its cutoff and copied every
item it kept into new columns, so n rollbacks after n turns cost n² (``_Items.keep``; and
walking back past the turns without a user message, which a rollback keeps, cost n² more).
Now the user segments are listed where they start, the dropped items marked where they are,
and the columns compacted in place once the dead outnumber the living.

n = 100 → 400 turns, whole builds (feed and derive), in memory (spilled past 16 items alike,
within 15 %): on main's code before (a74b652) one by one 110,800 → 1,763,200 operations, past
survivors 246,550 → 3,926,200, two turns and a rollback 114,200 → 1,776,800 (×16: each test
here fails there); now 2,296 → 9,196, 3,923 → 15,698, 3,897 → 15,597 (×4)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sesstool.dialects.codex import history
from sesstool.store import spill
from tests.adversarial import codex_hostile

SHAPES = [
    codex_hostile.rolled_back_one_by_one,
    codex_hostile.rolled_back_past_survivors,
    codex_hostile.turn_and_rollback,
]


class _Counted(array):  # type: ignore[type-arg]
    """An ``array`` counting each item read, written or appended."""

    ops = 0

    def __getitem__(self, i: Any) -> Any:
        _Counted.ops += 1
        return array.__getitem__(self, i)

    def __setitem__(self, i: Any, value: Any) -> None:
        _Counted.ops += 1
        array.__setitem__(self, i, value)

    def append(self, value: Any) -> None:
        _Counted.ops += 1
        array.append(self, value)


def _counting_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("__getitem__", "__setitem__", "append"):
        made = getattr(spill.SpilledArray, name)

        def counted(self: Any, *args: Any, made: Callable[..., Any] = made) -> Any:
            _Counted.ops += 1
            return made(self, *args)

        monkeypatch.setattr(spill.SpilledArray, name, counted)


def _lines(tmp_path: Path, shape: Callable[[Path, int], None], n: int) -> list[dict[str, Any]]:
    log = tmp_path / f"{shape.__name__}-{n}.jsonl"
    shape(log, n)
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def _operations(lines: list[dict[str, Any]]) -> tuple[int, int]:
    """(column operations, items derived) of feeding ``lines`` and deriving the history."""
    _Counted.ops = 0
    builder = history.HistoryBuilder(by_address=True)
    for offset, line in enumerate(lines):
        builder.feed(line, offset)
    derived: Iterator[dict[str, Any]] = builder.derivation(
        lambda offset, sub: history.item_in(lines[offset], sub)
    ).items()
    return _Counted.ops, sum(1 for _ in derived)


@pytest.mark.parametrize("spilled", [False, True], ids=["in-memory", "spilled"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_rollbacks_cost_what_they_drop(
    shape: Callable[[Path, int], None], spilled: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "array", _Counted)
    if spilled:
        monkeypatch.setattr(history, "SPILL_AT", 16)
        _counting_spill(monkeypatch)
    small, small_items = _operations(_lines(tmp_path, shape, 100))
    large, large_items = _operations(_lines(tmp_path, shape, 400))
    print(shape.__name__, "spilled" if spilled else "in memory", small, "→", large)
    assert large_items == 4 * small_items  # the same shape, four times over
    assert large <= 4 * small + 64, (small, large)  # linear (quadratic before: ×15)
