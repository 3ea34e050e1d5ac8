"""The scanner's fast path (issue 14): the common well-formed record in the fewest steps, every
other record fed alone through the exact loop (``Scanner._run``), so findings and addresses are
the exact scanner's.

A record takes the fast path only when the exact loop would find nothing in its envelope (§3):
a dict whose seq is the expected one (an int, not past ``--at``), whose time is a safe integer
not below the last one, with exactly ``type, seq, time, data`` — or, on a surface-eligible type,
those four plus ``surfaceOp`` / ``sourceEventSeqs`` — and a string type. Then:

* an ``assistant/chunk`` of a profile with inline chunks that names the open turn and step is
  counted (the exact loop's inline rule, §6.2);
* a type the exact loop only counts (``envelope.count_only``: a known log-only type seen
  before) is counted;
* a type in the profile's ``fast`` table is offered to its fast handler, which either handles it
  exactly as the type's handler would — changing the same state, reporting nothing — and
  returns True, or returns False having touched nothing.

Anything else (a refusal, a rare type, any irregularity) goes to ``Scanner._run`` alone, at its
own line index, with the expected seq and last time written back first. The differential test
(``tests/core/test_fast_scan.py``) compares both paths on every fixture and on mutated lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sesstool.core.envelope import SURFACE_ENVELOPE, count_only
from sesstool.core.header import MAX_SAFE
from sesstool.core.profile import Profile

_CHUNK = "assistant/chunk"
# markers in the scanner's dispatch table (``table``) besides fast handlers
_INLINE_CHUNK = "inline chunk"  # the exact loop's inline chunk rule
_COUNTED = "counted"  # envelope.count_only: counting is all the exact loop does
_UNSEEN = "unseen"  # not in the table (yet): the exact loop, unless it is counted by now
_EXACT = "exact"  # the exact loop


def table(profile: Profile, timeline: bool, messages: bool) -> dict[str, Any]:
    """The fast loop's dispatch table of a scanner installing ``profile``: no fast handler when
    a timeline or the messages are collected (they do not add entries or keep messages)."""
    found: dict[str, Any] = {} if timeline or messages else dict(profile.fast)
    if profile.inline_chunks:
        found[_CHUNK] = _INLINE_CHUNK
    return found


def run(sc: Any, objs: Iterable[Any]) -> None:
    """Envelope and dispatch of decoded records for the ``core.scanner.Scanner`` ``sc`` (the
    exact loop's contract: ``_i`` is the index of the last record taken; stops early when
    ``halt`` is raised)."""
    i, nxt, last, at = sc._i, sc.next_seq, sc.last_time, sc.at
    state = sc.state
    rel = state.rel
    counts: dict[Any, int] = state.stats.counts
    fast: dict[Any, Any] = sc.fast
    surface = sc.profile.surface if sc.profile is not None else frozenset()
    open_turn, open_step = rel.open_turn, rel.open_step
    chunks = 0
    try:
        for obj in objs:
            i += 1
            try:  # a non-object record or an unhashable type: TypeError
                seq, t, time, data = obj["seq"], obj["type"], obj["time"], obj["data"]
                handler = fast.get(t, _UNSEEN)
            except (KeyError, TypeError):
                handler = _EXACT
            else:
                if (
                    seq != nxt
                    or type(seq) is not int
                    or seq > at
                    or type(time) is not int
                    or not last <= time <= MAX_SAFE
                    or (len(obj) != 4 and not (t in surface and obj.keys() <= SURFACE_ENVELOPE))
                ):
                    handler = _EXACT
                elif handler is _UNSEEN and sc.handlers.get(t) is count_only:
                    handler = fast[t] = _COUNTED
            if handler is _INLINE_CHUNK:
                try:
                    named_open = data["turn"] == open_turn and data["step"] == open_step
                except (KeyError, TypeError, IndexError):
                    named_open = False
                if named_open and open_step is not None:
                    chunks += 1
                    nxt, last = seq + 1, time
                    continue
            elif handler is _COUNTED:
                counts[t] = counts.get(t, 0) + 1
                nxt, last = seq + 1, time
                continue
            elif type(handler) is not str and handler(state, obj, seq, data):
                counts[t] = counts.get(t, 0) + 1
                nxt, last = seq + 1, time
                open_turn, open_step = rel.open_turn, rel.open_step
                continue
            # the exact loop, for this record alone
            sc._i, sc.next_seq, sc.last_time = i - 1, nxt, last
            sc._run((obj,))
            i, nxt, last = sc._i, sc.next_seq, sc.last_time
            open_turn, open_step = rel.open_turn, rel.open_step
            if sc.halt:
                return
    finally:
        sc._i, sc.next_seq, sc.last_time = i, nxt, last
        if chunks:
            counts[_CHUNK] = counts.get(_CHUNK, 0) + chunks
