"""Shared test fixtures: run the CLI through its real exit boundary, locate fixtures; the
Hypothesis profiles (a fixed-seed ``ci`` run by default, a randomised ``deep`` run on demand)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from sesstool.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
UPDATE_GOLDENS = os.environ.get("SESSTOOL_UPDATE_GOLDENS") == "1"

# ``ci`` (the default, what `make test` and CI run): derandomised, so a run draws the same
# examples every time and a red run means the code or the tests changed, not luck; no example
# database, so a developer's run replays nothing CI would not. The deadline only catches a
# hang: a loaded two-core machine shared by several runs is slow but never 10 s per example.
# ``deep`` (`make test-deep`, not in CI): random seeds, DEEP_FACTOR times the examples of every
# property (see ``examples``), failures kept in .hypothesis/ for the next run to replay first.
PROFILE = os.environ.get("SESSTOOL_HYPOTHESIS_PROFILE", "ci")
DEEP_FACTOR = int(os.environ.get("SESSTOOL_DEEP_FACTOR", "20"))
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=10),
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "deep",
    derandomize=False,
    max_examples=100 * DEEP_FACTOR,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """A property's example count: ``n`` in CI, DEEP_FACTOR times more under ``deep``."""
    return n * DEEP_FACTOR if PROFILE == "deep" else n


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


Sesstool = Callable[..., Run]


def run_sesstool(*args: str, input: bytes | None = None) -> Run:
    """Invoke ``main`` in-process with captured stdio; returns its exit status and output."""
    runner = CliRunner()
    with runner.isolation(input=input, color=False) as (out, err, _):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        else:
            code = 0
        stdout_bytes = out.getvalue()
        stderr = err.getvalue().decode("utf-8", "replace")
    return Run(code, stdout_bytes.decode("utf-8", "replace"), stderr, stdout_bytes)


@pytest.fixture
def sesstool(monkeypatch: pytest.MonkeyPatch) -> Sesstool:
    """The CLI, run from the repository root (so fixture paths in output are relative)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    return run_sesstool


def check_golden(path: Path, actual: str | bytes) -> None:
    """``actual`` must equal the golden file at ``path`` byte for byte; with
    ``SESSTOOL_UPDATE_GOLDENS=1`` (``make goldens``) the file is written instead — read its diff."""
    data = actual.encode() if isinstance(actual, str) else actual
    if UPDATE_GOLDENS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return
    assert path.exists(), f"missing golden {path}: run make goldens"
    assert data == path.read_bytes(), f"output differs from {path} (make goldens refreshes it)"


def plaintext_of(path: Path) -> bytes:
    """A log's plaintext: the file itself, or every zstd frame of it decoded in turn (libzstd
    stops a decompressobj at a frame's end and leaves the next frame unused)."""
    import zstandard

    data = path.read_bytes()
    if not data.startswith(b"\x28\xb5\x2f\xfd"):
        return data
    out = bytearray()
    while data:
        obj = zstandard.ZstdDecompressor().decompressobj()
        out += obj.decompress(data)
        data = obj.unused_data
    return bytes(out)
