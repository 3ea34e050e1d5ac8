"""``first_seen.FirstSeen`` and ``Tally`` (issue 11 item 1): whatever the keys offered, they keep
the first ``limit`` distinct keys in first-seen order with their first value (a ``Tally``: the
exact count of each), say ``more`` exactly when a key beyond them was offered, and never hold
more than ``limit`` keys."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.first_seen import FIRST_SEEN, FirstSeen, Tally, held_key, more_note, said_once
from sesstool.core.humanize import CHOSEN_CHARS, chosen

_KEYS = st.lists(st.text(alphabet="abcdefgh", max_size=2), max_size=200)


@given(_KEYS, st.integers(min_value=0, max_value=12))
def test_first_seen_keeps_the_first_distinct_keys(keys: list[str], limit: int) -> None:
    seen: FirstSeen[int] = FirstSeen(limit)
    kept_now = [seen.add(key, i) for i, key in enumerate(keys)]
    distinct = list(dict.fromkeys(keys))
    assert list(seen) == distinct[:limit] and len(seen) <= limit
    assert seen.more == (len(distinct) > limit)
    for key in seen:
        assert seen[key] == keys.index(key)  # the value given with its first offer
    assert kept_now == [i == keys.index(k) and k in distinct[:limit] for i, k in enumerate(keys)]
    twin = seen.copy()
    assert (twin.kept, twin.more, twin.limit) == (seen.kept, seen.more, seen.limit)  # the same
    twin.add("new key, longer than any", 0)
    assert list(seen) == distinct[:limit]  # a copy is independent


@given(_KEYS, st.integers(min_value=0, max_value=12))
def test_tally_counts_the_kept_keys_exactly(keys: list[str], limit: int) -> None:
    tally = Tally(limit)
    for key in keys:
        tally.count(key)
    counted = Counter(keys)
    distinct = list(dict.fromkeys(keys))
    assert list(tally.kept.items()) == [(k, counted[k]) for k in distinct[:limit]]
    assert tally.more == (len(distinct) > limit)
    twin = tally.copy()
    assert isinstance(twin, Tally) and (twin.kept, twin.more, twin.limit) == (tally.kept, tally.more, limit)
    for key in distinct[:limit]:
        twin.count(key)
    assert list(tally.kept.items()) == [(k, counted[k]) for k in distinct[:limit]]


@given(_KEYS, st.integers(min_value=0, max_value=12))
def test_fresh_is_said_once_per_kept_key_and_every_time_past_them(keys: list[str], limit: int) -> None:
    seen: FirstSeen[None] = FirstSeen(limit)
    tally = Tally(limit)
    said = [seen.fresh(key, None) for key in keys]
    counted = [tally.count(key) for key in keys]
    kept = list(dict.fromkeys(keys))[:limit]
    # a kept key: said at its first offer only; a key beyond them: said at every offer
    assert said == [k not in kept or i == keys.index(k) for i, k in enumerate(keys)]
    assert counted == [k in kept and i == keys.index(k) for i, k in enumerate(keys)]  # kept now
    assert all(any(s for s, k in zip(said, keys, strict=True) if k == key) for key in set(keys))


def test_the_default_limit_is_the_documented_64() -> None:
    """docs/format.md ("Memory") and the outputs' words ("the first 64 shown") name 64."""
    assert FIRST_SEEN == 64 and FirstSeen().limit == 64 and Tally().limit == 64
    # slots: one of these per field of every scan's facts
    assert not hasattr(FirstSeen(), "__dict__") and not hasattr(Tally(), "__dict__")


def test_more_note_names_only_the_lists_that_stopped() -> None:
    assert more_note("models", ("cwds", "models")) == ", … and more (the first 64 shown)"
    assert more_note("models", ("cwds",)) == ""
    assert more_note("models", ()) == ""


@given(_KEYS, st.integers(min_value=0, max_value=12))
def test_said_once_says_a_kept_key_once_and_more_for_each_beyond(keys: list[str], limit: int) -> None:
    seen: FirstSeen[None] = FirstSeen(limit)
    said = [said_once(seen, key, f"said {key}", "more") for key in keys]
    kept = list(dict.fromkeys(keys))[:limit]
    assert said == [
        (f"said {k}" if i == keys.index(k) else None) if k in kept else "more" for i, k in enumerate(keys)
    ]
    assert list(seen) == kept


