"""``core.joined_text.JoinedText`` (issue 11 item 1: a Claude span's system message, its texts
spilled): the text it stands for, walked a part at a time; and how each reader of a derived
message takes it — the redactor (whole up to ``redact.WHOLE_AT`` characters: the held text's
tokens; part by part past them), the report's ``transcript.bounded`` (its first characters, the
rest counted: the held text's page), the Markdown transcript and the text view (the held text's
bytes, a part at a time)."""

from __future__ import annotations

import io
import itertools
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from sesstool.core import redact
from sesstool.core.closer_list import walked
from sesstool.core.joined_text import JoinedText
from sesstool.core.redact import Redactor
from sesstool.core.transcript import bounded
from sesstool.render import derive_markdown, derive_view
from sesstool.render.escape import safe

_KEY = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
    "-----END PRIVATE KEY-----"
)
_AWS = "AKIAIOSFODNN7EXAMPLE"
_BITS = [
    "`",
    "```",
    "::set-output",
    "  ::x",
    "##[group]",
    "\r",
    "\x1b[31m",
    "\u202e",
    "é",
    "\ud800",
    "a",
    " ",
    "\n",
]
_PART = st.lists(st.sampled_from(_BITS), max_size=12).map("".join)
texts = st.lists(_PART, min_size=1, max_size=6)


def _joined(parts: list[str], separator: str = "\n\n") -> JoinedText:
    return JoinedText(lambda: iter(parts), len(parts), separator)


def _message(text: Any) -> dict[str, Any]:
    return {"role": "system", "content": [{"type": "text", "text": text}], "origin": "file"}


def test_the_text_it_stands_for() -> None:
    text = _joined(["ab", "", "c\n"])
    assert len(text) == 3 and list(text) == ["ab", "", "c\n"]
    assert list(text.pieces()) == ["ab", "\n\n", "", "\n\n", "c\n"]
    assert text == "ab\n\n\n\nc\n" and text != "ab\n\n\n\nc" and text != "ab\n\n\n\nc\n!"
    assert text == _joined(["ab\n\n", "\nc\n"], "\n") and text != _joined(["ab"])
    assert text.chars() == len("ab\n\n\n\nc\n")
    assert [text.head(n) for n in (0, 1, 3, 7, 99)] == ["", "a", "ab\n", "ab\n\n\n\nc", "ab\n\n\n\nc\n"]
    assert text.whole(7) is None and text.whole(8) == "ab\n\n\n\nc\n"
    assert text.between() == [""] and _joined(["a"], "\n").between() == []
    assert text.each(str.upper) == "AB\n\n\n\nC\n"
    with pytest.raises(ValueError, match="whole lines"):
        JoinedText(lambda: iter(()), 0, ", ")


def test_spooled_by_reference() -> None:
    """derive's JSON spool of system messages (``engine.derive.pickled``) keeps a streamed text
    by reference, never its characters; loaded back, it is the same object; a plain pickle of
    one is refused rather than silently copied."""
    from sesstool.engine.derive import pickled, unpickled

    text = _joined(["x" * 100_000, "y"])
    texts: list[JoinedText] = []
    blob = pickled(_message(text), texts)
    assert len(blob) < 1_000 and texts == [text] and texts[0] is text
    again = unpickled(blob, texts)
    assert again["content"][0]["text"] is text and again == _message(text)
    assert unpickled(pickled({"plain": "text"}, texts), texts) == {"plain": "text"} and len(texts) == 1
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(_message(text), pickle.HIGHEST_PROTOCOL)


def test_redacted_whole_up_to_the_limit() -> None:
    """A key's armour across two parts, a value in one part found again in another: the held
    text's redaction, token for token."""
    parts = [_KEY[:40], _KEY[40:] + f" {_AWS}", f"again {_AWS}", "aws_key = 'AKIAIOSFODNN7EXAMPL2'"]
    held, streamed = Redactor(), Redactor()
    expected = held.text("\n\n".join(parts))
    got = streamed.value(_message(_joined(parts)))
    assert got == _message(expected) and isinstance(got["content"][0]["text"], str)
    assert streamed.counts() == held.counts()


