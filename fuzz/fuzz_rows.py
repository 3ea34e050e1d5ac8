"""atheris harness: the two decoders whose output can dwarf their input — range-encoded
``sourceEventSeqs`` (§9.4) and packed chunk rows (§9.3) — under a memory limit (issue 11).

Each input is read two ways: as JSON text (what a log line holds) and as a structured value
built from the fuzzer's bytes (wide integers, overlapping and huge ranges, long member lists).
Every value must end in a result or the decoder's own error, and the results must agree with
a naive reference: membership by bisection equals membership in the expansion, a row's events
are exactly its members in order with contiguous seqs and the running time. Memory is bounded
by ``-rss_limit_mb`` / ``-malloc_limit_mb`` (``make fuzz``): expanding a range or building a
row's events up front would exceed it. Run with ``make fuzz``.
"""

from __future__ import annotations

import sys
from itertools import islice
from typing import Any

import atheris

with atheris.instrument_imports():
    import orjson

    from sesstool.core.chunk_rows import RowError, expand_row
    from sesstool.core.header import MAX_SAFE
    from sesstool.core.seq_ranges import SeqRangeError, decode_seq_set, decode_seqs

# expansions are checked against the reference only below this size (the decoder itself must
# never need to expand: decode_seq_set holds ranges)
_EXPAND = 1 << 12
_TAGS = ("text-chunks", "reasoning-chunks", "tool-call-chunks")


def _int(fdp: Any) -> int:
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 0:
        return int(fdp.ConsumeIntInRange(-3, 64))
    if kind == 1:
        return int(fdp.ConsumeIntInRange(0, 1 << 20))
    if kind == 2:
        return int(fdp.ConsumeIntInRange(MAX_SAFE - 8, MAX_SAFE + 8))
    if kind == 3:
        return int(fdp.ConsumeIntInRange(-(1 << 62), 1 << 62))
    return int(fdp.ConsumeIntInRange(0, 1 << 40))


def _seq_value(fdp: Any) -> list[Any]:
    out: list[Any] = []
    for _ in range(fdp.ConsumeIntInRange(0, 64)):
        if fdp.ConsumeBool():
            out.append(_int(fdp))
        else:
            a = _int(fdp)
            out.append([a, a + fdp.ConsumeIntInRange(-2, 1 << 40) if fdp.ConsumeBool() else _int(fdp)])
    if fdp.ConsumeBool() and out:  # the shape: one range repeated
        out = out[:1] * fdp.ConsumeIntInRange(1, 10_000)
    return out


def check_seqs(value: Any, own_seq: int, allow_empty: bool, allow_ranges: bool) -> None:
    try:
        seqs = decode_seq_set(value, own_seq, allow_empty, allow_ranges)
    except SeqRangeError:
        return
    assert isinstance(value, list)
    # held as ranges: never more pairs than the line has elements
    assert len(seqs.starts) == len(seqs.ends) <= len(value)
    assert all(s <= e for s, e in zip(seqs.starts, seqs.ends, strict=True))
    assert all(e < s for e, s in zip(seqs.ends, seqs.starts[1:], strict=False))
    if seqs.starts:
        assert seqs.starts[0] >= 0 and seqs.ends[-1] < own_seq
    size = len(seqs)
    assert size <= max(own_seq, 0)  # an empty list is valid whatever own_seq
    if size <= _EXPAND:
        expanded = decode_seqs(value, own_seq, allow_empty, allow_ranges)
        assert sorted(expanded) == list(seqs) and len(set(expanded)) == len(expanded) == size
        members = set(expanded)
        for probe in {
            *(expanded[:8]),
            *(s - 1 for s in seqs.starts[:8]),
            *(e + 1 for e in seqs.ends[:8]),
            own_seq,
        }:
            assert (probe in seqs) == (probe in members), probe


def _row_value(fdp: Any) -> dict[str, Any]:
    tag = _TAGS[fdp.ConsumeIntInRange(0, 2)]
    n = (
        fdp.ConsumeIntInRange(0, 100_000)
        if fdp.ConsumeIntInRange(0, 15) == 0
        else fdp.ConsumeIntInRange(0, 8)
    )
    member = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 3)) or "x"
    members: list[Any] = [member] * n
    dt: list[Any] = [fdp.ConsumeIntInRange(-(1 << 20), 1 << 20)] * max(
        0, n - 1 + fdp.ConsumeIntInRange(-1, 1)
    )
    data: dict[str, Any] = {"turn": _int(fdp), "step": _int(fdp), "index": _int(fdp), "dt": dt}
    if tag == "tool-call-chunks":
        data["id"] = fdp.ConsumeUnicodeNoSurrogates(4)
        data["args"] = members
        if fdp.ConsumeBool():
            data["name"] = fdp.ConsumeUnicodeNoSurrogates(4)
    else:
        data["texts"] = members
    row: dict[str, Any] = {"type": tag, "seq0": _int(fdp), "time0": _int(fdp), "data": data}
    if fdp.ConsumeIntInRange(0, 15) == 0:
        row["extra"] = 1
    return row


def check_row(row: Any) -> None:
    if not isinstance(row, dict) or row.get("type") not in _TAGS:
        return
    try:
        events = expand_row(row)
    except RowError:
        return
    except (KeyError, TypeError):
        if row.keys() == {"type", "seq0", "time0", "data"}:
            raise
        return
    data = row["data"]
    members = data.get("texts", data.get("args"))
    assert len(events) == len(members) and events.seq0 == row["seq0"]
    assert events.last_seq == row["seq0"] + len(members) - 1 <= MAX_SAFE
    time = row["time0"]
    for k, event in enumerate(islice(events, 64)):
        if k:
            time += data["dt"][k - 1]
        assert event["seq"] == row["seq0"] + k and event["time"] == time
        chunk = event["data"]["chunk"]
        assert chunk.get("text", chunk.get("argumentsDelta")) == members[k]
    assert events[-1] == events[len(events) - 1]  # random access builds one event
    if len(events) <= 64:
        assert list(events) == [events[k] for k in range(len(events))]


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    if mode == 0:  # JSON text, as a log line holds it
        try:
            value = orjson.loads(fdp.ConsumeBytes(fdp.remaining_bytes()))
        except orjson.JSONDecodeError:
            return
        if isinstance(value, dict):
            check_row(value)
            seq = value.get("seq")
            if type(seq) is int:
                check_seqs(value.get("sourceEventSeqs"), seq, bool(seq % 2), seq % 3 != 0)
        elif isinstance(value, list):
            check_seqs(value, 1 << 20, True, True)
    elif mode == 1:
        own = _int(fdp)
        check_seqs(_seq_value(fdp), own, fdp.ConsumeBool(), fdp.ConsumeBool())
    else:
        check_row(_row_value(fdp))


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
