"""A run of calls never answered with no user entry between them (issue 11 item 1, the last
Claude Code ``derive`` holder): resume closes every call of the run with an interrupted result
in ONE user message (spec agent-formats §0), as long as the run. derive keeps the run's tool ids
in a spill file past ``held.HELD_AT`` (``dialects/claude/interrupted.py``) and that message's
content is made as it is walked (a ``core.closer_list.Closers``), streamed by every writer —
JSONL, ``--format json``, ``--format markdown`` with and without ``--redact`` — and by
``report``, which shows the first and last ``engine.report.REPORT_PARTS`` parts of a message.

Peak RSS of a child from N to 4N calls, N = 10,000 (half the 20,000 once measured: the old
code's ``report`` grew far less than linearly with N, at 5,000 +6.6 MiB, too near the bound;
each call carries a ``requestId`` of ~310 characters, a field no command reads, so that the N
transcript, 7.9 MB, is past ``store.line_fetch``'s fixed 4 MiB cache as the 4N one is),
thresholds lowered to 1,024 as in test_claude_hostile.py, read from the kernel under an
address-space limit, never timed: within 2 MiB: JSONL +0.57, JSON +0.42, Markdown +0.20,
Markdown ``--redact`` +0.94, ``report`` +0.70 MiB. On the code before (eb18064, the parent of
b3286c9: the ids a list, the message a tuple built whole, each writer encoding it whole, the
page drawing every part) each failed at this N: +23.84, +34.02, +16.66, +20.89 and +9.67 MiB."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.adversarial.claude_hostile import call_run
from tests.adversarial.lowered import DERIVE_COMMANDS, LoweredRuns, assert_flat, entries_to, lowered_runs

pytestmark = pytest.mark.slow  # 10 children on transcripts of 8 and 32 MB

N = 10_000
_PADDING = "0" * 300  # of a requestId each call carries: a field no command reads (see above)


def padded_run(n: int) -> Iterator[dict[str, Any]]:
    """``claude_hostile.call_run``, each call with a long ``requestId``."""
    for i, call in enumerate(call_run(n)):
        call["requestId"] = f"req_{i}_{_PADDING}"
        yield call


_COMMANDS = DERIVE_COMMANDS


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-call-run")


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_memory_does_not_grow_with_a_run_of_calls(runs: LoweredRuns, command: str) -> None:
    args = _COMMANDS[command]
    small = runs.run(runs.log(f"run-{N}", entries_to(padded_run(N))), args, ok=(0,)).peak_rss
    measured = runs.run(runs.log(f"run-{4 * N}", entries_to(padded_run(4 * N))), args, ok=(0,))
    large, written = measured.peak_rss, measured.stdout
    # the run is there, closed to its last call (the page shows the ends of the message)
    assert written.count(b"interrupted") >= 2 * 500 and f"_{4 * N - 1}".encode() in written
    assert_flat(small, large, label=command)
