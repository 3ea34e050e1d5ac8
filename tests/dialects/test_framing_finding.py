"""The zstd frame layout is judged by the dialect, not the store (dsh §9.2, docs/format.md "zstd"):
the reader reports ``FramingFact``s; ``Dialect.framing_finding`` turns them into findings."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import zstandard

from sesstool.core import rule_ids as R
from sesstool.core.options import ScanOptions
from sesstool.core.physical import FRAME_0_MORE_LINES, FRAME_0_OPEN_LINE, FramingFact
from sesstool.dialects import registry
from sesstool.store.zstd_reader import ZstdReader

MORE = FramingFact(FRAME_0_MORE_LINES, "frame 0 holds more than one line", 0, 1, 0, 0)
OPEN = FramingFact(FRAME_0_OPEN_LINE, "frame 0 does not end with a newline", 0, 1, 0, 0)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CLEAN = FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl"
MINI = FIXTURES / "mini" / "basic" / "session.jsonl"


def test_dsh_judges_frame_0() -> None:
    dsh = registry.by_name("dsh")
    assert dsh.framing_finding(MORE, one_frame=False) == (
        R.ZSTD_HEADER_FRAME,
        "frame 0 holds more than the header line: it must be exactly one line (spec §9.2)",
    )
    rule, message = dsh.framing_finding(MORE, one_frame=True) or ("", "")
    assert rule == R.ZSTD_SINGLE_FRAME and "`zstd FILE`" in message
    for one_frame in (False, True):  # an open line is never a generic compressor's whole log
        assert dsh.framing_finding(OPEN, one_frame) == (
            R.ZSTD_HEADER_FRAME,
            "frame 0 does not end with a newline: it must be exactly one line (spec §9.2)",
        )
    assert dsh.framing_finding(FramingFact("frame-9-later", "x", 0, 1, 0, 0), one_frame=False) is None


@pytest.mark.parametrize("name", [d.name for d in registry.DIALECTS if d.name != "dsh"])
def test_the_other_dialects_set_no_rule_on_frames(name: str) -> None:
    dialect = registry.by_name(name)
    for fact in (MORE, OPEN):
        for one_frame in (False, True):
            assert dialect.framing_finding(fact, one_frame) is None


def scan_findings(data: bytes, dialect: str) -> list[tuple[str, int | None]]:
    """(rule, frame) of every finding, in the order the scan reported them."""
    scanner = registry.open_scanner("x.jsonl.zstd", ScanOptions(), registry.forced(dialect))
    reader = ZstdReader(io.BytesIO(data))
    for item in reader.batches():
        scanner.feed(item)
    return [(f.rule, f.address.frame) for f in scanner.finish(reader.summary).findings]


def test_the_header_frame_finding_comes_before_the_next_frame_s() -> None:
    """Judged when the reading leaves frame 0, so it stands where the reader used to put it:
    after frame 0's lines, before frame 1's findings (a seq gap there)."""
    c = zstandard.ZstdCompressor(write_checksum=True)
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    assert scan_findings(c.compress(lines[0]) + c.compress(b"".join(lines[1:])), "dsh") == []
    found = scan_findings(c.compress(b"".join(lines[:2])) + c.compress(b"".join(lines[3:])), "dsh")
    assert found[0] == (R.ZSTD_HEADER_FRAME, 0) and (R.SEQ_GAP, 1) in found[1:]
    # the whole log in one frame: the warning, at the end; the same log in its layout: nothing
    found = scan_findings(c.compress(b"".join(lines)), "dsh")
    assert found == [(R.ZSTD_SINGLE_FRAME, 0)]
    # the mini-agent layout has no header frame: no finding in one frame or split anywhere
    mini = MINI.read_bytes().splitlines(keepends=True)
    assert scan_findings(c.compress(b"".join(mini)), "mini") == []
    assert scan_findings(c.compress(b"".join(mini[:3])) + c.compress(b"".join(mini[3:])), "mini") == []
