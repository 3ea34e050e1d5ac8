"""The zstd reader's read-ahead thread and batched frame decoding (issue 14): the same items,
summary and frame ends as the inline, frame-by-frame reader on every input; the thread stops
when the consumer stops (early, by an exception, by SIGINT); what the thread raises surfaces
where it happened; and the queue bounds how far it reads ahead."""

from __future__ import annotations

import gc
import io
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.physical import PhysicalIssue, ReadSummary
from sesstool.engine.scan import run_scan
from sesstool.store import ahead as ahead_module
from sesstool.store import zstd_reader
from sesstool.store.zstd_reader import ZstdReader
from tests.conftest import FIXTURES, ROOT, examples

THREAD = "sesstool-read-ahead"


def ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD and t.is_alive()]


def frame(payload: bytes, *, checksum: bool = True, content_size: bool = True, level: int = 3) -> bytes:
    params = zstandard.ZstdCompressionParameters.from_level(
        level, write_checksum=checksum, write_content_size=content_size
    )
    return zstandard.ZstdCompressor(compression_params=params).compress(payload)


def streamed_frame(payload: bytes) -> bytes:
    """A frame without a content size (streamed), as a writer that does not know it makes."""
    cobj = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    return cobj.compress(payload) + cobj.flush()


Outcome = tuple[list[Any], ReadSummary | None, list[tuple[int, int, int]], str | None]


def outcome(data: bytes, *, ahead: bool, batching: bool, **options: Any) -> Outcome:
    """Everything a consumer can see of one read: items, summary, frame ends, what was raised."""
    reader = ZstdReader(io.BytesIO(data), ahead=ahead, **options)
    ends: list[tuple[int, int, int]] = []
    reader.on_frame_end = lambda *end: ends.append(end)
    items: list[Any] = []
    previous = zstd_reader._Walker.batching
    zstd_reader._Walker.batching = batching
    try:
        for item in reader.batches():
            items.append((list(item[0]), *item[1:]) if isinstance(item, tuple) else item)
        return items, reader.summary, ends, None
    except Exception as exc:  # compared between the readers
        return items, None, ends, f"{type(exc).__name__}: {exc}"
    finally:
        zstd_reader._Walker.batching = previous


def same_everywhere(data: bytes, **options: Any) -> Outcome:
    """The threaded, batched reader against the inline one and the frame-by-frame one."""
    reference = outcome(data, ahead=False, batching=False, **options)
    assert outcome(data, ahead=False, batching=True, **options) == reference
    assert outcome(data, ahead=True, batching=True, **options) == reference
    assert outcome(data, ahead=True, batching=False, **options) == reference
    return reference


def test_every_zstd_fixture_reads_the_same_ahead_and_inline() -> None:
    fixtures = sorted(FIXTURES.rglob("*.zstd")) + sorted(FIXTURES.rglob("*.zst"))
    assert len(fixtures) > 50
    for path in fixtures:
        same_everywhere(path.read_bytes())


LINE = st.binary(min_size=0, max_size=300).map(lambda b: b.replace(b"\n", b" ") + b"\n")


