"""Issue 11 item 1: the scanner lets a batch of lines go once its records are through. A write
command (``repair``, ``fork``, ``migrate``) keeps its scanner to the end (its state continues into
verification), and with the batch it kept the last lines the scan read — up to a read's 1 MiB,
more or less by where the file ends, so that ``migrate`` of N and 4N units differed by up to about
a mebibyte that nothing held on purpose (docs/reliability.md, the item 1 "still held" paragraph).
On main's code (2a80eb3) the batch is still referenced after ``feed``; the addresses a scan
reports are the same (here, and the addresses every suite checks)."""

from __future__ import annotations

import gc
import sys
import weakref

import orjson
import pytest

from sesstool.core.options import ScanOptions
from sesstool.core.physical import ReadSummary
from sesstool.dialects.registry import open_scanner
from tests.conftest import FIXTURES


class _Lines(list[bytes]):
    """A batch that can be watched (a plain list cannot be weakly referenced)."""


def _v4(n: int, open_turn: bool) -> list[bytes]:
    lines = [
        b'{"type":"session","version":4,"id":"s1","createdAt":1000,"isSeeded":false,"delegationDepth":0}'
    ]
    lines.append(orjson.dumps({"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}}))
    for seq in range(1, n):
        data = {"id": f"u{seq}", "role": "user", "source": {"kind": "user"}, "content": []}
        lines.append(orjson.dumps({"type": "user/message", "seq": seq, "time": 1000, "data": data}))
    if not open_turn:
        end = {"turn": 1, "reason": {"kind": "completed"}}
        lines.append(orjson.dumps({"type": "turn/end", "seq": n, "time": 1000, "data": end}))
    return lines


def test_a_batch_is_not_kept_once_fed() -> None:
    scanner = open_scanner("x.jsonl", ScanOptions())
    lines = _v4(50, open_turn=True)
    counts = [sys.getrefcount(line) for line in lines]
    first = _Lines(lines)
    size = sum(map(len, first)) + len(first)
    watched = weakref.ref(first)
    scanner.feed((first, 0, 1, None))
    del first
    gc.collect()
    assert watched() is None
    # nor any line of it but the header's, whose bytes are the scan's Header (not its decoded
    # objects: core.header.Header.raw decodes them when asked)
    assert [sys.getrefcount(line) for line in lines][1:] == counts[1:]
    result = scanner.finish(ReadSummary("raw", size, size, len(_v4(50, True)), 0, None, None, False, None))
    assert result.open.turn == 1  # the scan went on as before
    assert result.header is not None and result.header.line is lines[0]
    assert result.header.raw == orjson.loads(lines[0])


def test_addresses_after_the_batch_are_the_last_records() -> None:
    """The findings and their addresses the same whether the log comes in one batch or in two
    (the first let go before the second: a position asked later is walked from what is kept)."""
    lines = _v4(30, open_turn=True)
    size = sum(map(len, lines)) + len(lines)
    found = []
    for split in (len(lines), 10):  # one batch, or two
        scanner = open_scanner("x.jsonl", ScanOptions())
        offset = 0
        for part, start in ((lines[:split], 1), (lines[split:], split + 1)):
            if part:
                scanner.feed((_Lines(part), offset, start, None))
                offset += sum(map(len, part)) + len(part)
        summary = ReadSummary("raw", size, size, len(lines), 0, None, None, False, None)
        result = scanner.finish(summary)
        found.append([(f.rule, f.address) for f in result.findings])
    assert found[0] == found[1] and found[0], found


_OTHER_DIALECTS = {  # a real log of each other dialect, read as the engine reads it (one batch)
    "claude": FIXTURES / "claude" / "projects" / "subagent" / "e7114e93-e94d-5201-934d-81e8a6bea216.jsonl",
    "codex": sorted((FIXTURES / "codex" / "auto-compaction").glob("rollout-*.jsonl"))[0],
    "mini": FIXTURES / "mini" / "basic" / "session.jsonl",
}


@pytest.mark.parametrize("dialect", sorted(_OTHER_DIALECTS))
def test_every_dialects_scanner_lets_a_batch_go(dialect: str) -> None:
    """The same for the Claude, Codex and mini-agent scanners, each detected from the log's
    first line: the batch and its lines are not referenced once fed, and the scan finishes as
    usual."""
    path = _OTHER_DIALECTS[dialect]
    lines = path.read_bytes().splitlines()
    scanner = open_scanner(str(path), ScanOptions())
    counts = [sys.getrefcount(line) for line in lines]
    batch = _Lines(lines)
    watched = weakref.ref(batch)
    scanner.feed((batch, 0, 1, None))
    del batch
    gc.collect()
    assert watched() is None
    # nor any line of it (the Claude scanner kept the last one it decoded: a log ending in a
    # 16 MiB line held it through derive's projection, test_long_last_line.py) but a header's
    # bytes, which are the scan's Header (Codex's session_meta, the mini-agent's first event)
    header = 1 if dialect in ("codex", "mini") else 0
    assert [sys.getrefcount(line) for line in lines][header:] == counts[header:]
    size = sum(map(len, lines)) + len(lines)
    result = scanner.finish(ReadSummary("raw", size, size, len(lines), 0, None, None, False, None))
    assert result.dialect == dialect
    if header:
        assert result.header is not None and result.header.line is lines[0]
        assert result.header.raw == orjson.loads(lines[0])
