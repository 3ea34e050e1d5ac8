"""What every match of a regular expression must contain: a gate that lets a scan skip a pattern
on a text it cannot match (``core.redact``: some 40 detector patterns a string, and almost every
string of a log matches none of them).

``needed(pattern)`` reads the tree ``re`` itself compiles the pattern from (CPython's
``re._parser``) and answers its *needs*: sets of strings such that every match holds one string
of each set. Sound by construction, never a guess: a run of literal characters in a sequence is
a need of the sequence; a group's needs are its contents'; an alternation needs the union of
one need of each branch (nothing, if a branch needs nothing: ``(?:_|-|)``); a repeat needs its
body's needs when it repeats at least once; anything else (classes, anchors, look-arounds,
back-references, a group with flags of its own) needs nothing known. ``gate(patterns)`` searches
a text for them: one pattern's best needs (the longest shortest string first) all, or, for
several patterns, one string of the union of each pattern's best need. A text the gate does not
find cannot match any of the patterns. When the parser is missing or refuses a pattern there is
no gate, which only costs time."""

from __future__ import annotations

import functools
import importlib
import re
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

try:  # CPython 3.11+: the parser re compiles from (private, hence guarded)
    _parser: Any = importlib.import_module("re._parser")
    _c: Any = importlib.import_module("re._constants")
except ImportError:  # pragma: no cover - another Python: no gates, the same finds
    _parser = None

Needed = frozenset[str]  # every match contains one of these
_MOST = 64  # strings in a need at most (past them a search costs more than it saves)
_SHORTEST = 2  # a need with a one-character string prunes almost nothing: not searched
_SEARCHES = 3  # needs of one pattern searched at most


def _score(need: Needed) -> tuple[int, int]:
    """Higher prunes more: the longer shortest string, then the fewer strings."""
    return min(map(len, need)), -len(need)


def _sequence(items: Iterable[tuple[Any, Any]]) -> list[Needed]:
    needs: list[Needed] = []
    run: list[str] = []
    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            needs.append(frozenset({"".join(run)}))
            run = []
        needs.extend(_item(op, av))
    if run:
        needs.append(frozenset({"".join(run)}))
    return needs


def _item(op: Any, av: Any) -> list[Needed]:
    if op is _c.SUBPATTERN:
        _, add_flags, del_flags, body = av
        return [] if add_flags or del_flags else _sequence(body)
    if op is _c.ATOMIC_GROUP:
        return _sequence(av)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        least, _, body = av
        return _sequence(body) if least >= 1 else []
    if op is _c.BRANCH:
        union: set[str] = set()
        for branch in av[1]:
            needs = _sequence(branch)
            if not needs:
                return []
            best: Needed = max(needs, key=_score)
            union |= best
        return [frozenset(union)] if len(union) <= _MOST else []
    return []


@functools.cache
def _tree(pattern: re.Pattern[str]) -> Any:
    """The tree ``re`` compiles ``pattern`` from, parsed once for its needs and its width
    (None: no parser here, or it refused)."""
    if _parser is None:
        return None  # pragma: no cover
    try:
        return _parser.parse(pattern.pattern, pattern.flags)
    except (re.error, TypeError, ValueError, RecursionError):  # pragma: no cover - re compiled it
        return None


def needed(pattern: re.Pattern[str]) -> list[Needed]:
    """Sets of strings every match of ``pattern`` holds one string of each, the best first
    (none: nothing known)."""
    tree = _tree(pattern)
    if tree is None:
        return []  # pragma: no cover
    return sorted(set(_sequence(tree)), key=lambda need: (_score(need), sorted(need)), reverse=True)


def shortest(pattern: re.Pattern[str]) -> int:
    """The fewest characters a match of ``pattern`` spans (``re``'s own count; look-arounds
    span none), 0 when unknown: a text shorter than that holds no match."""
    tree = _tree(pattern)
    return 0 if tree is None else int(tree.getwidth()[0])


