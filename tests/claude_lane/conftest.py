"""The real-CLI lane runs only with SESSTOOL_CLAUDE_LANE=1 (``make claude-lane``, which starts
pytest inside ``unshare -n``); otherwise every test here is skipped with that reason. When
enabled, nothing is skipped: a missing CLI, npm or namespace fails the lane."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("SESSTOOL_CLAUDE_LANE") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ENABLED:
        return
    skip = pytest.mark.skip(reason="claude lane: runs only with SESSTOOL_CLAUDE_LANE=1 (make claude-lane)")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def claude_binary() -> str:
    from tests.claude_lane import netns

    netns.ensure_private()
    proc = subprocess.run(
        ["bash", str(HERE / "setup.sh")], capture_output=True, text=True, check=False, timeout=900
    )
    if proc.returncode != 0:
        pytest.fail(f"claude lane setup failed (exit {proc.returncode}):\n{proc.stderr}", pytrace=False)
    return proc.stdout.strip().splitlines()[-1]
