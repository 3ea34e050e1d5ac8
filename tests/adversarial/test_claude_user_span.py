"""One span of user entries between two replies (issue 11 item 1): whatever is written between two
assistant replies makes ONE user message (spec agent-formats §1.7 C, §1.9) — the user-role
attachment texts, the results of the pending calls in the order they were written, the blocks
of the user entries — as long as the span. derive keeps each of these lists in its spill file
past ``held.HELD_AT`` items (``dialects/claude/user_span.py``; the results put in file order by
``held.HeldOrder``) and the message's content is made as it is walked (a
``core.closer_list.Closers``), streamed by every writer — JSONL, ``--format json``, ``--format
markdown`` with and without ``--redact`` — and by ``report`` (the first and last
``engine.report.REPORT_PARTS`` parts of a message).

The transcript: a reply, then N user entries, each followed by a user-role attachment: one span
of 2N blocks. (Results of N parallel calls in one span need a reply of N calls, itself held:
their order by ``HeldOrder`` is proven byte for byte by tests/claude/test_user_span_spilled.py.)
Peak RSS of a child from N to 4N, N = 20,000, thresholds lowered to 1,024 as in
test_claude_call_run.py, read from the kernel under an address-space limit, never timed:
within 2 MiB: JSONL +0.10, JSON +0.22, Markdown +0.73, Markdown ``--redact`` +0.24, ``report``
-0.28 MiB. On the code before (the lists in memory, the message a tuple built whole, each writer
encoding it whole, the page drawing every part) each failed: +78.2, +77.4, +79.2, +78.7 and
+78.4 MiB."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.adversarial.claude_hostile import SESSION, WHEN, _entry
from tests.adversarial.lowered import DERIVE_COMMANDS, LoweredRuns, assert_flat, entries_to, lowered_runs

pytestmark = pytest.mark.slow  # 10 children on transcripts of 9 and 36 MB

N = 20_000
_COMMANDS = DERIVE_COMMANDS


def _attachment(ident: int, parent: str, text: str) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "attachment": {"type": "note"},
        "type": "attachment",
        "uuid": str(uuid.UUID(int=ident)),
        "timestamp": WHEN,
        "rendered": [{"content": text}],
        "renderedRole": "user",
        "sessionId": SESSION,
        "version": "2.1.332",
    }


def user_span(n: int) -> Iterator[dict[str, Any]]:
    """A reply, then ``n`` user entries, each followed by a user-role attachment: one span."""
    reply = _entry("assistant", 1, None, [{"type": "text", "text": "hi"}], "msg_0")
    parent = reply["uuid"]
    yield reply
    for i in range(n):
        entry = _entry("user", (i << 8) + 2, parent, [{"type": "text", "text": f"go_{i}"}])
        attachment = _attachment((i << 8) + 3, entry["uuid"], f"note_{i}")
        parent = attachment["uuid"]
        yield from (entry, attachment)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-user-span")


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_memory_does_not_grow_with_a_span_of_user_entries(runs: LoweredRuns, command: str) -> None:
    args = _COMMANDS[command]
    small = runs.run(runs.log(f"span-{N}", entries_to(user_span(N))), args, ok=(0,)).peak_rss
    measured = runs.run(runs.log(f"span-{4 * N}", entries_to(user_span(4 * N))), args, ok=(0,))
    large, written = measured.peak_rss, measured.stdout
    # the span is there to its ends (the page shows the ends of the message)
    last = 4 * N - 1
    assert b"note_0" in written and f"go_{last}".encode() in written
    assert_flat(small, large)
