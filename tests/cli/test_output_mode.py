"""Issue 15 item 14, decided: a write command's output takes the source's permission bits masked
by the umask, as cp(1) does — never more open than the source, never more open than the umask
allows — and always readable by its owner (it is read back to be verified). Set by fchmod
before the fsync, whatever the umask the temporary file was created under (docs/format.md
"Output mode")."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"
V0 = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"
CLEAN = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
COMMANDS = {"repair": CRASHED, "migrate": V0, "redact": V0, "fork": CLEAN}


def _run(args: list[str], cwd: Path, umask: int) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sesstool", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        preexec_fn=lambda: os.umask(umask),
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("source_mode", "umask", "expected"),
    [
        (0o600, 0o022, 0o600),
        (0o644, 0o022, 0o644),
        (0o640, 0o000, 0o640),
        (0o644, 0o077, 0o600),
        (0o666, 0o002, 0o664),
        (0o755, 0o022, 0o644),
        (0o444, 0o022, 0o444),
        (0o200, 0o022, 0o600),
    ],
)
def test_output_mode_follows_the_source_masked_by_the_umask(
    tmp_path: Path, command: str, source_mode: int, umask: int, expected: int
) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(COMMANDS[command], source)
    source.chmod(source_mode)
    extra = ["--at", "31"] if command == "fork" else []
    done = _run([command, "--json", *extra, str(source)], tmp_path, umask)
    assert done.returncode == 0, done.stderr
    out = Path(json.loads(done.stdout)["output"]["path"])
    assert stat.S_IMODE(out.stat().st_mode) == expected, oct(stat.S_IMODE(out.stat().st_mode))
    assert stat.S_IMODE(source.stat().st_mode) == source_mode  # the source is never touched
