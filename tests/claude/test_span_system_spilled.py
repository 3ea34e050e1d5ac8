"""A span's system message with its texts moved to the spill file (``user_span.Span.system_text``:
a ``core.joined_text.JoinedText``; issue 11 item 1) writes what it writes joined in memory: every
Claude fixture, raw and zstd, derived with ``held.HELD_AT`` forced to 0 and 5 items prints the
same bytes in every format (JSONL, JSON — its request envelope citing the system messages —
Markdown, text, each with and without ``--redact``) and the same redaction counts; the fixtures'
system messages are streamed at 0 (raw and zstd: else the comparison proves nothing). A hostile
span adds what the fixtures lack: many system texts, with quotes, backslashes, control
characters, non-ASCII, a lone surrogate, backtick runs, a CI command, and credentials (one in
a text, one repeated in another, a key's armour across two texts: redacted as the held text is,
the whole text being under ``redact.WHOLE_AT``) (spec agent-formats §1.7 C)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.joined_text import JoinedText
from sesstool.dialects.claude import held, user_span
from tests.adversarial.claude_hostile import SESSION, _entry
from tests.claude.derive_outputs import IN_MEMORY, LOGS, all_written, derivable, suffixes_streamed
from tests.claude.test_user_span_spilled import _attachment
from tests.conftest import FIXTURES

_AWS = "AKIAIOSFODNN7EXAMPLE"
_KEY = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
    "-----END PRIVATE KEY-----"
)
_TEXTS = [
    'a "quoted" \\ back\\slash',
    "tab\tbell\x07 esc\x1b[31m red\r\ncrlf",
    "é ü 中文 \U0001f600 \u2028 \u202e bidi",
    "lone \ud800 surrogate",
    "```` a fence `` and ` ticks",
    "::set-output name=x::y",
    "##[group]defused",
    f"aws {_AWS}",
    f"again {_AWS} here",
    _KEY[:40],
    _KEY[40:],
    "",
    "last\n",
]


def _streamed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts (in the one item of the list) the system texts made a ``JoinedText``."""
    count = [0]
    original = user_span.Span.system_text

    def counted(span: user_span.Span) -> Any:
        text = original(span)
        count[0] += isinstance(text, JoinedText)
        return text

    monkeypatch.setattr(user_span.Span, "system_text", counted)
    return count


def _same_spilled(log: Path, monkeypatch: pytest.MonkeyPatch, thresholds: tuple[int, ...]) -> int:
    """Asserts every format's bytes at each of ``thresholds`` items equal those in memory; how
    many system texts were streamed."""
    count = _streamed(monkeypatch)
    monkeypatch.setattr(held, "_SLICE", 2)  # read back two rows a statement
    with derivable(log) as scanned:
        if scanned is None:
            return 0  # derive refuses it, spilled or not
        try:
            monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
            every = all_written(*scanned)
            assert count[0] == 0
            for items in thresholds:
                monkeypatch.setattr(held, "HELD_AT", items)
                assert all_written(*scanned) == every, items
            return count[0]
        finally:
            monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_system_text_writes_what_it_writes_in_memory(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_spilled(log, monkeypatch, (0, 5))


def test_fixtures_stream_system_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    count = _streamed(monkeypatch)
    monkeypatch.setattr(held, "HELD_AT", 0)
    assert suffixes_streamed(LOGS, lambda: count[0], all_written) == {".jsonl", ".zstd"}


def _hostile(path: Path) -> Path:
    """A reply, a user entry, then a system attachment per text in ``_TEXTS`` (one span); a
    second reply and a span of one system text."""
    reply = _entry("assistant", 1, None, [{"type": "text", "text": "hi"}], "msg_0")
    entry = _entry("user", 2, reply["uuid"], [{"type": "text", "text": "go"}])
    entries: list[dict[str, Any]] = [reply, entry]
    for n, text in enumerate(_TEXTS):
        wrapped = f"<system-reminder>{text}</system-reminder>" if n % 2 else text
        entries.append(_attachment((n << 8) + 3, entries[-1]["uuid"], "system", wrapped))
    entries.append(_entry("assistant", 9, entries[-1]["uuid"], [{"type": "text", "text": "ok"}], "msg_1"))
    entries.append(_attachment(10, entries[-1]["uuid"], "system", "alone"))
    with path.open("w") as out:
        out.writelines(json.dumps(e) + "\n" for e in entries)
    return path


def test_a_hostile_span_of_system_texts_spilled_writes_what_it_writes_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _hostile(tmp_path / f"{SESSION}.jsonl")
    assert _same_spilled(log, monkeypatch, (0, 1, 5)) >= 2
