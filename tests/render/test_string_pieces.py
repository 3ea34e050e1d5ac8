"""A streamed text (``core.joined_text.JoinedText``: a Claude span's system message, its parts
spilled) is written by ``json_stream`` as the one JSON string it stands for, a piece at a time:
byte for byte ``orjson.dumps(separator.join(parts))`` (compact and indented alike), the standard
library's ASCII escapes for it when the document is written ASCII only, and — in a message
document — what ``jsonline.dumps``, ``dumps_pretty`` and ``dumps_pretty_ascii`` give for the
document with the text joined, lone surrogates included (the whole line falls back to the ASCII
escapes, as derive's ``unencodable`` says: ``walked_encodable``)."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.closer_list import walked_encodable
from sesstool.core.joined_text import JoinedText
from sesstool.core.jsonline import dumps, dumps_pretty, dumps_pretty_ascii, encodable
from sesstool.render import json_stream
from sesstool.render.json_stream import compact_pieces, pretty_pieces, string_pieces

_TRICKY = st.sampled_from(
    ['"', "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "\u2028", "\U0001f600", "`", "/", "<"]
)
_SURROGATE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])
parts_ok = st.lists(st.text(st.one_of(_TRICKY, st.characters(codec="utf-8"))), min_size=1, max_size=8)
parts_any = st.lists(
    st.text(st.one_of(_TRICKY, _SURROGATE, st.characters(exclude_categories=()))), min_size=1, max_size=8
)
separators = st.sampled_from(["\n\n", "\n", "\n--\n"])


def _joined(parts: list[str], separator: str = "\n\n") -> JoinedText:
    return JoinedText(lambda: iter(parts), len(parts), separator)


def _doc(text: Any) -> dict[str, Any]:
    return {"role": "system", "content": [{"type": "text", "text": text}], "origin": "file"}


@given(parts_ok, separators)
def test_a_streamed_string_is_orjsons_string(parts: list[str], separator: str) -> None:
    whole = separator.join(parts)
    text = _joined(parts, separator)
    assert b"".join(string_pieces(text)) == orjson.dumps(whole)
    indented = b"".join(string_pieces(text, lambda v: orjson.dumps(v, option=orjson.OPT_INDENT_2)))
    assert indented == orjson.dumps(whole)
    ascii_only = b"".join(string_pieces(text, lambda v: json.dumps(v, ensure_ascii=True).encode()))
    assert ascii_only == json.dumps(whole, ensure_ascii=True).encode()


@given(parts_any)
def test_a_document_with_a_streamed_text_is_written_as_held(parts: list[str]) -> None:
    """Lone surrogates included: orjson refuses the held text exactly when it refuses a part."""
    held, streamed = _doc("\n\n".join(parts)), _doc(_joined(parts))
    assert walked_encodable(streamed) == encodable(held)
    assert b"".join(compact_pieces(streamed)) == dumps(held)
    assert b"".join(pretty_pieces(streamed)) == dumps_pretty(held)
    assert b"".join(pretty_pieces(streamed, ascii_only=True)) == dumps_pretty_ascii(held)


def test_a_long_text_is_written_in_chunks() -> None:
    """Writes of about ``_CHUNK`` bytes, never the whole string at once."""
    parts = [f'note_{i} "quoted" \\ é' for i in range(20_000)]
    written = list(compact_pieces(_doc(_joined(parts))))
    assert b"".join(written) == dumps(_doc("\n\n".join(parts)))
    assert len(written) > 4
    assert max(map(len, written)) < 2 * json_stream._CHUNK


def test_an_empty_part_and_a_single_part() -> None:
    for parts in ([""], ["", ""], ["only"], ["a", "", "b"]):
        assert b"".join(compact_pieces(_doc(_joined(parts)))) == dumps(_doc("\n\n".join(parts)))
