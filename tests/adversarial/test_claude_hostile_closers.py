"""Issue 11 item 1, third round (test_claude_hostile.py), the closers of never-answered calls:
``inspect`` (text and ``--json``), ``repair`` and ``fork`` print or write a row, member or
closer per call: they are walked, never held (``core.closer_list.Closers``, the dialect's rows a
generator). The same transcript of N and of 4N calls, N = 5,000 (20,000 until stop 31; still
past the lowered 1,024 four times over), each followed by a prompt hanging off it, the children
run with the thresholds and fixed buffers lowered (``lowered.CACHES_LOWERED``,
``lowered.assert_hostile_flat``). Measured from N to 4N: +0.69, +0.11, +0.50 and +0.41 MiB
(+1.16, +0.97, +0.75, +1.32 with the buffers at full size, which N = 5,000 does not fill; at N =
20,000: +0.25, +0.02, +0.16, +0.32); on the code before (b463436, the parent of 25169de: closers
a list, rows a tuple, the dangling calls a list in the JSON document) +18.5, +43.2, +17.0 and
+18.8 MiB at N = 5,000 (+81.1, +176.2, +69.0, +69.0 at 20,000): each fails there.

Stop 33: CI on 7961782 measured the fork at +2.29 MiB once. The source's background digest
(store/digest.py) read 1 MiB buffers anew on its own thread, live at the peak or not by timing,
and more often the longer the file: eight runs of the fork measured +0.06 to +2.66 (mean +0.86).
With one reused 64 KiB buffer, ten runs measured -0.21 to +0.66 (mean +0.17)."""

from __future__ import annotations

import pytest

from tests.adversarial.lowered import (
    CACHES_LOWERED,
    LoweredRuns,
    assert_hostile_flat,
    hostile_cases,
    lowered_fixture,
)

pytestmark = pytest.mark.slow  # eight children, the larger on a transcript of 15 MB

_CASES = hostile_cases("never-answered", ["inspect", "inspect-json", "repair", "fork"])


N = 5_000  # units of the pattern in the smaller transcript (lowered.HOSTILE_N is 20,000)

where = lowered_fixture("claude-hostile-closers", CACHES_LOWERED)


@pytest.mark.parametrize(("pattern", "command"), _CASES)
def test_memory_does_not_grow_with_hostile_items(where: LoweredRuns, pattern: str, command: str) -> None:
    assert_hostile_flat(where, pattern, command, N)
