"""A ``--json`` document written in pieces, with its closers streamed into place (issue 11 item 1).

``inspect``, ``repair`` and ``fork`` put the closers in their documents as they have them: a
``core.closer_list.Closers`` that makes its records as it is walked. ``pretty_pieces`` gives
the bytes ``dumps_pretty`` would give for the document with those arrays held as lists — the
same indentation and separators, byte for byte — but dumps the rest of the document with a
placeholder in each array's place and writes the array's members between the halves, one dump
per member: what is held is the document without its closers, and one closer. derive writes a
Claude message whose content is a ``Closers`` (a spilled run of interrupted results,
``dialects/claude/interrupted.py``) the same way: ``pretty_pieces`` for ``--format json``,
``compact_pieces`` (one JSONL line, ``jsonline.dumps``'s bytes) for JSONL. A
``core.joined_text.JoinedText`` in a document (the text of a Claude span's system message, its
parts spilled) is a ``Closers`` too, written in its place as the one JSON string it stands for:
each part and separator encoded by the document's own encoder, quotes stripped (both escape a
string one character at a time, so the pieces' escapes are the whole string's).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import orjson

from sesstool.core.closer_list import Closers, swapped
from sesstool.core.joined_text import JoinedText
from sesstool.core.jsonline import dumps, dumps_pretty, dumps_pretty_ascii, encodable

_CHUNK = 1 << 16  # bytes of members written at a time


def pretty_pieces(doc: dict[str, Any], ascii_only: bool = False) -> Iterator[bytes]:
    """``dumps_pretty(doc)`` (``ascii_only``: ``dumps_pretty_ascii(doc)``) with every
    ``Closers`` in it (a value of a dict, at any depth) as a list, in pieces. Like
    ``dumps_pretty``, the document falls back to ASCII escapes (the standard library) when
    orjson refuses any of it (a lone surrogate), a streamed member too: the members are checked
    in a first walk, which holds nothing."""
    first = dumps_pretty_ascii if ascii_only else _indent2
    whole, token, template, arrays = _streamed(doc, first, dumps_pretty)
    if whole is not None:
        yield whole
        return
    dump: Callable[[Any], bytes] = _indent2
    try:
        head = b"" if ascii_only else _indent2(template)
    except TypeError:
        head = b""
    if not head or not all(encodable(member) for array in arrays for member in array):
        dump, head = dumps_pretty_ascii, dumps_pretty_ascii(template)
    at = 0
    for n, array in enumerate(arrays):
        mark = f'"{token}-{n}"'.encode()
        found = head.index(mark, at)
        line = head[head.rfind(b"\n", 0, found) + 1 : found]
        yield head[at:found]
        if isinstance(array, JoinedText):
            yield from string_pieces(array, dump)
        else:
            yield from _members(array, dump, len(line) - len(line.lstrip(b" ")))
        at = found + len(mark)
    yield head[at:]


def compact_pieces(doc: dict[str, Any]) -> Iterator[bytes]:
    """``jsonline.dumps(doc)`` (one JSONL line, compact) with every ``Closers`` in it as a list,
    in pieces: orjson, or the standard library's ASCII escapes for the whole line when orjson
    refuses any of it (a first walk checks the members, holding nothing)."""
    whole, token, template, arrays = _streamed(doc, orjson.dumps, dumps)
    if whole is not None:
        yield whole
        return
    dump: Callable[[Any], bytes] = orjson.dumps
    if not encodable(template) or not all(encodable(member) for array in arrays for member in array):
        dump = _compact_ascii
    head = dump(template)
    at = 0
    for n, array in enumerate(arrays):
        mark = f'"{token}-{n}"'.encode()
        found = head.index(mark, at)
        yield head[at:found]
        if isinstance(array, JoinedText):
            yield from string_pieces(array, dump)
        else:
            yield from _chunked(b"[", _separated(map(dump, array), b"", b","))
        at = found + len(mark)
    yield head[at:]


def string_pieces(text: JoinedText, dump: Callable[[Any], bytes] = orjson.dumps) -> Iterator[bytes]:
    """``dump(str)`` of the text ``text`` stands for, in writes of about ``_CHUNK`` bytes: each
    piece dumped on its own, its quotes stripped (``dump``: orjson, compact or indented, or the
    standard library's ASCII escapes: a string is the same in all their layouts)."""
    return _chunked(b'"', (dump(piece)[1:-1] for piece in text.pieces()), b'"')


def _streamed(
    doc: dict[str, Any], dump: Callable[[Any], bytes], fallback: Callable[[Any], bytes]
) -> tuple[bytes | None, str, Any, list[Collection[Any]]]:
    """(the whole document, when nothing in it is streamed: ``dump(doc)``, or ``fallback(doc)``
    — the ASCII escapes — when ``dump`` refuses a document with no ``Closers``; else None, the
    placeholder token, the document with ``TOKEN-N`` in place of each ``Closers``, and those)."""
    try:
        return dump(doc), "", None, []
    except TypeError:  # a Closers in it, or for orjson a lone surrogate
        pass
    token = f"streamed-{secrets.token_hex(8)}"
    arrays: list[Collection[Any]] = []
    template = swapped(doc, token, arrays)
    if not arrays:
        return fallback(doc), "", None, []
    return None, token, template, arrays


def _compact_ascii(value: Any) -> bytes:
    import json  # the slow path only, as ``jsonline.dumps``

    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _chunked(start: bytes, pieces: Iterable[bytes], end: bytes = b"]") -> Iterator[bytes]:
    """``start``, the pieces and ``end``, joined into writes of about ``_CHUNK`` bytes (the
    pieces' bytes counted: a write closes at the first piece that brings them to ``_CHUNK``).
    A piece of ``_CHUNK`` bytes or more is a write of its own, after what was held: it is not
    copied into a join (a member holding a 16 MiB text would be held twice)."""
    held: list[bytes] = [start]
    size = 0
    for piece in pieces:
        if len(piece) >= _CHUNK:
            if held:
                yield b"".join(held)
            yield piece
            held, size = [], 0
            continue
        held.append(piece)
        size += len(piece)
        if size >= _CHUNK:
            yield b"".join(held)
            held, size = [], 0
    held.append(end)
    yield b"".join(held)


def _separated(bodies: Iterable[bytes], first: bytes, later: bytes) -> Iterator[bytes]:
    """Each body after its separator (``first`` before the first body, ``later`` before each
    other): one piece, or the separator and the body apart for a body of ``_CHUNK`` bytes or
    more (not copied again to join them)."""
    sep = first
    for body in bodies:
        if len(body) >= _CHUNK:
            if sep:
                yield sep
            yield body
        else:
            yield sep + body
        sep = later


def _indent2(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def _members(array: Collection[Any], dump: Callable[[Any], bytes], indent: int) -> Iterator[bytes]:
    """The array as the pretty dump nests it under a key indented by ``indent`` spaces."""
    if not array:
        yield b"[]"
        return
    pad = b"\n" + b" " * (indent + 2)
    bodies = (dump(member).replace(b"\n", pad) for member in array)
    yield from _chunked(b"[", _separated(bodies, pad, b"," + pad), b"\n" + b" " * indent + b"]")


def array(items: Collection[Any]) -> Any:
    """What a document holds for ``items``: a ``Closers`` as it is (``pretty_pieces`` streams
    it), anything else as a list (what the dialect already holds)."""
    return items if isinstance(items, Closers) else list(items)
