"""Issue 11, items 1 and 2: small hostile logs must not cost memory or time out of proportion
to their longest line. Memory is asserted from the kernel's peak-RSS accounting of a child
running under an address-space limit (``resource``); time through operation counts (how many
items a reader hands over), never the wall clock."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import zstandard

from sesstool.core.chunk_rows import expand_row
from sesstool.core.physical import PhysicalIssue
from sesstool.core.seq_ranges import SeqRangeError, decode_seq_set, decode_seqs
from sesstool.store.raw_reader import RawReader
from sesstool.store.zstd_reader import ZstdReader
from tests.adversarial.hostile_logs import V4_HEADER, packed_row_bomb, run_measured, seq_range_bomb, v4_user
from tests.conftest import FIXTURES

MiB = 1 << 20
# Enough for the interpreter, its imports and the modest logs below; the hostile inputs used to
# need gigabytes (3.3 GB for the seq-range line, 3 GB for a 4M-member row).
LIMIT = 600 * MiB


# -- 1(a): overlapping ranges are judged on the ranges, never expanded -------------------------


def test_overlapping_ranges_are_refused_without_expansion() -> None:
    with pytest.raises(SeqRangeError, match="strictly increasing"):
        decode_seq_set([[0, 8610]] * 10_000, 8611, False)
    with pytest.raises(SeqRangeError, match="strictly increasing"):
        decode_seq_set([[0, 5], [5, 9]], 100, False)  # overlap by one seq
    with pytest.raises(SeqRangeError, match="strictly increasing"):
        decode_seq_set([[0, 5], 3], 100, False)  # a seq inside an earlier range


def test_seq_set_membership_matches_the_expansion() -> None:
    value = [1, [3, 7], 9, [20, 2_000_000_000]]
    seqs = decode_seq_set(value, 2_000_000_001, False)
    assert len(seqs.starts) == 4  # four elements held, not two billion seqs
    for s in (1, 3, 5, 7, 9, 20, 1_000_000_000, 2_000_000_000):
        assert s in seqs
    for s in (0, 2, 8, 10, 19, 2_000_000_001, -1):
        assert s not in seqs
    assert len(seqs) == 1 + 5 + 1 + (2_000_000_000 - 20 + 1)
    assert decode_seqs([1, [3, 5]], 10, False) == [1, 3, 4, 5]
    assert decode_seqs([5, 2], 10, False) == [5, 2]  # an unencoded list keeps its order


def test_seq_range_bomb_costs_no_more_than_its_line(tmp_path: Path) -> None:
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(seq_range_bomb())
    for args in (["validate"], ["inspect"], ["derive"]):
        m = run_measured([*args, str(path)], address_space=LIMIT, cwd=tmp_path)
        assert "Traceback" not in m.stderr and "MemoryError" not in m.stderr, m.stderr
        assert m.peak_rss < 150 * MiB, (args, m.peak_rss)
    m = run_measured(["validate", "--format", "json", str(path)], address_space=LIMIT, cwd=tmp_path)
    assert m.exit_code == 1
    (finding,) = [f for f in json.loads(m.stdout)["files"][0]["findings"] if f["rule"] == "source-seqs-shape"]
    assert finding["address"]["seq"] == 8611 and "strictly increasing" in finding["message"]


def test_valid_wide_ranges_are_checked_without_expansion(tmp_path: Path) -> None:
    """A replacement citing [0, N-1] as one range: membership by bisection, exit 0."""
    events = 3000
    body = b"".join(v4_user(s) for s in range(events))
    op = {"op": "replace", "startSeq": 0, "endSeq": events - 1}
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(V4_HEADER + body + v4_user(events, sourceEventSeqs=[[0, events - 1]], surfaceOp=op))
    m = run_measured(["validate", "--format", "json", str(path)], address_space=LIMIT, cwd=tmp_path)
    doc = json.loads(m.stdout)["files"][0]
    assert m.exit_code == 0 and doc["verdict"]["verdict"] == "clean", doc["findings"]
    path.write_bytes(V4_HEADER + body + v4_user(events, sourceEventSeqs=[[1, events - 1]], surfaceOp=op))
    m = run_measured(["validate", "--format", "json", str(path)], address_space=LIMIT, cwd=tmp_path)
    (uncited,) = [f for f in json.loads(m.stdout)["files"][0]["findings"] if f["rule"] == "replace-uncited"]
    assert "missing [0]" in uncited["message"]


# -- 1(b): a packed row's events are built one at a time ---------------------------------------


def test_chunk_row_is_lazy_and_exact() -> None:
    row = {
        "type": "tool-call-chunks",
        "seq0": 10,
        "time0": 100,
        "data": {
            "turn": 1,
            "step": 2,
            "index": 0,
            "dt": [1, -3],
            "id": "c",
            "name": "bash",
            "args": ["{", "}", "x"],
        },
    }
    events = expand_row(row)
    assert len(events) == 3 and events.seq0 == 10 and events.last_seq == 12
    built = list(events)
    assert [e["seq"] for e in built] == [10, 11, 12] and [e["time"] for e in built] == [100, 101, 98]
    assert built[1]["data"]["chunk"] == {
        "type": "tool-call-delta",
        "index": 0,
        "id": "c",
        "name": "bash",
        "argumentsDelta": "}",
    }
    assert events[-1] == built[-1] and events[0] == built[0] and list(events[1:]) == built[1:]


def test_packed_row_bomb_costs_a_small_multiple_of_its_line(tmp_path: Path) -> None:
    """300k members in one 1.8 MB line (the issue saw 4M members, 24 MB, cost 3 GB). Decoding the line
    itself costs ~18× its size in Python objects (one-letter strings); nothing may add to that
    per member."""
    data = packed_row_bomb(300_000)
    line = max(map(len, data.split(b"\n")))
    raw = tmp_path / "session.jsonl"
    raw.write_bytes(data)
    for args in (["validate"], ["inspect"], ["repair", "--dry-run"]):
        m = run_measured([*args, str(raw)], address_space=LIMIT, cwd=tmp_path)
        assert m.exit_code == 0, m.stderr
        assert m.peak_rss < 32 * line + 48 * MiB, (args, m.peak_rss)
    out = tmp_path / "session.v4.jsonl"
    m = run_measured(["migrate", "-o", str(out), str(raw)], address_space=LIMIT, cwd=tmp_path)
    assert m.exit_code == 0, m.stderr
    assert m.peak_rss < 48 * line + 48 * MiB, m.peak_rss


# -- 2: filler lines are skipped in bulk, addresses stay exact ---------------------------------


def _items(reader: RawReader | ZstdReader) -> list[object]:
    return list(reader.batches())


@pytest.mark.parametrize("filler", [b"\n", b"\x00\x00\n", b"\x00\n\n"])
def test_a_flood_of_filler_lines_is_one_issue_per_read_chunk(filler: bytes) -> None:
    head = b'{"a":1}\n'
    count = (8 * MiB) // len(filler)
    data = head + filler * count + b'{"b":2}\n'
    reader = RawReader(io.BytesIO(data))
    items = _items(reader)
    issues = [i for i in items if isinstance(i, PhysicalIssue)]
    lines = [line for i in items if isinstance(i, tuple) for line in i[0]]
    # operation count: a handful of items per 1 MiB chunk, never one object per line
    assert len(items) <= 4 * (len(data) // MiB + 1)
    assert len(lines) < 200
    total = filler.count(b"\n") * count + 2
    assert sum(i.lines for i in issues) + len(lines) == reader.summary.lines == total
    first = issues[0]
    assert (first.offset, first.line) == (len(head), 2)
    assert first.rule == ("nul-bytes" if filler.startswith(b"\x00") else "invalid-json")
    last = [i for i in items if isinstance(i, tuple)][-1]
    assert last[0][-1] == b'{"b":2}' and last[2] + len(last[0]) - 1 == total
    assert last[1] + sum(len(x) + 1 for x in last[0][:-1]) == len(head) + len(filler) * count


def test_short_filler_runs_keep_their_per_line_findings() -> None:
    data = b'{"a":1}\n' + b"\n" * 10 + b'{"b":2}\n'
    items = _items(RawReader(io.BytesIO(data)))
    assert not any(isinstance(i, PhysicalIssue) for i in items)


def test_filler_that_starts_inside_a_line_counts_from_the_next_line() -> None:
    data = b'{"a":1}\x00' + b"\n" * 500 + b'{"b":2}\n'
    items = _items(RawReader(io.BytesIO(data), chunk_size=64 * 1024))
    batches = [i for i in items if isinstance(i, tuple)]
    (issue,) = [i for i in items if isinstance(i, PhysicalIssue)]
    assert batches[0][0] == [b'{"a":1}\x00'] and (issue.offset, issue.line, issue.lines) == (9, 2, 499)
    assert batches[-1][0] == [b'{"b":2}'] and batches[-1][1:3] == (len(data) - 8, 501)


def test_zstd_newline_bomb_is_bounded_in_operations() -> None:
    """The issue's 38 KB frame that expands to 1 GiB of newlines: here 256 MiB, same shape."""
    header = (FIXTURES / "dsh" / "v4-tiny" / "session.v4.jsonl").read_bytes().split(b"\n")[0] + b"\n"
    cctx = zstandard.ZstdCompressor(level=19, write_checksum=True)
    blob = cctx.compress(header) + cctx.compress(b"\n" * (256 * MiB))
    assert len(blob) < 64 * 1024
    reader = ZstdReader(io.BytesIO(blob))
    count = 0
    filler = 0
    for item in reader.batches():
        count += 1
        if isinstance(item, PhysicalIssue):
            filler += item.lines
    assert filler == 256 * MiB and reader.summary.lines == 256 * MiB + 1
    assert count <= 16 * 256 + 8  # the decoder hands over 128 KiB blocks: a few items each


def test_newline_bomb_through_the_cli_has_its_exact_address(tmp_path: Path) -> None:
    base = (FIXTURES / "dsh" / "v0-tiny" / "session.jsonl").read_bytes()
    path = tmp_path / "session.jsonl"
    path.write_bytes(base + b"\n" * (64 * MiB))
    m = run_measured(["validate", "--format", "json", str(path)], address_space=LIMIT, cwd=tmp_path)
    doc = json.loads(m.stdout)["files"][0]
    assert m.exit_code == 0 and doc["verdict"]["verdict"] == "torn"
    (tail,) = [f for f in doc["findings"] if f["rule"] == "uncommitted-tail"]
    assert tail["address"]["offset"] == len(base) and tail["address"]["line"] == base.count(b"\n") + 1
    assert f"the {64 * MiB - 1} after it" in tail["message"]
    assert m.peak_rss < 100 * MiB
