"""The Codex CLI lane runs only with SESSTOOL_CODEX=1 (``make codex-lane``, which runs pytest
inside ``unshare -n``); otherwise every test here is skipped with that reason. When enabled,
setup.sh installs the pinned CLI from npm: no npm skips the lane with the reason, any other
installation failure fails it, and so does a network namespace with more than loopback."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.codex_cli.driver import Lane
from tests.codex_cli.netns import loopback_up, only_loopback

HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("SESSTOOL_CODEX") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ENABLED:
        return
    skip = pytest.mark.skip(reason="Codex CLI lane: runs only with SESSTOOL_CODEX=1 (make codex-lane)")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def codex() -> Path:
    if not only_loopback():
        pytest.fail(
            "the Codex CLI lane must run in a private network namespace: make codex-lane", pytrace=False
        )
    loopback_up()
    proc = subprocess.run(
        ["bash", str(HERE / "setup.sh")], capture_output=True, text=True, check=False, timeout=900
    )
    if proc.returncode == 10:
        pytest.skip(f"Codex CLI lane skipped: {proc.stderr.strip()}")
    if proc.returncode != 0:
        pytest.fail(f"codex setup failed (exit {proc.returncode}):\n{proc.stderr}", pytrace=False)
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def lane_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("codex-lane")


@pytest.fixture(scope="session")
def lane(codex: Path, lane_root: Path) -> Iterator[Lane]:
    running = Lane(codex, lane_root / "runs")
    yield running
    running.close()
