"""Issue 11, items 5, 6, 8 and 9: FIFOs, devices, symlink loops, unsearchable directories, too
few file descriptors and signals end in a clean exit with a message, never a hang or a
traceback; SIGTERM and SIGHUP clean up their temporary files exactly as SIGINT does."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.eacces import deny_below
from tests.conftest import FIXTURES, Sesstool

HERE = Path(__file__).resolve().parent
CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"
CLEAN = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
READS = [["inspect"], ["validate"], ["derive"]]
WRITES = [["repair"], ["migrate"], ["fork", "--at", "31"]]


def cli(
    args: list[str], cwd: Path, *, preexec: Callable[[], object] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sesstool", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,  # a hang fails the test instead of blocking the suite
        check=False,
        preexec_fn=preexec,
    )


def clean_exit(result: subprocess.CompletedProcess[str], *codes: int) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in codes, (result.returncode, result.stderr)
    assert result.stderr.startswith("sesstool: ") or result.returncode in (0, 1), result.stderr


# -- item 5: FIFOs, devices, symlink loops ----------------------------------------------------


@pytest.mark.parametrize("command", READS + WRITES, ids=lambda c: c[0])
def test_fifo_without_a_writer_never_hangs(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    result = cli([*command, str(fifo)], tmp_path)
    if command in WRITES:
        clean_exit(result, 3)
        assert "FIFO" in result.stderr and "regular file" in result.stderr
    else:
        # no writer: an empty stream, judged as an empty log
        clean_exit(result, 0, 1, 3)
        assert "empty" in result.stdout + result.stderr


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(fifo, "wb") as f:  # blocks until the reader opens: then a writer is present
            f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("command", READS, ids=lambda c: c[0])
def test_fifo_with_a_writer_is_read_as_a_stream(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    writer = _feed(fifo, CLEAN.read_bytes())
    from_fifo = cli([*command, str(fifo)], tmp_path)
    writer.join(10)
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(CLEAN.read_bytes())
    from_file = cli([*command, str(plain)], tmp_path)
    clean_exit(from_fifo, 0)
    assert from_fifo.returncode == from_file.returncode
    if command == ["derive"]:
        assert from_fifo.stdout.replace(str(fifo), "X") == from_file.stdout.replace(str(plain), "X")


@pytest.mark.parametrize("command", READS + WRITES, ids=lambda c: c[0])
def test_a_character_device_is_not_an_empty_log(tmp_path: Path, command: list[str]) -> None:
    result = cli([*command, "/dev/zero"], tmp_path)
    clean_exit(result, 1 if command == ["validate"] else 3)
    out = result.stdout + result.stderr
    assert "character device" in out and "empty" not in out


@pytest.mark.parametrize("command", READS + WRITES, ids=lambda c: c[0])
def test_a_symlink_loop_is_named_as_such(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    result = cli([*command, str(tmp_path / "a.jsonl")], tmp_path)
    clean_exit(result, 1 if command == ["validate"] else 3)
    assert "symbolic link loop" in result.stdout + result.stderr
    assert "no such file" not in result.stdout + result.stderr


# -- item 6: an unsearchable parent directory -------------------------------------------------


@pytest.mark.parametrize("command", READS + WRITES, ids=lambda c: c[0])
def test_unsearchable_parent_is_a_clean_exit_3(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """EACCES on the way to the file, as an unprivileged user meets it under a directory it
    cannot search (root searches anything, and CI runs as root, so the kernel's answer is
    reproduced at the system-call boundary: every path below the directory gets EACCES)."""
    session = tmp_path / "locked"
    session.mkdir()
    shutil.copy(CLEAN, session / "session.jsonl")
    deny_below(monkeypatch, session)
    result = sesstool(*command, str(session / "session.jsonl"))
    assert result.exit_code == (1 if command == ["validate"] else 3), result.stderr
    assert "Traceback" not in result.stderr
    assert "permission denied" in result.stdout + result.stderr


# -- item 8: too few file descriptors ----------------------------------------------------------


@pytest.mark.parametrize("limit", [5, 6, 7, 8, 10])
@pytest.mark.parametrize("command", READS + WRITES, ids=lambda c: c[0])
def test_few_file_descriptors_are_a_clean_exit(tmp_path: Path, command: list[str], limit: int) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(CLEAN, source)

    def few_fds() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    result = cli([*command, str(source)], tmp_path, preexec=few_fds)
    write = command in WRITES
    # 3 when the source cannot be opened (a read), 6 when the output cannot be written
    clean_exit(result, *((0, 3, 6) if write else (0, 1, 3)))
    if result.returncode in (3, 6):
        assert "open files" in result.stderr.lower() or "emfile" in result.stderr.lower()
    assert not list(tmp_path.glob(".*.tmp"))  # nothing half-written is left behind
    assert source.read_bytes() == CLEAN.read_bytes()


# -- item 9: signals ------------------------------------------------------------------------------


def _child(point: str, signame: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HERE / "_signal_child.py"), point, signame, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(HERE.parent.parent)},
    )


@pytest.mark.parametrize("module", ["click", "rich", "sesstool.engine", "orjson"])
@pytest.mark.parametrize("command", [["inspect"], ["repair"], ["validate"]], ids=lambda c: c[0])
def test_sigint_during_start_up_is_quiet(tmp_path: Path, command: list[str], module: str) -> None:
    """At the first import of each of these modules: before the CLI exists (click), while it
    builds its consoles (rich), while a command loads its engine (lazily)."""
    source = tmp_path / "session.jsonl"
    shutil.copy(CRASHED, source)
    result = _child(f"import:{module}", "SIGINT", [*command, str(source)], tmp_path)
    assert result.returncode == 130 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == "sesstool: interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


@pytest.mark.parametrize(("signame", "status"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
@pytest.mark.parametrize("command", [["repair"], ["migrate"], ["fork", "--at", "31"]], ids=lambda c: c[0])
def test_signals_while_publishing_clean_up_like_sigint(
    tmp_path: Path, command: list[str], signame: str, status: int
) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(CRASHED if command == ["repair"] else CLEAN, source)
    result = _child("fsync", signame, [*command, str(source)], tmp_path)
    assert result.returncode == status, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    left = sorted(p.name for p in tmp_path.rglob("*") if p.name not in ("session.jsonl", "session.lock"))
    assert left == [], left  # no temporary file, no final name
    assert source.read_bytes() == (CRASHED if command == ["repair"] else CLEAN).read_bytes()
