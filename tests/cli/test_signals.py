"""Issue 15 item 4: SIGTERM and SIGHUP during a write command clean up exactly as SIGINT does
(no ``.*.tmp``, no final name, the source untouched) and exit 143 / 129 (128 + the signal), the
shell's convention; SIGINT exits 130.

The signal comes from another process, as it does from a service manager or a closed terminal:
the parent starts ``python -m sesstool`` on a log large enough that publishing takes a while,
waits until the publisher's temporary file exists, and sends the signal. The deterministic
variants (a signal at the publisher's first fsync, and a second one in the middle of the cleanup)
run the child through ``tests/adversarial/_signal_child.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.genlog import generate
from tests.conftest import FIXTURES, ROOT

CLEAN = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"
SIGNALS = [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)]


@pytest.fixture(scope="module")
def big_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """A balanced and a torn v0 log of ~8 MB: staging and verifying them takes long enough to be
    caught with the temporary file present (polled every 2 ms)."""
    directory = tmp_path_factory.mktemp("big")
    logs = {torn: directory / f"{'torn' if torn else 'clean'}.jsonl" for torn in (False, True)}
    for torn, path in logs.items():
        generate(path, 8 << 20, seed=15, torn=torn)
    return logs


def _temps(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


@pytest.mark.parametrize(("signame", "status"), SIGNALS)
@pytest.mark.parametrize("command", [["repair"], ["migrate"]], ids=lambda c: c[0])
def test_a_signal_from_another_process_cleans_up(
    tmp_path: Path, big_logs: dict[bool, Path], command: list[str], signame: str, status: int
) -> None:
    source = tmp_path / "session.jsonl"
    original = big_logs[command == ["repair"]]
    shutil.copy(original, source)
    child = subprocess.Popen(
        [sys.executable, "-m", "sesstool", *command, str(source)],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 120
    while not _temps(tmp_path):
        assert child.poll() is None, ("finished before a temporary file was seen", child.returncode)
        assert time.monotonic() < deadline, "no temporary file appeared"
        time.sleep(0.002)
    child.send_signal(getattr(signal, signame))
    out, err = child.communicate(timeout=120)
    stderr = err.decode()
    assert child.returncode == status, (child.returncode, stderr)
    assert "Traceback" not in stderr
    assert stderr.strip() == ("sesstool: interrupted" if status == 130 else f"sesstool: {_word(signame)}")
    assert out == b""  # no success report for a publication that did not happen
    left = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("session.jsonl", "session.lock"))
    assert left == [], left  # no temporary file, no final name
    assert source.read_bytes() == original.read_bytes()


def _word(signame: str) -> str:
    return {"SIGTERM": "terminated", "SIGHUP": "hung up"}[signame]


def _child(point: str, signame: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tests" / "adversarial" / "_signal_child.py"), point, signame, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.parametrize(("signame", "status"), SIGNALS)
@pytest.mark.parametrize("command", [["repair"], ["migrate"], ["fork", "--at", "31"]], ids=lambda c: c[0])
def test_a_second_signal_during_the_cleanup_does_not_stop_it(
    tmp_path: Path, command: list[str], signame: str, status: int
) -> None:
    """The first signal at the temp's fsync starts the cleanup; the second arrives as the cleanup
    unlinks the temp. It is held until the cleanup is done, then still ends the run."""
    source = tmp_path / "session.jsonl"
    original = CRASHED if command == ["repair"] else CLEAN
    shutil.copy(original, source)
    result = _child("fsync+unlink", signame, [*command, str(source)], tmp_path)
    assert result.returncode == status, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    left = sorted(p.name for p in tmp_path.rglob("*") if p.name not in ("session.jsonl", "session.lock"))
    assert left == [], left
    assert source.read_bytes() == original.read_bytes()
