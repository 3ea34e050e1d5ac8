"""``store.spill_sort.SpilledRows``: keyed blobs handed back by key, then in the order added;
rows added without a key wait until ``settle`` gives them one; ``drop`` forgets the latest
(inspect's timeline of a session's subagent files, engine/timeline_merge.py)."""

from __future__ import annotations

import random

from sesstool.store.spill_sort import SpilledRows


def test_rows_come_back_by_key_then_order_added() -> None:
    rows = SpilledRows("a test")
    try:
        rng = random.Random(30)
        added = []
        for i in range(1000):  # past several fetch batches
            key = rng.randrange(-(2**62), 2**62) if i % 3 else rng.randrange(5)
            rows.add(key, b"row %d" % i)
            added.append((key, i, b"row %d" % i))
        assert len(rows) == 1000
        assert list(rows.sorted(batch=7)) == [(k, r) for k, _, r in sorted(added)]
    finally:
        rows.close()


def test_waiting_rows_take_their_key_when_settled_and_drop_forgets() -> None:
    rows = SpilledRows("a test")
    try:
        rows.add(None, b"a")  # before its file's first time
        rows.add(None, b"b")
        assert list(rows.sorted()) == []  # waiting rows are not handed out
        rows.settle(5)
        rows.add(5, b"c")
        rows.add(9, b"d")
        start = len(rows)
        rows.add(None, b"e")
        rows.add(1, b"f")
        rows.drop(start)  # a file that could not be read: its rows go
        rows.add(2**63 - 1, b"g")
        rows.add(1, b"h")
        assert list(rows.sorted()) == [
            (1, b"h"),
            (5, b"a"),
            (5, b"b"),
            (5, b"c"),
            (9, b"d"),
            (2**63 - 1, b"g"),
        ]
    finally:
        rows.close()
