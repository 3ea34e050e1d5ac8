"""Cutting a log at any byte never raises: readers return the longest complete prefix (§6.3)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.model import ScanResult
from sesstool.core.scanner import Scanner
from sesstool.store.raw_reader import RawReader
from sesstool.store.zstd_reader import ZstdReader
from tests.conftest import FIXTURES

SMALL = [
    "crash-dangling-call",
    "crash-not-started",
    "v0-tiny",
    "v4-tiny",
    "chunks-packed",
    "compaction",
    "bad-surrogate",
    "corrupt-middle",
]


def _log(scenario: str, zstd: bool) -> bytes:
    directory = FIXTURES / "dsh" / scenario
    name = next(
        p.name
        for p in directory.iterdir()
        if p.name.startswith("session") and p.name.endswith(".zstd") == zstd
    )
    return (directory / name).read_bytes()


def _scan(reader: RawReader | ZstdReader) -> tuple[list[bytes], ScanResult]:
    lines: list[bytes] = []
    scanner = Scanner("cut")
    for item in reader.batches():
        if isinstance(item, tuple):
            lines.extend(item[0])
        scanner.feed(item)
    return lines, scanner.finish(reader.summary)


@pytest.mark.parametrize("scenario", SMALL)
def test_raw_cut_at_every_byte(scenario: str) -> None:
    data = _log(scenario, zstd=False)
    whole_verdict = _scan(RawReader(io.BytesIO(data)))[1].verdict
    for cut in range(len(data) + 1):
        prefix = data[:cut]
        lines, result = _scan(RawReader(io.BytesIO(prefix)))
        complete = prefix[: prefix.rfind(b"\n") + 1]
        assert lines == complete.split(b"\n")[:-1], cut
        torn = len(prefix) - len(complete)
        if whole_verdict == "corrupt":
            continue  # a prefix may legitimately be torn, corrupt or interrupted
        if cut == 0:
            assert result.verdict == "corrupt" and result.findings[0].rule == "empty-file"
        elif not complete:
            # the header is published atomically (§10.3): a cut inside it is corruption
            assert result.verdict == "corrupt"
            assert "missing-header" in [f.rule for f in result.findings]
        elif torn:
            assert result.verdict == "torn", cut
            assert result.tail.kind == "torn-line" and result.tail.committed_bytes == len(complete)
        else:
            assert result.verdict in ("clean", "interrupted"), (cut, result.findings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=st.sampled_from(SMALL), frac=st.floats(0, 1))
def test_zstd_cut_anywhere(scenario: str, frac: float) -> None:
    data = _log(scenario, zstd=True)
    prefix = data[: int(len(data) * frac)]
    lines, result = _scan(ZstdReader(io.BytesIO(prefix)))
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as r:
        full = r.read().split(b"\n")
    # the delivered lines are exactly the first lines of the full plaintext
    assert lines == full[: len(lines)]
    if len(prefix) < len(data) and result.verdict != "corrupt":
        assert result.verdict in ("torn", "clean", "interrupted")
        if result.verdict != "torn":
            # cut exactly at a frame boundary: nothing torn
            assert result.tail.kind == "none"


ALL_LOGS = sorted(
    p
    for p in (FIXTURES / "dsh").glob("*/session*.jsonl*")
    if p.parent.name != "zstd-bomb" and p.name.endswith((".jsonl", ".zstd"))
)


def _scan_bytes(data: bytes) -> ScanResult:
    reader: RawReader | ZstdReader
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        reader = ZstdReader(io.BytesIO(data), max_decompressed=1 << 24)
    else:
        reader = RawReader(io.BytesIO(data))
    return _scan(reader)[1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=st.sampled_from(ALL_LOGS), frac=st.floats(0, 1))
def test_every_fixture_cut_anywhere_is_classified(log: Path, frac: float) -> None:
    data = log.read_bytes()
    result = _scan_bytes(data[: int(len(data) * frac)])
    assert result.verdict in ("clean", "interrupted", "torn", "corrupt", "unsupported")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    log=st.sampled_from(ALL_LOGS),
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=8),
)
def test_mutated_bytes_never_crash_the_scanner(log: Path, edits: list[tuple[float, int]]) -> None:
    data = bytearray(log.read_bytes())
    for where, value in edits:
        data[min(int(where * len(data)), len(data) - 1)] = value
    result = _scan_bytes(bytes(data))
    assert result.verdict in ("clean", "interrupted", "torn", "corrupt", "unsupported")
