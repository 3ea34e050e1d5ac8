"""Reading a log that a live writer is still appending to: the stable prefix that existed when
it was opened is reported, flagged live, and never called corrupt (DESIGN §5)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from bench.genlog import generate
from tests.conftest import Sesstool


def _appender(path: Path, first_seq: int, stop: threading.Event) -> None:
    """A writer that keeps appending complete, valid turns (one record per write)."""
    seq, turn = first_seq, 10_000
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        while not stop.is_set():
            turn += 1
            for record in (
                {"type": "turn/start", "seq": seq, "time": seq, "data": {"turn": turn}},
                {
                    "type": "turn/end",
                    "seq": seq + 1,
                    "time": seq + 1,
                    "data": {"turn": turn, "reason": {"kind": "completed"}},
                },
            ):
                os.write(fd, json.dumps(record, separators=(",", ":")).encode() + b"\n")
            seq += 2
    finally:
        os.close(fd)


@pytest.mark.parametrize("command", [("inspect", "--json"), ("validate", "--format", "json")])
def test_live_file_reports_its_stable_prefix(
    sesstool: Sesstool, tmp_path: Path, command: tuple[str, ...]
) -> None:
    log = tmp_path / "session.jsonl"
    generate(log, 8 << 20, seed=3)
    last = json.loads(log.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[1])
    stop = threading.Event()
    writer = threading.Thread(target=_appender, args=(log, last["seq"] + 1, stop))
    size_before = log.stat().st_size
    writer.start()
    try:
        result = sesstool(*command, str(log))
    finally:
        stop.set()
        writer.join()
    doc = json.loads(result.stdout)
    report = doc if command[0] == "inspect" else doc["files"][0]
    live = report["file"]["live"] if command[0] == "inspect" else report["live"]
    verdict = report["verdict"]["verdict"]  # one verdict shape in inspect and in validate
    assert live is True
    assert verdict in ("clean", "interrupted", "torn"), verdict  # never a false "corrupt"
    assert log.stat().st_size > size_before  # the writer really wrote
    if command[0] == "inspect":
        assert report["file"]["size"] < log.stat().st_size  # only the stable prefix
