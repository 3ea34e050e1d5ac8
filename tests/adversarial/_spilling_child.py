"""``python -m tests.adversarial._spilling_child SPILL_AT ARGS...``: the CLI with the projection
fold's spill threshold (``core.fold.SPILL_AT``) set to SPILL_AT seqs and the Codex history's
(``dialects.codex.history.SPILL_AT``) to SPILL_AT items and a rollout's waiting calls
(``dialects.codex.waiting.SPILL_AT``) and a mini-agent log's (``core.scan_state.CALLS_SPILL_AT``)
to SPILL_AT calls and a rollout's unfinished turns (``dialects.codex.open_turns.SPILL_AT``) to
SPILL_AT turns and the runs of a zstd log's frames (``store.frame_runs.SPILL_AT``) to SPILL_AT
runs, so a test log of tens of thousands of
nodes or items takes the path a log of millions takes (issue 11 item 1, second round)."""

from __future__ import annotations

import sys

from sesstool.core import fold, scan_state
from sesstool.dialects.codex import history, open_turns, waiting
from sesstool.store import frame_runs


def main() -> None:
    at = int(sys.argv[1])
    fold.SPILL_AT = history.SPILL_AT = waiting.SPILL_AT = scan_state.CALLS_SPILL_AT = open_turns.SPILL_AT = at
    frame_runs.SPILL_AT = at
    sys.argv = ["sesstool", *sys.argv[2:]]
    from sesstool.cli.entry import run  # as `python -m sesstool` does: the CLI after its guard

    run()


if __name__ == "__main__":
    main()
