"""core.looks_like: a file's head says it is not a session log — and never says so of a log
whose first record is an object, or of a damaged first record (issue 15 item 9)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.looks_like import SIGNATURES, first_line_kind, signature

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=8), JSON, max_size=5))
def test_a_record_object_is_never_judged(obj: dict[str, Any]) -> None:
    line = json.dumps(obj).encode()
    assert first_line_kind(line, True, obj) is None


@given(st.binary(max_size=60))
def test_a_damaged_record_is_a_log_s_business(tail: bytes) -> None:
    """A first line that starts like a record but does not decode: the log's findings say why."""
    line = b'{"type":"session",' + tail.replace(b"\n", b"")
    assert first_line_kind(line, False, None) is None


def test_each_signature_is_named() -> None:
    for magic, what in SIGNATURES:
        head = magic + (b"9" if magic == b"BZh" else b"") + b"\x00rest"
        assert signature(head) == what
    assert signature(b"BZhello") is None  # bzip2 needs its block-size digit
    assert signature(b'{"type":"session"}') is None


def test_what_a_first_line_looks_like() -> None:
    assert first_line_kind(b"{", False, None) == (
        "a pretty-printed JSON document, not JSON Lines (one record per line)"
    )
    assert first_line_kind(b"\xef\xbb\xbf[ ", False, None) is not None  # a BOM changes nothing
    assert first_line_kind(b"hello world", False, None) == "text that is not JSON Lines"
    assert first_line_kind(b"ab\x00cd", False, None) is not None and "binary" in str(
        first_line_kind(b"ab\x00cd", False, None)
    )
    assert first_line_kind(b"[1,2]", True, [1, 2]) == "JSON whose first line is an array, not a record object"
    assert first_line_kind(b"", False, None) is None  # an empty first line: a finding of the log