@st.composite
def logs(draw: st.DrawFn) -> tuple[bytes, dict[str, Any]]:
    """Frames of every kind the walker tells apart, then a mutation: a flipped byte, a cut."""
    parts: list[bytes] = []
    for _ in range(draw(st.integers(1, 12))):
        payload = b"".join(draw(st.lists(LINE, max_size=8)))
        kind = draw(st.sampled_from(["plain", "plain", "plain", "no-checksum", "streamed", "big", "empty"]))
        if kind == "big":  # several blocks: decoded block by block
            payload = payload * (200_000 // (len(payload) + 1) + 1)
        if kind == "empty":
            payload = b""
        if kind == "no-checksum":
            parts.append(frame(payload, checksum=False))
        elif kind == "streamed":
            parts.append(streamed_frame(payload))
        else:
            parts.append(frame(payload))
    data = bytearray(b"".join(parts))
    mutation = draw(st.sampled_from(["none", "none", "flip", "cut", "skippable"]))
    if mutation == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data[at] ^= 1 << draw(st.integers(0, 7))
    elif mutation == "cut" and data:
        del data[draw(st.integers(0, len(data) - 1)) :]
    elif mutation == "skippable":
        data += b"\x50\x2a\x4d\x18\x00\x00\x00\x00"
    options: dict[str, Any] = {}
    if draw(st.booleans()):
        options["max_decompressed"] = draw(st.integers(1, 400_000))
    if draw(st.booleans()):
        options["max_line"] = draw(st.integers(1, 500))
    if draw(st.booleans()):
        options["chunk_size"] = draw(st.integers(1, 5000))
    return bytes(data), options


@settings(max_examples=examples(60))
@given(logs())
def test_random_logs_read_the_same_ahead_and_inline(case: tuple[bytes, dict[str, Any]]) -> None:
    data, options = case
    same_everywhere(data, **options)


def test_a_corrupt_frame_in_a_batch_reports_the_frame_by_frame_error() -> None:
    """One bad frame among good ones: the batch decode fails, every frame is decoded alone, and
    the finding is the one a frame-by-frame decode gives, at the same frame."""
    frames = [frame(b'{"seq":%d}\n' % i) for i in range(40)]
    bad = bytearray(frames[17])
    bad[-2] ^= 0x40  # the checksum
    frames[17] = bytes(bad)
    items, summary, ends, raised = same_everywhere(b"".join(frames))
    assert raised is None and summary is not None
    issues = [i for i in items if isinstance(i, PhysicalIssue)]
    assert [(i.rule, i.frame) for i in issues] == [("zstd-checksum", 17)]
    assert summary.frames == 17 and len(ends) == 17 and summary.stopped_early


def test_budget_reached_inside_a_batch_stops_at_the_same_frame() -> None:
    frames = [frame(b'{"seq":%d,"pad":"%s"}\n' % (i, b"x" * 100)) for i in range(50)]
    thirty = sum(len(zstandard.ZstdDecompressor().decompress(f)) for f in frames[:30])
    _, summary, _, _ = same_everywhere(b"".join(frames), max_decompressed=thirty + 5)
    assert summary is not None and summary.frames == 30 and summary.stopped_early


# --- the thread stops with its consumer -------------------------------------------------------


def many_frames(count: int, line: bytes = b'{"seq":1,"pad":"' + b"y" * 200 + b'"}\n') -> bytes:
    return b"".join(frame(line * 40) for _ in range(count))


def wait_for_no_thread() -> list[threading.Thread]:
    for _ in range(200):
        if not ahead_threads():
            break
        time.sleep(0.01)
    return ahead_threads()


def test_closing_the_batches_early_stops_the_thread() -> None:
    assert wait_for_no_thread() == []
    reader = ZstdReader(io.BytesIO(many_frames(3000)), ahead=True)
    batches = reader.batches()
    next(batches)
    assert len(ahead_threads()) == 1
    batches.close()  # type: ignore[attr-defined]
    assert ahead_threads() == []  # close() joined it


def test_an_abandoned_reader_stops_its_thread() -> None:
    assert wait_for_no_thread() == []
    batches = ZstdReader(io.BytesIO(many_frames(3000)), ahead=True).batches()
    next(batches)
    del batches
    gc.collect()
    assert ahead_threads() == []


def test_an_exception_in_the_consumer_stops_the_thread_before_the_file_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's tap raises: run_scan closes the reader (its thread ends) before open_source
    closes the file, so nothing reads a closed (or reused) descriptor."""
    monkeypatch.setattr(zstd_reader, "more_than_one_cpu", lambda: True)  # a thread, whatever the machine
    log = tmp_path / "session.jsonl.zstd"
    source = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    # long enough that the thread is still reading (its queue full) when the tap raises
    log.write_bytes(frame(lines[0]) + b"".join(frame(b"".join(lines[1:]) * 20) for _ in range(400)))

    class Stop(Exception):
        pass

    def tap(batch: Any, dialect: Any) -> None:
        raise Stop

    alive: list[threading.Thread] | None = None
    try:
        run_scan(log, tap=tap)
    except Stop:
        alive = ahead_threads()  # the traceback (and the reader's frame) still alive here
    assert alive == []


def test_a_thread_error_surfaces_after_the_items_before_it() -> None:
    """A read that fails mid-file: the items decoded before it arrive, then the same error as
    the inline reader raises, at the same place."""
    data = many_frames(400)

    class Failing(io.RawIOBase):
        def __init__(self) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            if self._data.tell() >= len(data) // 2:
                raise OSError(5, "Input/output error")
            chunk = self._data.read(min(len(buffer), 4096))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    seen: dict[bool, tuple[list[Any], str]] = {}
    for ahead in (False, True):
        reader = ZstdReader(Failing(), ahead=ahead, chunk_size=4096)  # type: ignore[arg-type]
        items: list[Any] = []
        with pytest.raises(OSError) as raised:
            for item in reader.batches():
                items.append(item)
        seen[ahead] = (items, str(raised.value))
    assert seen[True] == seen[False]
    assert seen[True][0] and seen[True][1] == "[Errno 5] Input/output error"
    assert wait_for_no_thread() == []


def test_the_queue_bounds_the_read_ahead() -> None:
    """A consumer that stops taking items: the thread reads at most the queue's groups (plus
    the one it is building and one read chunk) ahead of it, however long the file."""
    rng = random.Random(7)
    # incompressible-ish lines, so compressed bytes track plaintext bytes
    lines = [b'{"seq":%d,"x":"%s"}\n' % (i, rng.randbytes(300).hex().encode()) for i in range(40_000)]
    data = b"".join(frame(b"".join(lines[i : i + 20])) for i in range(0, len(lines), 20))
    assert len(data) > 10 << 20

    class Counting(io.BytesIO):
        taken = 0

        def read(self, size: int | None = -1) -> bytes:
            out = super().read(size)
            Counting.taken += len(out)
            return out

    chunk = 64 << 10
    batches = ZstdReader(Counting(data), chunk_size=chunk, ahead=True).batches()
    next(batches)
    time.sleep(0.5)  # give the thread every chance to run away
    bound = chunk + (ahead_module_depth() + 2) * (zstd_reader.GROUP_PLAINTEXT + (128 << 10))
    assert Counting.taken <= bound, (Counting.taken, bound)
    batches.close()  # type: ignore[attr-defined]


def ahead_module_depth() -> int:
    return zstd_reader.AHEAD_GROUPS


def test_ahead_hands_items_over_in_order_and_reraises() -> None:
    def produce() -> Iterator[int]:
        yield from range(100)
        raise ValueError("after 100")

    got: list[int] = []
    with pytest.raises(ValueError, match="after 100"):
        for item in ahead_module.Ahead(produce, 2):
            got.append(item)
    assert got == list(range(100))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_sigint_while_the_thread_waits_on_a_stalled_pipe_exits_130(tmp_path: Path) -> None:
    """validate reads a zstd FIFO whose writer stalls: the main thread waits for the reader's
    thread, which waits in read(). SIGINT ends the process at once with status 130."""
    fifo = tmp_path / "log.zstd"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "sesstool", "validate", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    writer = os.open(fifo, os.O_WRONLY)
    try:
        os.write(writer, frame(b'{"type":"session/header","v":0}\n') + frame(b'{"seq":1}\n')[:5])
        time.sleep(1.0)  # the child is now inside the read
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
    finally:
        os.close(writer)
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, stderr
    assert b"Traceback" not in stderr


@pytest.mark.parametrize(
    ("cpus", "threaded"), [({0}, False), ({5}, False), ({0, 1}, True), (set(range(64)), True)]
)
def test_a_reader_starts_a_thread_only_when_a_second_cpu_can_run_it(
    monkeypatch: pytest.MonkeyPatch, cpus: set[int], threaded: bool
) -> None:
    """The default follows the process's affinity mask (a cpuset or ``taskset`` narrows it), not
    the machine's CPU count; an explicit ``ahead`` wins either way."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cpus)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert ahead_module.more_than_one_cpu() is threaded
    assert wait_for_no_thread() == []
    data = many_frames(3000)
    batches = ZstdReader(io.BytesIO(data)).batches()
    next(batches)
    assert len(ahead_threads()) == (1 if threaded else 0)
    batches.close()  # type: ignore[attr-defined]
    for explicit in (False, True):
        batches = ZstdReader(io.BytesIO(data), ahead=explicit).batches()
        next(batches)
        assert len(ahead_threads()) == (1 if explicit else 0)
        batches.close()  # type: ignore[attr-defined]