# -- long keys: held by their quoted form and a digest, told apart whole (stop 32) ----------------

_PREFIX = "a" * (CHOSEN_CHARS - 1)
# short keys, and long ones that share their first 128 characters and often their length (so
# that their quoted forms are alike while the keys are not); a lone surrogate among them
_LONG = st.builds(lambda tail: _PREFIX + tail, st.text(alphabet="ab\ud800", min_size=2, max_size=4))
_MIXED = st.lists(st.one_of(st.text(alphabet="ab\ud800", max_size=3), _LONG), max_size=120)


class _Whole:
    """The old ``FirstSeen``/``Tally`` (before stop 32): the first ``limit`` keys held whole."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kept, self.more = limit, dict[str, int](), False

    def count(self, key: str) -> bool:
        if key in self.kept:
            self.kept[key] += 1
            return False
        if len(self.kept) < self.limit:
            self.kept[key] = 1
            return True
        self.more = True
        return False


@given(_MIXED, st.integers(min_value=0, max_value=12))
def test_long_keys_behave_as_the_whole_keys_printed_cut(keys: list[str], limit: int) -> None:
    """Whatever the keys, every answer is the old one on the whole keys, and what is listed is
    the old list with each key as ``humanize.chosen`` quotes it; short keys: the old kept dict."""
    old, tally, seen, fresh = _Whole(limit), Tally(limit), FirstSeen[int](limit), FirstSeen[None](limit)
    for i, key in enumerate(keys):
        was_in = key in old.kept
        assert (key in tally) == was_in and (key in seen) == was_in
        assert tally.count(key) == old.count(key)
        assert seen.add(key, i) == (old.kept.get(key) == 1 and not was_in)
        assert fresh.fresh(key, None) == (not was_in)
    assert list(tally.items()) == [(chosen(k), n) for k, n in old.kept.items()]
    assert list(seen) == [chosen(k) for k in old.kept]
    assert all(tally[k] == n and seen[k] == keys.index(k) for k, n in old.kept.items())
    assert (tally.more, seen.more, len(tally), len(seen)) == (
        old.more,
        old.more,
        len(old.kept),
        len(old.kept),
    )
    if all(len(k) <= CHOSEN_CHARS for k in keys):
        assert tally.kept == old.kept and not tally.shown
    twin = tally.copy()
    twin.count(_PREFIX + "copy only")
    assert list(tally.items()) == [(chosen(k), n) for k, n in old.kept.items()]


def test_two_long_values_alike_when_cut_are_two_values() -> None:
    one, two = _PREFIX + "xy" + "1" * 1000, _PREFIX + "xy" + "2" * 1000  # the same 128, the same length
    assert chosen(one) == chosen(two) and one != two
    tally = Tally()
    for key in (one, two, one, "short", one):
        tally.count(key)
    cut = f"{_PREFIX}x…[1,129 characters]"
    assert list(tally.items()) == [(cut, 3), (cut, 1), ("short", 1)]
    assert (tally[one], tally[two], tally["short"]) == (3, 1, 1)
    assert one in tally and two in tally and cut not in tally and _PREFIX + "xy" not in tally
    assert said_once(FirstSeen(1), one, "said", "more") == "said"
    seen: FirstSeen[None] = FirstSeen(1)
    assert [said_once(seen, key, "said", "more") for key in (one, one, two)] == ["said", None, "more"]


def test_what_is_held_of_a_long_value_is_bounded_whatever_its_length() -> None:
    """A kept long key is a 32-byte digest and its quoted form: nothing of it grows with it."""
    for length in (129, 1 << 16, 1 << 20):
        tally = Tally()
        for i in range(FIRST_SEEN + 3):
            tally.count(f"{i} ".ljust(length, "v"))
        assert len(tally) == FIRST_SEEN and tally.more
        assert all(isinstance(k, bytes) and len(k) == 32 for k in tally.kept)
        assert all(
            len(text) <= CHOSEN_CHARS + len("…[1,048,576 characters]") for text in tally.shown.values()
        )
        assert next(iter(tally)) == chosen("0 ".ljust(length, "v"))
    # a pair of lone surrogates is not the character they would encode: two values
    assert held_key("\ud800\udc00" + "x" * 200) != held_key("\U00010000" + "x" * 201)
    assert held_key("x" * 128) == "x" * 128 and held_key(None) is None
