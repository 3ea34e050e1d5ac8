"""A span's system message (issue 11 item 1): the system-role attachment texts of the user
entries between two replies make ONE system message, their texts joined by a blank line (spec
agent-formats §1.7 C) — as long as all of them. derive keeps the texts in its spill file past
``held.HELD_AT`` (``dialects/claude/user_span.py``) and the message's text is a
``core.joined_text.JoinedText`` read back part by part, never joined: JSONL and ``--format
json`` write it as one JSON string a piece at a time (``render/json_stream.string_pieces``),
Markdown a part at a time, ``--redact`` part by part past ``core.redact.WHOLE_AT`` characters
(lowered here with the other thresholds), ``report`` its first characters.

The transcript: a reply, a user entry, then N system-role attachments, each a text of ~600
characters: one span. Peak RSS of a child from N to 4N, N = 5,000 (the texts four times as long
as at the N = 20,000 of docs/reliability.md's issue 11 item 1 table: a quarter of the entries,
and the N transcript, 4.9 MB, still past ``store.line_fetch``'s fixed 4 MiB cache), thresholds
lowered to 1,024 (as test_claude_user_span.py), read from the kernel under an address-space
limit, never timed: JSONL +0.64, JSON +0.54, Markdown
+0.31, Markdown ``--redact`` +0.58, JSONL ``--redact`` +0.29, ``report`` +0.66 MiB (within 2
MiB). On the code before (f76fb5c, the parent of 32ccf0b: the texts joined into one str, each
writer encoding it whole) each failed at this N: +28.81, +38.11, +25.80, +38.29, +28.86 and
+19.91 MiB."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.adversarial.claude_hostile import SESSION, WHEN, _entry
from tests.adversarial.lowered import (
    DERIVE_COMMANDS,
    LOWERED,
    LoweredRuns,
    assert_flat,
    entries_to,
    lowered_runs,
)

pytestmark = pytest.mark.slow  # 12 children on transcripts of 4.9 and 20 MB

N = 5_000
_FILLER = "a reminder the CLI renders into the conversation, " * 12  # 600 characters a text
_COMMANDS = {**DERIVE_COMMANDS, "jsonl-redact": ["derive", "--format", "jsonl", "--redact"]}


def _attachment(ident: int, parent: str, text: str) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "attachment": {"type": "note"},
        "type": "attachment",
        "uuid": str(uuid.UUID(int=ident)),
        "timestamp": WHEN,
        "rendered": [{"content": f"<system-reminder>{text}</system-reminder>"}],
        "renderedRole": "system",
        "sessionId": SESSION,
        "version": "2.1.332",
    }


def system_span(n: int) -> Iterator[dict[str, Any]]:
    """A reply, a user entry, then ``n`` system-role attachments: one span, one system message
    of ``n`` texts."""
    reply = _entry("assistant", 1, None, [{"type": "text", "text": "hi"}], "msg_0")
    entry = _entry("user", 2, reply["uuid"], [{"type": "text", "text": "go"}])
    yield from (reply, entry)
    parent = entry["uuid"]
    for i in range(n):
        attachment = _attachment((i << 8) + 3, parent, f"note_{i} {_FILLER}")
        parent = attachment["uuid"]
        yield attachment


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    runs = lowered_runs(tmp_path_factory, "claude-span-system")
    lowered = LOWERED + "from sesstool.core import redact\nredact.WHOLE_AT = 1024\n"
    (runs.where / "site" / "sitecustomize.py").write_text(lowered)
    return runs


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_memory_does_not_grow_with_a_span_of_system_texts(runs: LoweredRuns, command: str) -> None:
    args = _COMMANDS[command]
    small = runs.run(runs.log(f"span-{N}", entries_to(system_span(N))), args, ok=(0,)).peak_rss
    measured = runs.run(runs.log(f"span-{4 * N}", entries_to(system_span(4 * N))), args, ok=(0,))
    large, written = measured.peak_rss, measured.stdout
    # the message is there (the page shows its first characters; the rest, its last text too)
    assert b"note_0" in written
    if command != "report":
        assert f"note_{4 * N - 1}".encode() in written
    assert_flat(small, large, label=command)