def test_redacted_part_by_part_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each part as a text of its own, as it is walked (the tokens the same on every walk):
    what a value within a part gets is the held text's; a pattern across a separator is not
    found (docs/format.md "Memory")."""
    monkeypatch.setattr(redact, "WHOLE_AT", 10)
    parts = [f"first {_AWS}", "plain", f"again {_AWS}"]
    held, streamed = Redactor(), Redactor()
    expected = held.text("\n\n".join(parts))
    got = streamed.value(_message(_joined(parts)))
    walked(got)
    assert isinstance(got["content"][0]["text"], JoinedText)
    assert got == _message(expected) and streamed.counts().by_kind == held.counts().by_kind
    assert got == _message(expected)  # walked again: the same tokens
    across = Redactor().value(_joined([_KEY[:40], _KEY[40:]]))
    assert "PRIVATE KEY" in "".join(across.pieces())  # the armour spans the separator: not found


def test_the_report_shows_the_first_characters() -> None:
    parts = [f"note_{i}" for i in range(1_000)]
    for limit in (0, 5, 7, 8, 100, 20_000):
        held = bounded(_message("\n\n".join(parts)), limit)
        streamed = bounded(_message(_joined(parts)), limit)
        assert streamed == held, limit
    assert bounded(_message(_joined(parts)), None) == bounded(_message("\n\n".join(parts)), None)


@given(texts)
def test_markdown_writes_the_held_texts_bytes(parts: list[str]) -> None:
    out = io.StringIO()
    derive_markdown._streamed(_joined(parts), out)
    assert out.getvalue() == derive_markdown.fenced(safe("\n\n".join(parts)), "text")


@given(texts)
def test_the_text_view_prints_the_held_texts_lines(parts: list[str]) -> None:
    def printed(text: Any) -> str:
        out = io.StringIO()
        console = Console(file=out, width=40, color_system=None)
        for line in derive_view._blocks([{"type": "text", "text": text}]):
            console.print(Text("  " + safe(line).replace("\n", "\n  ")))
        return out.getvalue()

    assert printed(_joined(parts)) == printed("\n\n".join(parts))


_LINES = st.lists(st.text(alphabet="ab", max_size=3), min_size=1, max_size=8)


@st.composite
def _groupings(draw: st.DrawFn, lines: list[str]) -> JoinedText:
    """``"\\n".join(lines)`` as a JoinedText of runs of the lines (its part boundaries drawn)."""
    cuts = sorted(draw(st.sets(st.integers(1, len(lines) - 1))) if len(lines) > 1 else set())
    bounds = [0, *cuts, len(lines)]
    return _joined(["\n".join(lines[s:e]) for s, e in itertools.pairwise(bounds)], "\n")


@given(st.data(), _LINES, _LINES)
def test_equal_exactly_when_the_texts_are(data: st.DataObject, lines: list[str], others: list[str]) -> None:
    """Compared piece by piece whatever the part boundaries of either side: equal to the same
    text cut elsewhere (or not cut), unequal to any other text."""
    text = "\n".join(lines)
    for other in (lines, others):
        expected = "\n".join(other) == text
        left, right = data.draw(_groupings(lines)), data.draw(_groupings(other))
        assert (left == right) == expected and (right == left) == expected
        assert (left == "\n".join(other)) == expected and ("\n".join(other) == left) == expected
        assert (_joined([text, ""]) == "\n".join(other) + "\n\n") == expected  # an empty last part
        assert (_joined(["\n".join(other) + "\n\n"]) == _joined([text, ""])) == expected


def test_a_longer_text_is_unequal_from_either_side() -> None:
    short, longer = _joined(["ab"]), _joined(["ab", "c"])
    assert short != longer and longer != short and short != "ab\n\nc" and longer != "ab"


def test_head_walks_only_the_parts_it_shows() -> None:
    walked: list[str] = []

    def make() -> Iterator[str]:
        for part in ("ab", "cd", "ef", "gh"):
            walked.append(part)
            yield part

    text = JoinedText(make, 4)
    for limit, parts in ((0, 1), (1, 2), (2, 2), (4, 2), (5, 3), (6, 3)):  # a separator: the next part
        walked.clear()
        assert text.head(limit) == "ab\n\ncd\n\nef\n\ngh"[:limit]
        assert len(walked) == parts, (limit, walked)


def test_a_separator_must_be_whole_lines_at_both_ends() -> None:
    for separator in (", ", "\n, ", ", \n", ""):
        with pytest.raises(ValueError, match="whole lines"):
            JoinedText(lambda: iter(()), 0, separator)
    assert _joined(["a"], "\n---\n").separator == "\n---\n"


def test_out_of_range_names_a_part_and_no_instance_dict() -> None:
    text = _joined(["a", "b"])
    with pytest.raises(IndexError, match=r"^part index out of range$"):
        text[2]
    assert not hasattr(text, "__dict__")  # slots: one of these per spilled span's message