class Gate:
    """Whether a text can hold a match: ``found(text)`` is False only when no pattern the gate
    was made for matches ``text``: some need of theirs is missing from it.

    Case-sensitive patterns: a need is one alternation of its strings, searched in the text.
    Case-insensitive ones are searched without ``re.IGNORECASE``, whose alternations ``re`` tries
    position by position (~13 times slower here than the text's ``lower()`` and a case-sensitive
    search): each character of a need stands for the characters ``re`` takes for it
    (``_equivalents``, found by asking ``re``, so its folding is the gate's), and the strings are
    searched, each character written as its class's ``target``, in the text's ``lower()``: what
    a matched character lowers to. A text holding one of the few characters ``lower()`` does not
    take to their target (``ſ`` for ``s``, ``ı`` and ``İ`` for ``i``) is folded exactly
    instead, character by character (``str.translate``)."""

    def __init__(self, needs: Sequence[Needed], flags: int) -> None:
        self._folding = bool(flags & re.IGNORECASE)
        self._exact: dict[int, str] = {}  # every character re takes for one of a need's -> target
        special: set[str] = set()  # those lower() does not take to it
        target: dict[str, str] = {}
        if self._folding:
            for char in sorted({c for need in needs for s in need for c in s}):
                same = _equivalents(char, flags)
                to = min(c.lower() for c in same)
                target[char] = to
                for c in same:
                    self._exact[ord(c)] = to
                    if c.lower() != to:
                        special.add(c)
            needs = [frozenset("".join(target[c] for c in s) for s in need) for need in needs]
        self._special = (
            re.compile(f"[{''.join(map(re.escape, sorted(special)))}]").search if special else None
        )
        self._searches = tuple(re.compile(_alternation(need)).search for need in needs)

    def found(self, text: str) -> bool:
        if self._folding:
            exactly = self._special is not None and self._special(text) is not None
            text = text.translate(self._exact) if exactly else _lower(text)
        return all(search(text) is not None for search in self._searches)


@functools.lru_cache(maxsize=1)
def _lower(text: str) -> str:
    """``text.lower()``, made once for the gates of every pattern a text is tried with; kept
    until ``forget`` (a text may be long: nothing should hold it past its scan)."""
    return text.lower()


def forget() -> None:
    """Drop the text the gates last folded, and its folded copy."""
    _lower.cache_clear()


def _alternation(strings: frozenset[str]) -> str:
    return "|".join(map(re.escape, sorted(strings, key=lambda s: (-len(s), s))))


_CHUNK = 1 << 16  # code points asked of re at a time (a 256 KiB string, then dropped)


def _non_ascii() -> Iterator[str]:
    """Every code point past ASCII but the surrogates, ``_CHUNK`` of them a string."""
    codec = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"
    for first, end in ((0x80, 0xD800), (0xE000, 0x110000)):
        for start in range(first, end, _CHUNK):
            yield array("I", range(start, min(start + _CHUNK, end))).tobytes().decode(codec)


def _equivalents(char: str, flags: int) -> frozenset[str]:
    """The characters ``re`` matches ``char`` with under ``flags`` (``IGNORECASE``, perhaps
    ``ASCII``): asked of ``re`` over every code point, not derived from a case table. One scan
    answers every ASCII character (what the detectors' strings are made of), one more each
    character past ASCII (``ñ``), each once a process."""
    return _ascii_equivalents(flags)[char] if char.isascii() else _scan(frozenset(char), flags)[char]


@functools.cache
def _ascii_equivalents(flags: int) -> dict[str, frozenset[str]]:
    return _scan(frozenset(map(chr, range(0x80))), flags)


@functools.cache
def _scan(chars: frozenset[str], flags: int) -> dict[str, frozenset[str]]:
    """For each of ``chars``, the characters ``re`` matches it with under ``flags`` (~30 ms)."""
    candidates = set(map(chr, range(0x80)))
    any_of = re.compile(f"[{''.join(map(re.escape, sorted(chars)))}]", flags)
    for chunk in _non_ascii():
        candidates.update(m.group() for m in any_of.finditer(chunk))
    found: dict[str, frozenset[str]] = {}
    for char in chars:
        fullmatch = re.compile(re.escape(char), flags).fullmatch
        found[char] = frozenset(c for c in candidates if fullmatch(c))
    return found


def gate(patterns: Sequence[re.Pattern[str]]) -> Gate | None:
    """A gate for ``patterns`` (None: nothing worth searching for is known of one of them).
    Case-insensitive if any of them is (a case-sensitive match is a case-insensitive one too),
    ASCII-only folding only if every one folds so."""
    bests = [[need for need in needed(p) if _score(need)[0] >= _SHORTEST] for p in patterns]
    if not bests or not all(bests):
        return None
    if len(bests) == 1:
        needs = bests[0][:_SEARCHES]
    else:
        union = frozenset(s for best in bests for s in best[0])
        if len(union) > _MOST:
            return None
        needs = [union]
    flags = 0
    if any(p.flags & re.IGNORECASE for p in patterns):
        flags |= re.IGNORECASE
        if all(p.flags & re.ASCII for p in patterns):
            flags |= re.ASCII
    return Gate(needs, flags)
