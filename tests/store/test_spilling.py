"""``store.spilling.SpillingRows`` (issue 11 item 1): whatever is done to it, it answers as the
``dict`` it stands for, in memory and after the move to its spill file; it moves exactly when a
limit is first passed, once, and never holds the spilled rows. Its bytes are each key's length
plus its value's ``size``: a key is as long as a log chose it (a 64 KiB parent uuid counted 0
bytes before)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sesstool.store import spill
from sesstool.store.spill import SpillFile
from sesstool.store.spilling import SpillingRows

keys = st.text(alphabet="ab\ud800é", min_size=0, max_size=3)  # a lone surrogate is a key too
values = st.one_of(st.none(), st.integers(), st.text(max_size=6), st.tuples(st.integers(), st.none()))
ops = st.lists(
    st.one_of(
        st.tuples(st.just("set"), keys, values),
        st.tuples(st.just("pop"), keys),
        st.tuples(st.just("popitem")),
        st.tuples(st.just("copy")),
        st.tuples(st.just("clear")),
    ),
    max_size=40,
)


def size(value: Any) -> int:
    return 1 + len(str(value))


def weight(key: str, value: Any, sized: bool = True) -> int:
    """What a key and its value count toward the byte limit (the key's length always)."""
    return len(key) + (size(value) if sized else 0)


def check(rows: SpillingRows, model: dict[str, Any]) -> None:
    assert len(rows) == len(model) and bool(rows) == bool(model)
    assert list(rows.items()) == list(model.items())
    assert list(rows.values()) == list(model.values())
    assert rows.last() == (next(reversed(model.items())) if model else None)
    for key in model:
        assert key in rows and rows[key] == model[key] and rows.get(key) == model[key]
    assert "zz" not in rows and rows.get("zz", 7) == 7
    with pytest.raises(KeyError):
        rows["zz"]


@given(ops, st.integers(min_value=0, max_value=5), st.one_of(st.none(), st.integers(0, 30)))
def test_it_answers_as_a_dict_before_and_after_the_move(ops: list[Any], at: int, most: int | None) -> None:
    files: list[SpillFile] = []

    def open_file() -> SpillFile:
        files.append(SpillFile("a test's rows"))
        return files[-1]

    rows = SpillingRows(open_file, lambda: (at, most), size if most is not None else None)
    model: dict[str, Any] = {}
    copies: list[tuple[SpillingRows, dict[str, Any]]] = []
    held_bytes = 0
    for op in ops:
        if op[0] == "set":
            was_spilled = rows.spilled
            sized = most is not None
            held_bytes += weight(op[1], op[2], sized) - (
                weight(op[1], model[op[1]], sized) if op[1] in model else 0
            )
            rows[op[1]] = model[op[1]] = op[2]
            # the move happens exactly when a limit is first passed, and only then
            passed = len(model) > at or (most is not None and held_bytes > most)
            assert rows.spilled == (was_spilled or passed)
        elif op[0] == "pop":
            if op[1] in model:
                held_bytes -= weight(op[1], model[op[1]], most is not None)
            assert rows.pop(op[1], "none") == model.pop(op[1], "none")
        elif op[0] == "popitem":
            if model:
                pair = model.popitem()
                held_bytes -= weight(*pair, most is not None)
                assert rows.popitem() == pair
            else:
                with pytest.raises(KeyError):
                    rows.popitem()
        elif op[0] == "copy":
            copies.append((rows.copy(), dict(model)))
        else:
            rows.clear()
            model.clear()
            held_bytes = 0
            assert not rows.spilled
        check(rows, model)
        if not rows.spilled:
            assert rows._bytes == held_bytes
    assert len(files) <= 1 + sum(op[0] == "clear" for op in ops)  # one file per move, never more
    for twin, snapshot in copies:  # each copy kept what it had, whatever happened after
        check(twin, snapshot)
        assert type(twin) is SpillingRows


def test_spilled_rows_are_not_held_and_read_back_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill.OrderedRows, "_SLICE", 3)
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (4, None))
    for n in range(10):
        rows[f"k{n}"] = n
    assert rows.spilled and rows._held == {} and rows._bytes == 0
    assert list(rows.items()) == [(f"k{n}", n) for n in range(10)]
    rows.clear()
    assert not rows.spilled and len(rows) == 0 and list(rows.items()) == []


