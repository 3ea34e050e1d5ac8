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
Peak RSS of a child from N to 4N, N = 5,000 (a quarter of the 20,000 once measured; each
attachment carries a ``requestId`` of ~960 characters, a field no command reads, so that the N
transcript, 8.2 MB, is past ``store.line_fetch``'s fixed 4 MiB cache as the 4N one is: a 2 MB N
transcript leaves it to fill between N and 4N, as test_claude_reply_members.py without it grew
+3.6 to +5.2 MiB), thresholds lowered to 1,024 as in test_claude_call_run.py, read from the
kernel under an address-space limit, never timed: within 2 MiB: JSONL +0.03, JSON +0.01,
Markdown +0.25, Markdown ``--redact`` +0.63, ``report`` +0.84 MiB. On the code before (b572638,
the parent of 34cb862: the lists in memory, the message a tuple built whole, each writer
encoding it whole, the page drawing every part) each failed at this N: +19.60, +21.09, +19.72,
+19.97 and +16.78 MiB."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.adversarial.claude_hostile import SESSION, WHEN, _entry
from tests.adversarial.lowered import DERIVE_COMMANDS, LoweredRuns, assert_flat, entries_to, lowered_runs

pytestmark = pytest.mark.slow  # 10 children on transcripts of 8 and 33 MB

N = 5_000
_PADDING = "0" * 950  # of a requestId each attachment carries: a field no command reads (see above)
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
        attachment["requestId"] = f"req_{i}_{_PADDING}"
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
    assert_flat(small, large, label=command)
