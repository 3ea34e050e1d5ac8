"""pytest plugin (``-p mutation.select``): run exactly the tests listed in the file named by
``SESSTOOL_MUTATION_TESTS``, in that order: one node id a line, or a test file's path for all of
its tests. Node ids go through a file, not the command line, because parametrised ids may hold
paths and brackets that pytest's argument parser would split."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = Path(os.environ["SESSTOOL_MUTATION_TESTS"]).read_text().splitlines()
    order = {entry: i for i, entry in enumerate(wanted)}

    def rank(item: pytest.Item) -> int | None:
        if item.nodeid in order:
            return order[item.nodeid]
        return order.get(item.nodeid.split("::")[0])

    kept = sorted((item for item in items if rank(item) is not None), key=lambda item: rank(item) or 0)
    found = {item.nodeid for item in kept} | {item.nodeid.split("::")[0] for item in kept}
    missing = [entry for entry in wanted if entry not in found]
    if missing:  # a stale map, or a test module the mutant broke (then collection failed too)
        print(
            f"mutation.select: {len(missing)} listed test(s) not collected, e.g. {missing[0]}",
            file=sys.stderr,
        )
    config.hook.pytest_deselected(items=[item for item in items if rank(item) is None])
    items[:] = kept
