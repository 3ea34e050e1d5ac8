"""The unsafe-integer prefilter run on the splitter's chunks (issue 14): a batch is marked
``DigitRunFree`` only when none of its lines holds 16 digits in a row — whatever the chunk
boundaries, a digit run split across them included — so the scanner's findings are the ones the
per-batch test gives."""

from __future__ import annotations

from pathlib import Path

import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.unsafe_integers import DigitRunFree, has_digit_run
from sesstool.engine.scan import scan_source
from sesstool.store.lines import LineSplitter
from tests.conftest import FIXTURES, examples

# digits and their neighbours, so runs of 15, 16 and 17 digits (and broken ones) are common
PIECE = st.sampled_from([b"1", b"2345", b"67890123", b"9007199254740993", b"x", b'"', b"-", b".", b"e"])
LINE = st.lists(PIECE, max_size=12).map(b"".join)


def per_line(lines: list[bytes]) -> bool:
    """The prefilter's question asked of every line alone (the oracle)."""
    return any(has_digit_run(line) for line in lines)


@settings(max_examples=examples(300))
@given(
    lines=st.lists(LINE, min_size=1, max_size=40),
    cuts=st.lists(st.integers(1, 40), max_size=30),
    max_line=st.sampled_from([8, 30, 1 << 20]),
    tail=st.booleans(),
)
def test_a_marked_batch_has_no_digit_run_and_an_unmarked_one_had_a_reason(
    lines: list[bytes], cuts: list[int], max_line: int, tail: bool
) -> None:
    data = b"\n".join(lines) + (b"" if tail else b"\n")
    chunks, at = [], 0
    for size in cuts:
        if at >= len(data):
            break
        chunks.append(data[at : at + size])
        at += size
    chunks.append(data[at:])
    splitter = LineSplitter(max_line)
    for chunk in chunks:
        for item in splitter.feed(chunk):
            if not isinstance(item, tuple):
                continue
            batch = item[0]
            if type(batch) is DigitRunFree:
                assert not per_line(batch)  # never a false negative: the finding is never skipped
            elif max_line == 1 << 20 and not has_digit_run(data):
                raise AssertionError(f"a batch without any digit run was left unmarked: {batch!r}")


def findings(path: Path) -> list[tuple[str, str, object]]:
    result = scan_source(path).scan
    return [(f.rule, f.message, f.address) for f in result.findings]


def test_findings_are_the_same_with_and_without_the_chunk_prefilter(tmp_path: Path) -> None:
    """Every raw and zstd dsh fixture, and a log whose big integers sit across chunk and frame
    boundaries, scanned with the chunk prefilter and without it."""
    lines = (FIXTURES / "dsh" / "v0-tiny" / "session.jsonl").read_bytes().split(b"\n")
    kind = b'"source":{"kind":"user"}'
    assert kind in lines[3]
    lines[3] = lines[3].replace(kind, b'"source":{"kind":"user","n":[9007199254740993,123456789012345]}')
    data = b"\n".join(lines)
    raw = tmp_path / "big.jsonl"
    raw.write_bytes(data)
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    cut = data.index(b"9007199254740993") + 7  # the run split between two frames
    first = data.index(b"\n") + 1
    zstd = tmp_path / "big.jsonl.zstd"
    zstd.write_bytes(b"".join(cctx.compress(p) for p in (data[:first], data[first:cut], data[cut:])))
    logs = [
        raw,
        zstd,
        *sorted((FIXTURES / "dsh").glob("*/session.jsonl")),
        *sorted((FIXTURES / "dsh").glob("*/session.jsonl.zstd")),
    ]
    for log in (raw, zstd):
        assert [rule for rule, _, _ in findings(log)].count("unsafe-integer") == 1, log
    for log in logs:
        seen = {}
        for mode in (True, False):
            LineSplitter._prefilter = mode
            try:
                seen[mode] = findings(log)
            finally:
                LineSplitter._prefilter = True
        assert seen[True] == seen[False], log
