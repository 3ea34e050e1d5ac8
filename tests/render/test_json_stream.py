"""``render.json_stream.pretty_pieces``: a document with ``Closers`` streamed into it is, byte
for byte, ``dumps_pretty`` of the same document with those arrays held as lists (issue 11 item 1)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.closer_list import Closers
from sesstool.core.jsonline import dumps_pretty
from sesstool.render import json_stream
from sesstool.render.json_stream import _members, array, compact_pieces, pretty_pieces

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.text(max_size=8),
    st.floats(allow_nan=False, allow_infinity=False),
)
members = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


def held(doc: Any) -> Any:
    """The document with each ``Closers`` as the list it stands for."""
    if isinstance(doc, Closers):
        return list(doc)
    if isinstance(doc, dict):
        return {key: held(value) for key, value in doc.items()}
    return doc


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key in draw(st.lists(st.text(max_size=5), max_size=4, unique=True)):
        kind = draw(st.sampled_from(["member", "closers", "nested"] if depth < 3 else ["member", "closers"]))
        if kind == "closers":
            doc[key] = Closers.of(draw(st.lists(members, max_size=6)))
        elif kind == "nested":
            doc[key] = draw(documents(depth + 1))
        else:
            doc[key] = draw(members)
    return doc


@given(documents())
def test_pieces_are_the_held_dump(doc: dict[str, Any]) -> None:
    pieces = list(pretty_pieces(doc))
    assert b"".join(pieces) == dumps_pretty(held(doc))


@given(documents(), st.sampled_from(["\ud800", "a\udfffb"]))
def test_a_lone_surrogate_anywhere_makes_the_whole_document_ascii(doc: dict[str, Any], bad: str) -> None:
    for where in ("member", "head"):
        copy = dict(doc)
        if where == "member":
            copy["\x00streamed"] = Closers.of([{"ok": 1}, {"text": bad}])
        else:
            copy["\x00streamed"] = Closers.of([{"ok": 1}])
            copy["\x00head"] = bad
        assert b"".join(pretty_pieces(copy)) == dumps_pretty(held(copy))
        assert b"".join(pretty_pieces(copy)).isascii()


def test_members_are_written_in_pieces_of_the_chunk_size(monkeypatch: Any) -> None:
    monkeypatch.setattr(json_stream, "_CHUNK", 64)
    rows = [{"n": n, "text": "x" * 20} for n in range(40)]
    doc = {"a": 1, "closers": Closers.of(rows), "z": {"inner": Closers.of(rows[:3]), "empty": Closers.of([])}}
    pieces = list(pretty_pieces(doc))
    assert b"".join(pieces) == dumps_pretty(held(doc))
    member = len(b',\n    {\n      "n": 10,\n      "text": "' + b"x" * 20 + b'"\n    }')
    # bounded: no piece holds more than one chunk plus one member and the array's closing
    assert max(map(len, pieces)) < 64 + 2 * member
    assert len(pieces) > 40 * member // (64 + 2 * member)


def test_a_document_without_closers_is_one_dump_and_array_keeps_closers() -> None:
    doc = {"b": [1, 2], "a": {"c": None}}
    assert list(pretty_pieces(doc)) == [dumps_pretty(doc)]
    closers = Closers.of([1])
    assert array(closers) is closers
    assert array((1, 2)) == [1, 2] and isinstance(array((1, 2)), list)


def test_a_piece_of_members_closes_at_the_first_member_that_reaches_the_chunk(monkeypatch: Any) -> None:
    rows = [{"n": n} for n in range(10, 40)]  # the first member's piece has no comma: one byte less
    width = len(b",\n    " + orjson_compact(rows[0]))
    # (chunk, members in the first piece, in each later one but the last)
    for chunk, first, later in ((3 * width - 1, 3, 3), (3 * width, 4, 3), (3 * width + 1, 4, 4)):
        monkeypatch.setattr(json_stream, "_CHUNK", chunk)
        pieces = list(_members(rows, orjson_compact, 2))
        counts = [piece.count(b'{"n":') for piece in pieces]
        assert counts[0] == first and set(counts[1:-1]) == {later}, (chunk, counts)
        assert sum(counts) == len(rows) and counts[-1] <= later
        assert b"".join(pieces).startswith(b"[\n    ") and b"".join(pieces).endswith(b"\n  ]")


def test_the_real_chunk_is_64_kib_of_members() -> None:
    rows = [{"n": n, "text": "y" * 90} for n in range(3_000)]  # about 330 KB of members
    pieces = list(_members(rows, orjson_compact, 2))
    member = max(len(b",\n    " + orjson_compact(row)) for row in rows)
    assert all(64 * 1024 <= len(piece) < 64 * 1024 + member + 1 for piece in pieces[:-1])
    assert len(pieces[-1]) < 64 * 1024 + member + 8


def orjson_compact(member: Any) -> bytes:
    import orjson

    return orjson.dumps(member)


def test_a_member_of_a_chunk_or_more_is_a_write_of_its_own(monkeypatch: Any) -> None:
    """A member whose dump reaches the chunk is written as its dump, after what was held and
    not joined to it (a Claude span of one 16 MiB prompt was copied twice more: derive of a
    transcript ending in one held 33 MiB more than of the same prompt earlier, stop 35)."""
    monkeypatch.setattr(json_stream, "_CHUNK", 64)
    rows = [{"n": 1}, {"t": "x" * 200}, {"n": 2}, {"t": "y" * 300}]
    for pieces, big in (
        (list(_members(rows, orjson_compact, 2)), [orjson_compact(rows[1]), orjson_compact(rows[3])]),
        (list(compact_pieces({"c": Closers.of(rows)})), [orjson_compact(rows[1]), orjson_compact(rows[3])]),
    ):
        assert all(any(piece == member for piece in pieces) for member in big), pieces
    assert (
        b"".join(_members(rows, orjson_compact, 2))
        == b"[" + b",".join(b"\n    " + orjson_compact(row) for row in rows) + b"\n  ]"
    )
    assert b"".join(compact_pieces({"c": Closers.of(rows)})) == orjson_compact({"c": rows})
