"""``first_seen.FirstSeen`` and ``Tally`` (issue 11 item 1): whatever the keys offered, they keep
the first ``limit`` distinct keys in first-seen order with their first value (a ``Tally``: the
exact count of each), say ``more`` exactly when a key beyond them was offered, and never hold
more than ``limit`` keys."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.first_seen import FIRST_SEEN, FirstSeen, Tally, more_note, said_once

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
