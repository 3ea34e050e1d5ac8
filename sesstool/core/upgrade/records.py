"""Physical records ↔ the logical events a step works on (spec §3, §9.3, §9.4, §2.1).

Decoding expands packed chunk rows and range-encoded ``sourceEventSeqs``; encoding writes one
event per line in the harness's key order, range-encodes ``sourceEventSeqs`` from v2 on, and
copies untouched records byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import pairwise
from typing import Any

from sesstool.core.chunk_rows import expand_row
from sesstool.core.jsonline import dumps, loads
from sesstool.core.seq_ranges import decode_seqs
from sesstool.core.upgrade import Rec
from sesstool.core.vocabulary import PACKED_TAGS

HEADER_ORDER = (
    "type",
    "version",
    "id",
    "createdAt",
    "cwd",
    "parentSession",
    "seedLength",
    "isSeeded",
    "origin",
    "delegationDepth",
    "agentPreset",
)
EVENT_ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")
_SURFACE_FIRST = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable")


def decode_records(lines: Iterable[bytes]) -> Iterator[Rec]:
    """Body lines (already validated by a scan) → records with their original bytes."""
    for raw in lines:
        obj = loads(raw)
        if obj.get("type") in PACKED_TAGS and "seq0" in obj:
            yield Rec(expand_row(obj), raw)
            continue
        src = obj.get("sourceEventSeqs")
        if isinstance(src, list) and any(isinstance(v, list) for v in src):
            obj["sourceEventSeqs"] = decode_seqs(src, obj["seq"], True)
        yield Rec([obj], raw)


def range_encode(seqs: list[int]) -> list[Any]:
    """§9.4: in a strictly increasing list, runs of ≥3 consecutive seqs become [start, end]."""
    if any(b <= a for a, b in pairwise(seqs)):
        return list(seqs)
    out: list[Any] = []
    i = 0
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i + 1 >= 3:
            out.append([seqs[i], seqs[j]])
        else:
            out.extend(seqs[i : j + 1])
        i = j + 1
    return out


def ordered(obj: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """Known keys in the writer's order, then any others in their original order."""
    out = {k: obj[k] for k in order if k in obj}
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


def encode_header(header: dict[str, Any]) -> bytes:
    return dumps(ordered(header, HEADER_ORDER)) + b"\n"


def released_envelope(event: dict[str, Any]) -> dict[str, Any]:
    """The event as the released v0/v1 codecs decode it: an envelope written ``surfaceOp``
    before ``sourceEventSeqs`` (the rc.8 library's repair closers are) comes out in the writer's
    order, so a migration re-encodes it so (the same object when already in that order)."""
    if "surfaceOp" in event and "sourceEventSeqs" in event:
        keys = list(event)
        if keys.index("surfaceOp") < keys.index("sourceEventSeqs"):
            return ordered(event, EVENT_ORDER)
    return event


def _event_order(event: dict[str, Any], version: int) -> tuple[str, ...]:
    """The writer's envelope order (§3). From v3 on, ``surfaceOp`` and ``sourceEventSeqs`` keep
    the order the event has: the v2-to-v3 package's encoders keep object key order and its
    synthetic replacing ``system/message`` puts ``surfaceOp`` first (§13.A item 2), whereas the
    released v0/v1 decoders rebuild every envelope in the writer's order (a v0 record written
    ``surfaceOp`` first comes out of v0→v2 with ``sourceEventSeqs`` first)."""
    keys = list(event)
    both = version >= 3 and "surfaceOp" in event and "sourceEventSeqs" in event
    if both and keys.index("surfaceOp") < keys.index("sourceEventSeqs"):
        return _SURFACE_FIRST
    return EVENT_ORDER


def _in_order(order: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """Every key sequence that ``ordered(obj, order)`` leaves as it is: the keys of ``order``
    in its order, any subset of them (an envelope holds ``type, seq, time, data`` and some of
    the rest)."""
    out: set[tuple[str, ...]] = set()
    for mask in range(1 << len(order)):
        out.add(tuple(k for i, k in enumerate(order) if mask >> i & 1))
    return frozenset(out)


_IN_EVENT_ORDER = _in_order(EVENT_ORDER)


def encode_event(event: dict[str, Any], version: int) -> bytes:
    if version >= 2 and isinstance(event.get("sourceEventSeqs"), list):
        event = dict(event)
        event["sourceEventSeqs"] = range_encode(event["sourceEventSeqs"])
    elif tuple(event) in _IN_EVENT_ORDER:
        # the common event: already in the writer's order (``ordered`` would rebuild the same
        # dict; with both surfaceOp and sourceEventSeqs present the order is EVENT_ORDER's)
        return dumps(event) + b"\n"
    return dumps(ordered(event, _event_order(event, version))) + b"\n"


def encode_records(recs: Iterable[Rec], version: int) -> Iterator[bytes]:
    for rec in recs:
        if rec.raw is not None:
            yield rec.raw + b"\n"
        else:
            for event in rec.events:
                yield encode_event(event, version)
