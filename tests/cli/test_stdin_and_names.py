"""Issue 11, items 4 and 11 (``-o ''``): only a bare ``-`` argument is standard input. A file
named ``-`` (given as ``./-``, found by a glob or in a directory) is read as a file; ``-o -`` and
``-o ''`` are usage errors that create nothing; ``-`` on a terminal is refused, not a hang."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"
OTHER = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"


def run(
    args: list[str], cwd: Path, stdin: bytes | None = None, stdin_fd: int | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sesstool", *args],
        cwd=cwd,
        input=stdin,
        stdin=stdin_fd if stdin is None else None,
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def dash_file(tmp_path: Path) -> Path:
    path = tmp_path / "-"
    path.write_bytes(CRASHED.read_bytes())
    return path


def test_repair_of_dot_slash_dash_reads_the_file_not_stdin(tmp_path: Path, dash_file: Path) -> None:
    result = run(["repair", "--json", "./-"], tmp_path, stdin=OTHER.read_bytes())
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["source"]["sha256"] == hashlib.sha256(CRASHED.read_bytes()).hexdigest()
    out = Path(doc["output"]["path"])
    out = out if out.is_absolute() else tmp_path / out
    # the repaired file carries the crashed log's committed prefix, not the stdin log
    committed = CRASHED.read_bytes()[: CRASHED.read_bytes().rindex(b"\n") + 1]
    assert out.read_bytes().startswith(committed)
    assert dash_file.read_bytes() == CRASHED.read_bytes()


@pytest.mark.parametrize("command", [["inspect", "--json"], ["derive"], ["validate", "--format", "json"]])
def test_read_commands_read_dot_slash_dash_as_a_file(
    tmp_path: Path, dash_file: Path, command: list[str]
) -> None:
    from_file = run([*command, "./-"], tmp_path, stdin=OTHER.read_bytes())
    from_path = run([*command, str(dash_file)], tmp_path, stdin=b"")
    assert from_file.returncode == from_path.returncode == 0, from_file.stderr
    assert from_file.stdout.replace(b"./-", str(dash_file).encode()) == from_path.stdout


def test_a_glob_matching_a_file_named_dash_is_that_file(tmp_path: Path, dash_file: Path) -> None:
    result = run(["validate", "--format", "json", "*"], tmp_path, stdin=OTHER.read_bytes())
    doc = json.loads(result.stdout)
    (entry,) = doc["files"]
    assert entry["path"] == "./-" and entry["verdict"]["verdict"] == "torn"


def test_bare_dash_still_means_stdin(tmp_path: Path) -> None:
    result = run(["inspect", "--json", "-"], tmp_path, stdin=OTHER.read_bytes())
    assert result.returncode == 0 and json.loads(result.stdout)["verdict"]["verdict"] == "clean"


def test_dash_on_a_terminal_is_refused_not_a_hang(tmp_path: Path) -> None:
    leader, follower = os.openpty()
    try:
        result = run(["inspect", "-"], tmp_path, stdin_fd=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert result.returncode == 2 and b"terminal" in result.stderr


@pytest.mark.parametrize("output", ["-", ""])
@pytest.mark.parametrize("command", [["repair"], ["migrate"], ["fork", "--at", "1"]])
def test_output_dash_or_empty_is_a_usage_error_and_creates_nothing(
    tmp_path: Path, command: list[str], output: str
) -> None:
    source = tmp_path / "session.jsonl"
    source.write_bytes(OTHER.read_bytes())
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run([*command, "-o", output, str(source)], tmp_path, stdin=b"")
    assert result.returncode == 2, result.stderr
    assert b"Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    "command", [["repair"], ["migrate"], ["fork", "--at", "12"], ["redact"], ["report"]], ids=lambda c: c[0]
)
def test_output_naming_a_missing_directory_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    """``-o out/`` names a directory: without one, a usage error, never a file called ``out``
    (stop 37: repair published the file ``out``); with one, the default name inside it."""
    source = tmp_path / "session.jsonl"
    source.write_bytes((OTHER if command[0] == "fork" else CRASHED).read_bytes())  # fork: a clean cut
    result = run([*command, "-o", "out/", str(source)], tmp_path)
    assert result.returncode == 2, result.stderr
    assert b"names a directory, and there is none" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]
    if command[0] != "report":  # a page is one file: -o names it, never a directory
        (tmp_path / "out").mkdir()
        made = run([*command, "-o", "out/", str(source)], tmp_path)
        assert made.returncode == 0, made.stderr
        assert len(list((tmp_path / "out").iterdir())) == 1


def test_report_output_dash_is_standard_output_and_empty_is_a_usage_error(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    source.write_bytes(CRASHED.read_bytes())
    page = run(["report", "-o", "-", str(source)], tmp_path)
    assert page.returncode == 0, page.stderr
    assert page.stdout == run(["report", str(source)], tmp_path).stdout
    assert page.stdout.startswith(b"<!DOCTYPE html>")
    empty = run(["report", "-o", "", str(source)], tmp_path)
    assert empty.returncode == 2 and b"must name a file" in empty.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]
