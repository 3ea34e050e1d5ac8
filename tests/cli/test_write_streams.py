"""Issue 15 item 5, decided: write commands take no standard input and write no standard
output. `-` as PATH and `-o -` are usage errors (exit 2) that say why — a write command publishes
a file beside its source after checking the source is cold and unchanged, and a stream has no
place, lock or identity — and their --help says so (docs/format.md "Standard input and output")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, Sesstool

LOG = (FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl").read_bytes()
WRITES = [["repair"], ["migrate"], ["fork", "--at", "2"], ["redact"]]


@pytest.mark.parametrize("command", WRITES, ids=lambda c: c[0])
def test_dash_as_path_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sesstool", *command, "-"],
        cwd=tmp_path,
        input=LOG,
        capture_output=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 2, done.stderr
    assert b"not standard input" in done.stderr and b"save the stream to a file first" in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a lock


@pytest.mark.parametrize("command", WRITES, ids=lambda c: c[0])
def test_dash_as_output_is_a_usage_error(sesstool: Sesstool, tmp_path: Path, command: list[str]) -> None:
    source = tmp_path / "session.jsonl"
    source.write_bytes(LOG)
    result = sesstool(*command, "-o", "-", str(source))
    assert result.exit_code == 2 and "standard output" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


@pytest.mark.parametrize("command", WRITES, ids=lambda c: c[0])
def test_help_says_so(sesstool: Sesstool, command: list[str]) -> None:
    text = " ".join(sesstool(command[0], "--help").stdout.split())
    assert "Neither -o nor PATH may be '-'" in text