def test_the_limits_are_read_when_used() -> None:
    limit = [100]
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (limit[0], None))
    rows["a"], rows["b"] = 1, 2
    assert not rows.spilled
    limit[0] = 2
    rows["a"] = 3  # set again: still two keys, not past two
    assert not rows.spilled
    rows["c"] = 4
    assert rows.spilled and list(rows.items()) == [("a", 3), ("b", 2), ("c", 4)]


def test_a_subclass_copies_as_itself() -> None:
    class Named(SpillingRows):
        __slots__ = ()

    rows = Named(lambda: SpillFile("a test's rows"), lambda: (0, None))
    rows["x"] = 1
    twin = rows.copy()
    assert type(twin) is Named and rows.spilled and twin.spilled and list(twin.items()) == [("x", 1)]
    twin["y"] = 2
    assert list(rows.items()) == [("x", 1)] and repr(twin) == "SpillingRows(2 rows, spilled)"


def test_without_a_byte_limit_only_the_count_moves_it() -> None:
    """Sizes measured but no byte limit (None): however many bytes are held, only passing the
    count of keys moves the rows."""
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (3, None), lambda value: 1 << 40)
    rows["a"], rows["b"], rows["c"] = 1, 2, 3
    assert not rows.spilled and rows._bytes == 3 + (3 << 40)  # the keys' bytes too
    rows["d"] = 4
    assert rows.spilled


def test_it_holds_no_instance_dict() -> None:
    """Slots only (one is made per waiting structure of a scan; a subclass adds none either)."""
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (3, None))
    assert not hasattr(rows, "__dict__")


def test_a_key_set_again_counts_its_later_size_only() -> None:
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (5, 12), size)
    rows["a"] = "xxxx"  # 1 + 5 bytes
    rows["a"] = "y"  # 1 + 2 bytes: the 5 are given back
    rows["b"] = "zzzzzz"  # 1 + 7: 11 in all, not past 12
    assert not rows.spilled and rows._bytes == 11
    rows["b"] = "zzzzzzz"  # 1 + 8: 12, still not past
    assert not rows.spilled and rows._bytes == 12
    rows["c"] = 1  # 1 + 2: past 12
    assert rows.spilled


def test_a_none_set_again_gives_back_its_size() -> None:
    """A held value of None is a value: set again, its size is given back (not taken for a
    missing key, which would count it twice and move the rows early)."""
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (5, 12), size)
    rows["a"] = None  # 1 + 5 bytes ("None")
    rows["a"] = None  # still 6, not 12
    rows["b"] = "xxx"  # 1 + 4: 11 in all
    assert not rows.spilled and rows._bytes == 11


def test_clear_drops_the_spilled_table_from_its_file() -> None:
    file = SpillFile("a test's rows")
    rows = SpillingRows(lambda: file, lambda: (1, None))
    rows["a"], rows["b"] = 1, 2
    assert rows.spilled

    def tables() -> int:
        return int(file.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0])

    assert tables() == 1
    rows.clear()
    assert tables() == 0


def test_a_copy_in_memory_moves_on_its_own_limits() -> None:
    files: list[SpillFile] = []

    def open_file() -> SpillFile:
        files.append(SpillFile("a test's rows"))
        return files[-1]

    rows = SpillingRows(open_file, lambda: (2, 8), size)
    rows["a"] = 1
    twin = rows.copy()
    assert not twin.spilled and twin._bytes == 3
    twin["b"] = 22  # 1 + 3 bytes: 7 in all
    assert not twin.spilled
    twin["c"] = 3  # past two keys
    assert twin.spilled and len(files) == 1 and list(twin.items()) == [("a", 1), ("b", 22), ("c", 3)]
    assert not rows.spilled and list(rows.items()) == [("a", 1)]


def test_the_keys_count_toward_the_byte_limit() -> None:
    """A long key moves the rows however small its value (``size`` None: the keys alone)."""
    rows = SpillingRows(lambda: SpillFile("a test's rows"), lambda: (100, 1 << 16))
    rows["k" * 40000] = None
    assert not rows.spilled and rows._bytes == 40000
    rows["j" * 40000] = None  # 80,000 bytes of keys: past 64 KiB, two keys of 100
    assert rows.spilled and [len(k) for k, _ in rows.items()] == [40000, 40000]
    rows.pop("j" * 40000)
    assert list(rows.items()) == [("k" * 40000, None)]
