"""Issue 11, items 1(c) and 1(d): `inspect --timeline` and `derive` keep memory flat in the
number of events — the timeline of a file is replayed by a second pass into the output, derive
output is written as it is produced. Peak RSS is read from the kernel (``os.wait4``) for a child
under an address-space limit; no clock is involved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sesstool.core.jsonline import dumps_pretty
from sesstool.core.options import ScanOptions
from sesstool.engine.inspect import InspectReport
from sesstool.engine.scan import scan_source
from sesstool.render.jsonout import inspect_doc
from tests.adversarial.hostile_logs import V4_HEADER, Measured, run_measured, v4_user
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import held as held_doc

MiB = 1 << 20
EVENTS = 100_000


@pytest.fixture(scope="module")
def many_events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("many") / "session.v4.jsonl"
    with open(path, "wb") as f:
        f.write(V4_HEADER)
        for seq in range(EVENTS):
            f.write(v4_user(seq, f"message {seq}"))
    return path


def test_timeline_memory_is_flat_in_the_number_of_events(many_events: Path) -> None:
    cwd = many_events.parent
    plain = run_measured(["inspect", str(many_events)], address_space=1 << 30, cwd=cwd)
    for extra in ([], ["--json"]):
        timeline = run_measured(
            ["inspect", "--timeline", *extra, str(many_events)], address_space=1 << 30, cwd=cwd
        )
        assert timeline.exit_code == plain.exit_code == 0, timeline.stderr
        # 100k entries held would add ~40 MB; replayed, the timeline adds next to nothing
        assert timeline.peak_rss - plain.peak_rss < 8 * MiB, (extra, timeline.peak_rss, plain.peak_rss)
    doc = json.loads(timeline.stdout)
    assert len(doc["timeline"]) == EVENTS and doc["timeline"][-1]["seq"] == EVENTS - 1


@pytest.mark.parametrize("name", ["clean-multiturn", "compaction", "crash-dangling-call", "chunks-packed"])
def test_streamed_json_is_the_document_byte_for_byte(sesstool: Sesstool, name: str) -> None:
    log = FIXTURES / "dsh" / name / "session.jsonl"
    held = scan_source(str(log), ScanOptions(collect_timeline=True))
    s = held.scan
    repairable = s.verdict in ("interrupted", "torn")
    closers = tuple(held.dialect.closers(s)) if repairable else ()
    expected = dumps_pretty(held_doc(inspect_doc(InspectReport(held, closers, repairable)))) + b"\n"
    streamed = sesstool("inspect", "--json", "--timeline", str(log))
    assert streamed.exit_code == 0
    assert streamed.stdout_bytes.replace(str(log).encode(), b"X") == expected.replace(str(log).encode(), b"X")


def test_a_stream_keeps_at_most_max_timeline_entries(many_events: Path) -> None:
    data = many_events.read_bytes()
    args = [sys.executable, "-m", "sesstool", "inspect", "--timeline", "--max-timeline", "1000", "-"]
    result = subprocess.run(args, input=data, capture_output=True, timeout=300, check=False)
    assert result.returncode == 3 and b"--max-timeline" in result.stderr and b"Traceback" not in result.stderr
    small = (FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl").read_bytes()
    args[args.index("1000")] = "100"
    ok = subprocess.run(
        [*args[:-1], "--json", "-"], input=small, capture_output=True, timeout=60, check=False
    )
    assert ok.returncode == 0 and len(json.loads(ok.stdout)["timeline"]) > 10


MESSAGES = 40_000


@pytest.fixture(scope="module")
def many_messages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40,000 surface messages of ~400 bytes that all stay current (no replacement)."""
    path = tmp_path_factory.mktemp("messages") / "session.v4.jsonl"
    with open(path, "wb") as f:
        f.write(V4_HEADER)
        for seq in range(MESSAGES):
            f.write(v4_user(seq, f"message {seq} " + "word " * 80))
    return path


@pytest.fixture(scope="module")
def inspected_messages(many_messages: Path) -> Measured:
    """``inspect`` of the 40,000 messages, measured once: the baseline of both variants below."""
    return run_measured(["inspect", str(many_messages)], address_space=1 << 30, cwd=many_messages.parent)


@pytest.mark.parametrize("given", ["file", "stdin"])
def test_derive_memory_is_flat_in_the_number_of_messages(
    many_messages: Path, inspected_messages: Measured, given: str
) -> None:
    """Issue 11 item 1(d), issue 14: derive holds line offsets, not messages, and reads them
    back while it writes (held, the messages would add ~40 MB to the scan's own peak). Standard
    input is read back from a private (unnamed) copy taken while it was scanned."""
    cwd = many_messages.parent
    plain = inspected_messages
    source = str(many_messages) if given == "file" else "-"
    stdin = many_messages if given == "stdin" else None
    for fmt in ("json", "jsonl"):
        derived = run_measured(
            ["derive", "--format", fmt, source],
            address_space=1 << 30,
            cwd=cwd,
            stdin=stdin,
        )
        assert derived.exit_code == plain.exit_code == 0, derived.stderr
        assert derived.peak_rss - plain.peak_rss < 12 * MiB, (fmt, derived.peak_rss, plain.peak_rss)
        if fmt == "jsonl":
            lines = derived.stdout.splitlines()
            assert len(lines) == MESSAGES and json.loads(lines[-1])["content"][0]["text"].startswith(
                f"message {MESSAGES - 1} "
            )
        else:
            assert len(json.loads(derived.stdout)["messages"]) == MESSAGES
