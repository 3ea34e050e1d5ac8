"""RawReader: complete lines with offsets, the torn partial line, CRLF untouched (spec §9.1,
§6.3)."""

from __future__ import annotations

import io

import pytest

from sesstool.core.physical import Batch, PartialLine, PhysicalIssue, ReadSummary
from sesstool.store.raw_reader import RawReader

Item = Batch | PhysicalIssue


def read(data: bytes, **options: int) -> tuple[list[Item], ReadSummary]:
    reader = RawReader(io.BytesIO(data), **options)
    items = list(reader.batches())
    return items, reader.summary


def flat(items: list[Item]) -> list[tuple[bytes, int, int]]:
    out = []
    for item in items:
        assert not isinstance(item, PhysicalIssue)
        lines, offset, number, frame = item
        assert frame is None
        for data in lines:
            out.append((data, offset, number))
            offset += len(data) + 1
            number += 1
    return out


def test_offsets_and_line_numbers_across_chunks() -> None:
    data = b'{"a":1}\n{"b":22}\n\n{"c":333}\n'
    items, summary = read(data, chunk_size=5)
    assert flat(items) == [
        (b'{"a":1}', 0, 1),
        (b'{"b":22}', 8, 2),
        (b"", 17, 3),
        (b'{"c":333}', 18, 4),
    ]
    assert summary == ReadSummary("raw", len(data), len(data), 4, 0, None, None, False, None)


def test_partial_line_is_the_torn_tail() -> None:
    items, summary = read(b'{"a":1}\n{"b":')
    assert flat(items) == [(b'{"a":1}', 0, 1)]
    assert summary.partial_line == PartialLine(8, 5, 2)
    assert summary.plaintext_bytes == 13 and summary.lines == 1


def test_crlf_stays_in_the_line() -> None:
    items, _ = read(b'{"a":1}\r\n{"b":2}\n')
    assert flat(items) == [(b'{"a":1}\r', 0, 1), (b'{"b":2}', 9, 2)]


def test_empty_file() -> None:
    items, summary = read(b"")
    assert items == []
    assert summary == ReadSummary("raw", 0, 0, 0, 0, None, None, False, None)


def test_cut_at_every_byte() -> None:
    data = b'{"h":1}\n{"seq":1}\r\n\n{"seq":2,"x":"\xc3\xa9"}\n'
    for cut in range(len(data) + 1):
        prefix = data[:cut]
        items, summary = read(prefix, chunk_size=3)
        committed = prefix[: prefix.rfind(b"\n") + 1]
        assert [line for line, _, _ in flat(items)] == committed.split(b"\n")[:-1]
        tail = len(prefix) - len(committed)
        expected = PartialLine(len(committed), tail, committed.count(b"\n") + 1) if tail else None
        assert summary.partial_line == expected
        assert summary.file_bytes == cut


def test_line_too_long_passes_through() -> None:
    reader = RawReader(io.BytesIO(b"ok\n" + b"x" * 100 + b"\nend\n"), max_line=10)
    items = list(reader.batches())
    issues = [i for i in items if isinstance(i, PhysicalIssue)]
    assert [(i.rule, i.offset, i.line, i.frame) for i in issues] == [("line-too-long", 3, 2, None)]
    assert reader.summary.lines == 3


def test_one_pass() -> None:
    reader = RawReader(io.BytesIO(b"a\n"))
    with pytest.raises(RuntimeError):
        _ = reader.summary
    list(reader.batches())
    with pytest.raises(RuntimeError):
        reader.batches()
    assert reader.summary.lines == 1
