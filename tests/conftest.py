"""Shared test fixtures: run the CLI through its real exit boundary, locate fixtures."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from sesstool.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
UPDATE_GOLDENS = os.environ.get("SESSTOOL_UPDATE_GOLDENS") == "1"


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
