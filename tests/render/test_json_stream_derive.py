"""What derive streams (issue 11 item 1, a Claude run of interrupted results): a message doc with
``Closers`` in it (under a dict key or in a list) written by ``compact_pieces`` is, byte for
byte, ``jsonline.dumps`` of the doc held as lists (one JSONL line), and by ``pretty_pieces`` with
``ascii_only`` what ``dumps_pretty_ascii`` gives; ``closer_list.swapped``, ``walked`` and
``walked_encodable`` answer as for the held doc; the redactor maps itself onto a ``Closers``."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.closer_list import Closers, swapped, walked, walked_encodable
from sesstool.core.jsonline import dumps, dumps_pretty_ascii, encodable
from sesstool.core.redact import Redactor
from sesstool.render import json_stream
from sesstool.render.json_stream import compact_pieces, pretty_pieces
from tests.render.test_json_stream import members


def held(doc: Any) -> Any:
    """The doc with each ``Closers`` as the list it stands for (tuples as lists)."""
    if isinstance(doc, Closers | list | tuple):
        return [held(item) for item in doc]
    if isinstance(doc, dict):
        return {key: held(value) for key, value in doc.items()}
    return doc


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> Any:
    kind = draw(
        st.sampled_from(["dict", "list", "closers", "member"] if depth < 3 else ["closers", "member"])
    )
    if kind == "closers":
        return Closers.of(draw(st.lists(members, max_size=6)))
    if kind == "member":
        return draw(members)
    children = draw(st.lists(documents(depth + 1), max_size=4))
    if kind == "list":
        return children
    keys = draw(st.lists(st.text(max_size=5), min_size=len(children), max_size=len(children), unique=True))
    return dict(zip(keys, children, strict=True))


@given(documents().map(lambda d: {"role": "user", "content": d, "origin": "resume"}))
def test_compact_pieces_are_the_held_line(doc: dict[str, Any]) -> None:
    assert b"".join(compact_pieces(doc)) == dumps(held(doc))


@given(documents().map(lambda d: {"content": d}))
def test_ascii_pretty_pieces_are_the_held_ascii_dump(doc: dict[str, Any]) -> None:
    assert b"".join(pretty_pieces(doc, ascii_only=True)) == dumps_pretty_ascii(held(doc))


@given(documents(), st.sampled_from(["\ud800", "a\udfffb"]))
def test_a_lone_surrogate_makes_the_whole_line_ascii(doc: Any, bad: str) -> None:
    for where in ("member", "head"):
        line: dict[str, Any] = {"content": doc}
        if where == "member":
            line["run"] = Closers.of([{"ok": 1}, {"text": bad}])
        else:
            line["run"] = Closers.of([{"ok": 1}])
            line["head"] = bad
        written = b"".join(compact_pieces(line))
        assert written == dumps(held(line)) and written.isascii()
        assert not walked_encodable(line) and walked_encodable({"content": doc}) == encodable(held(doc))


def _unswapped(value: Any, token: str, arrays: list[Any]) -> Any:
    if isinstance(value, str) and value.startswith(f"{token}-"):
        return held(arrays[int(value[len(token) + 1 :])])
    if isinstance(value, list):
        return [_unswapped(item, token, arrays) for item in value]
    if isinstance(value, dict):
        return {key: _unswapped(item, token, arrays) for key, item in value.items()}
    return value


@given(documents())
def test_swapped_puts_a_placeholder_for_each_closers_and_walked_walks_each_once(doc: Any) -> None:
    token = "\x00placeholder"
    arrays: list[Any] = []
    template = swapped(doc, token, arrays)
    assert not isinstance(template, Closers) and all(isinstance(a, Closers) for a in arrays)
    assert _unswapped(template, token, arrays) == held(doc)
    walks: list[int] = []

    def counted(value: Any) -> Any:
        if isinstance(value, Closers):
            items = list(value)
            n = len(walks)
            walks.append(0)

            def make() -> Any:
                walks[n] += 1
                return iter([counted(item) for item in items])

            return Closers(make, len(items))
        if isinstance(value, list):
            return [counted(item) for item in value]
        if isinstance(value, dict):
            return {key: counted(item) for key, item in value.items()}
        return value

    watched = counted(doc)
    walked(watched)
    assert walks == [1] * len(walks)


def test_compact_members_are_written_in_pieces_of_the_chunk_size(monkeypatch: Any) -> None:
    monkeypatch.setattr(json_stream, "_CHUNK", 64)
    rows = [{"n": n, "text": "x" * 20} for n in range(40)]
    doc = {"a": 1, "content": Closers.joined(({"t": 1},), Closers.of(rows), ()), "z": Closers.of([])}
    pieces = list(compact_pieces(doc))
    assert b"".join(pieces) == dumps(held(doc))
    member = len(b"," + dumps(rows[10]))
    assert max(map(len, pieces)) < 64 + 2 * member and len(pieces) > 40 * member // (64 + 2 * member)


def test_a_line_without_closers_is_one_dump() -> None:
    doc = {"role": "user", "content": [{"type": "text", "text": "\u00e9"}], "origin": "file"}
    assert list(compact_pieces(doc)) == [dumps(doc)]
    assert list(pretty_pieces(doc, ascii_only=True)) == [dumps_pretty_ascii(doc)]


def test_the_redactor_maps_itself_onto_a_closers_as_it_is_walked() -> None:
    secret = "sk-ant-api03-" + "A1b2C3d4" * 12
    made = 0

    def make() -> Any:
        nonlocal made
        made += 1
        return iter([{"id": secret}, {"id": "plain"}])

    redactor = Redactor()
    mapped = redactor.value({"content": Closers(make, 2)})["content"]
    assert isinstance(mapped, Closers) and len(mapped) == 2 and made == 0  # nothing walked yet
    first, again = list(mapped), list(mapped)
    assert first == again and first[1] == {"id": "plain"} and secret not in repr(first)
    assert "[REDACTED:" in first[0]["id"] and made == 2
    assert sum(n for _, n in redactor.counts().by_kind) == 1  # one value, one token, each walk
