"""Entry timestamps kept as integers, one word per graph entry (spec agent-formats §1.7; issue 11:
nothing of an entry held as text).

The CLI compares ``timestamp`` values as strings (2.1.332's bridge over a missing parent,
``entry_graph.EntryGraph.bridge``). What it writes is always ``Date.toISOString()``:
``YYYY-MM-DDTHH:MM:SS.mmmZ``, fixed width, so the 17 digits read as one integer order those
strings exactly as the strings themselves order. Any other string is rare (a hand-edited or
foreign line): it is marked ``ODD`` and its text held aside by the graph; an entry without a
string timestamp is ``NONE`` (the CLI's comparisons with ``undefined`` are all false).
"""

from __future__ import annotations

import re

NONE, ODD = -1, -2
_CANONICAL = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z")


def stamp_key(stamp: object) -> int:
    """The integer a canonical timestamp reads as; ``NONE`` or ``ODD`` otherwise."""
    if not isinstance(stamp, str):
        return NONE
    found = _CANONICAL.fullmatch(stamp)
    return int("".join(found.groups())) if found is not None else ODD


def stamp_text(key: int) -> str:
    """The canonical timestamp ``stamp_key`` read as ``key`` (``key`` >= 0)."""
    d = f"{key:017d}"
    return f"{d[:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:]}Z"
