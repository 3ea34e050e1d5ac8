"""The Codex scanner's own state does not grow with the history (issue 11 item 1, second round:
"about 11 bytes per history item" was measured as RSS, +1.3 MB for ``inspect`` from 30,000 to
120,000 items; it is the allocator warming up, not state: +0.01 MB from 120,000 to 480,000).
Python's own accounting (``tracemalloc``) of what a scan leaves alive and of its peak, for a
rollout of N and 4N history items (answered calls, messages): the same within a few KiB."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from sesstool.core.options import ScanOptions
from sesstool.engine.scan import scan_source
from tests.adversarial.test_surface_spill import _rollout

KiB = 1 << 10


def _traced(log: Path) -> tuple[int, int]:
    """(bytes the scan's result holds, the scan's peak), as tracemalloc counts them."""
    gc.collect()
    tracemalloc.start()
    try:
        result = scan_source(log, ScanOptions()).scan
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
        assert result.facts.calls > 0
    finally:
        tracemalloc.stop()
    return held, peak


def test_the_scanner_state_is_not_per_history_item(tmp_path: Path) -> None:
    _traced(_rollout(tmp_path, 50))  # imports and caches, once
    small, large = (_traced(_rollout(tmp_path, turns)) for turns in (500, 2_000))
    assert large[0] - small[0] < 16 * KiB, (small, large)  # 9,000 more items
    assert large[1] - small[1] < 64 * KiB, (small, large)
