"""Issue 11 item 1: matching a JSON string token holds nothing per character.

Three places find the strings of a raw line: ``jsonline.nesting_depth`` (a lowered
``--max-depth``), ``unsafe_integers`` (a line with a run of 16 digits) and the Claude fork's
``top_level_key_value`` (every line it copies). They used ``"(?:[^"\\]|\\.)*"``, for which the
regex engine keeps a backtracking frame per character of a string: a 4 MiB string cost 589 MB
to match, so ``validate`` of a 4 MiB prompt holding one large integer peaked at 530 MB, and
``fork`` of a Claude transcript of one 16 MiB prompt at 2.0 GB (stop 35). ``JSON_STRING`` is
the possessive, unrolled form: the same tokens, nothing held per character or per escape."""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sesstool.core.jsonline import JSON_STRING, nesting_depth
from sesstool.core.unsafe_integers import unsafe_integers
from sesstool.dialects.claude import fork

# the pattern before stop 35: the reference for which tokens are strings
_BACKTRACKING = re.compile(rb'"(?:[^"\\]|\\.)*"')
MiB = 1 << 20


_PIECES = st.lists(st.sampled_from([b'"', b"\\", b"a", b"{", b"\n", b"]"])).map(b"".join)


@given(st.binary(max_size=60) | _PIECES)
def test_the_same_tokens_as_the_backtracking_pattern(data: bytes) -> None:
    """Unterminated strings, escaped quotes, a backslash before the line's end: the same spans."""
    spans = [m.span() for m in JSON_STRING.finditer(data)]
    assert spans == [m.span() for m in _BACKTRACKING.finditer(data)]
    assert JSON_STRING.sub(b'""', data) == _BACKTRACKING.sub(b'""', data)


def _peak(work: Callable[[], Any]) -> int:
    """Python's traced peak (the regex engine's frames are traced) while ``work`` runs."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


_BODIES = {  # 4 MiB strings: plain letters, only escapes, and the two mixed
    "letters": b"x" * (4 * MiB),
    "escapes": b"\\n" * (2 * MiB),
    "mixed": b"ab\\n" * MiB,
}


_LINES: dict[str, Callable[[bytes], bytes]] = {
    "nesting_depth": lambda body: b'[{"a":"' + body + b'"}]',
    "unsafe_integers": lambda body: b'{"n":123456789012345678901,"t":"' + body + b'"}',
    "claude fork": lambda body: (
        b'{"type":"user","uuid":"u","message":{"content":"' + body + b'"},"sessionId":"A"}'
    ),
}
_USES: dict[str, Callable[[bytes], Any]] = {
    "nesting_depth": nesting_depth,
    "unsafe_integers": lambda line: list(unsafe_integers([line], 0, 1)),  # decodes the line too
    "claude fork": lambda line: fork.top_level_key_value(line, b"sessionId", b"A"),
}


@pytest.mark.parametrize("body", sorted(_BODIES))
@pytest.mark.parametrize("use", sorted(_USES))
def test_a_long_string_costs_no_more_than_decoding_it(use: str, body: str) -> None:
    """At most what orjson's decode of the line holds at its peak (about 13 times the line: its
    value pool) and two copies of the line: 300 MiB and more with the backtracking pattern."""
    line = _LINES[use](_BODIES[body])
    decoding = _peak(lambda: orjson.loads(line))
    peak = _peak(lambda: _USES[use](line))
    assert peak <= decoding + 2 * len(line), (use, body, peak / MiB, decoding / MiB)


def test_the_fork_finds_the_top_level_session_id_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line naming the session in 5,000 nested objects before its own key: the tokens are
    walked once (before, once for each copy: 12.5 million token visits for this line)."""
    nested = b",".join(b'{"sessionId":"A"}' for _ in range(5_000))
    line = b'{"type":"user","uuid":"u","tool":[' + nested + b'],"sessionId":"A"}'
    visited = 0
    pattern = fork._TOKEN

    class Counting:
        def finditer(self, data: bytes, *span: int) -> Iterator[re.Match[bytes]]:
            nonlocal visited
            for token in pattern.finditer(data, *span):
                visited += 1
                yield token

    monkeypatch.setattr(fork, "_TOKEN", Counting())
    at = fork.top_level_key_value(line, b"sessionId", b"A")
    assert at == len(line) - len(b'"sessionId":"A"}')
    tokens = len(pattern.findall(line))
    assert visited <= tokens, (visited, tokens)
    copied, changed = fork.fork_line(line, "A", "B")
    assert changed and copied.endswith(b'],"sessionId":"B"}') and copied.count(b'"sessionId":"A"') == 5_001
