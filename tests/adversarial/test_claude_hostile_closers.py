"""Issue 11 item 1, third round (test_claude_hostile.py), the closers of never-answered calls:
``inspect`` (text and ``--json``), ``repair`` and ``fork`` print or write a row, member or
closer per call: they are walked, never held (``core.closer_list.Closers``, the dialect's rows a
generator). The same transcript of N and of 4N calls, N = 20,000, each followed by a prompt
hanging off it, the children run with the thresholds lowered to 1,024
(``lowered.assert_hostile_flat``). Measured from N to 4N: +0.25, +0.02, +0.16 and +0.32 MiB; on
the code before (closers a list, rows a tuple, the dangling calls a list in the JSON document)
+81.1, +176.2, +69.0 and +69.0 MiB: each fails there."""

from __future__ import annotations

import pytest

from tests.adversarial.lowered import LoweredRuns, assert_hostile_flat, hostile_cases, lowered_fixture

pytestmark = pytest.mark.slow  # eight children, the larger on transcripts of 30 MB

_CASES = hostile_cases("never-answered", ["inspect", "inspect-json", "repair", "fork"])


where = lowered_fixture("claude-hostile-closers")


@pytest.mark.parametrize(("pattern", "command"), _CASES)
def test_memory_does_not_grow_with_hostile_items(where: LoweredRuns, pattern: str, command: str) -> None:
    assert_hostile_flat(where, pattern, command)
