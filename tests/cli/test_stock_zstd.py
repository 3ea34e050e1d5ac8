"""A log compressed as a whole by the stock ``zstd`` CLI (issue 15 item 7).

The fixtures ``zstd-one-frame`` and ``zstd-one-frame-torn`` were made by the real ``zstd``
binary (their READMEs give the command) and are committed: the binary is not needed here. Each
is one checksummed frame holding the whole plaintext of a committed raw fixture; sesstool reads
it with the warning ``zstd-single-frame`` and repair/migrate write the harness's framing
(spec §9.2: the header line alone in frame 0, then the body).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import zstandard

from tests.conftest import FIXTURES, Sesstool

DSH = FIXTURES / "dsh"
ONE_FRAME = DSH / "zstd-one-frame" / "session.jsonl.zstd"
ONE_FRAME_TORN = DSH / "zstd-one-frame-torn" / "session.jsonl.zstd"
CLEAN_RAW = DSH / "clean-multiturn" / "session.jsonl"
CRASH_RAW = DSH / "crash-dangling-call" / "session.jsonl"
SINGLE = "zstd-single-frame"


def frames(data: bytes) -> list[bytes]:
    """The plaintext of each frame of a concatenation of zstd frames."""
    out = []
    while data:
        size = zstandard.frame_header_size(data[:18])
        assert size > 0
        frame_len = _frame_length(data)
        out.append(zstandard.ZstdDecompressor().decompress(data[:frame_len], max_output_size=1 << 26))
        data = data[frame_len:]
    return out


def _frame_length(data: bytes) -> int:
    """Walk one frame structurally (RFC 8878 §3.1.1), independently of the reader under test."""
    fhd = data[4]
    single = bool(fhd & 0x20)
    dict_len = (0, 1, 2, 4)[fhd & 3]
    fcs = (0, 2, 4, 8)[fhd >> 6] or (1 if single else 0)
    pos = 5 + (0 if single else 1) + dict_len + fcs
    while True:
        header = int.from_bytes(data[pos : pos + 3], "little")
        block_type, size = (header >> 1) & 3, header >> 3
        pos += 3 + (1 if block_type == 1 else size)
        if header & 1:
            return pos + (4 if fhd & 4 else 0)


def findings(doc: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in doc["findings"]]


def test_the_fixtures_are_one_frame_holding_a_raw_fixture() -> None:
    assert frames(ONE_FRAME.read_bytes()) == [CLEAN_RAW.read_bytes()]
    assert frames(ONE_FRAME_TORN.read_bytes()) == [CRASH_RAW.read_bytes()]


def test_read_with_a_warning_and_derived_like_the_raw_log(sesstool: Sesstool) -> None:
    run = sesstool("inspect", "--json", str(ONE_FRAME))
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["verdict"]["verdict"] == "clean"
    assert findings(doc) == [SINGLE]
    (finding,) = doc["findings"]
    assert finding["severity"] == "warning"
    assert "the harness refuses to load it" in finding["message"]
    derived = sesstool("derive", "--format", "jsonl", str(ONE_FRAME))
    raw = sesstool("derive", "--format", "jsonl", str(CLEAN_RAW))
    assert derived.exit_code == 0 == raw.exit_code, derived.stderr
    assert derived.stdout == raw.stdout
    checked = sesstool("validate", str(ONE_FRAME))
    assert checked.exit_code == 0  # a warning: --fail-on error passes
    assert f"warning [{SINGLE}]" in checked.stdout
    assert sesstool("validate", "--fail-on", "warning", str(ONE_FRAME)).exit_code == 1


def test_a_torn_last_record_inside_the_one_frame_is_a_tear(sesstool: Sesstool) -> None:
    """As in the raw log the file was made from: not zstd-frame-boundary corruption."""
    doc = json.loads(sesstool("inspect", "--json", str(ONE_FRAME_TORN)).stdout)
    raw = json.loads(sesstool("inspect", "--json", str(CRASH_RAW)).stdout)
    assert doc["verdict"]["verdict"] == raw["verdict"]["verdict"] == "torn"
    assert findings(doc) == [SINGLE, *findings(raw)]
    assert doc["repair"] == raw["repair"]
    screen = sesstool("inspect", str(ONE_FRAME_TORN)).stdout
    assert "repair      would write the one-frame zstd log in the harness's framing" in screen
    assert "            would append 3 closers after dropping the 17-byte torn tail:" in screen


def test_repair_writes_the_harness_framing(sesstool: Sesstool, tmp_path: Path) -> None:
    src = tmp_path / "session.jsonl.zstd"
    shutil.copyfile(ONE_FRAME_TORN, src)
    run = sesstool("repair", "--json", str(src))
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["status"] == "repaired" and doc["plan"]["reframed"] is True
    assert doc["plan"]["copied_verbatim_bytes"] == 0
    out = Path(doc["output"]["path"])
    header, body = frames(out.read_bytes())
    raw_repair = (DSH / "crash-dangling-call" / "expected" / "repair" / "session.repaired.jsonl").read_bytes()
    first_newline = raw_repair.index(b"\n") + 1
    assert header == raw_repair[:first_newline]  # the header line alone (§9.2)
    assert body == raw_repair[first_newline:]  # the raw crash's repair, byte for byte
    again = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert again["verdict"]["verdict"] == "clean" and again["findings"] == []


def test_repair_reframes_a_balanced_one_frame_log(sesstool: Sesstool, tmp_path: Path) -> None:
    src = tmp_path / "session.jsonl.zstd"
    shutil.copyfile(ONE_FRAME, src)
    run = sesstool("repair", str(src))
    assert run.exit_code == 0, run.stderr
    assert "framing   the source is one zstd frame" in run.stdout
    assert "appended  nothing: every turn was already closed" in run.stdout
    out = tmp_path / "session.repaired.jsonl.zstd"
    plain = CLEAN_RAW.read_bytes()
    first_newline = plain.index(b"\n") + 1
    assert frames(out.read_bytes()) == [plain[:first_newline], plain[first_newline:]]
    # raw output needs no framing: a balanced log is left alone
    raw = sesstool("repair", "--encoding", "raw", "-o", str(tmp_path / "x.jsonl"), str(src))
    assert raw.exit_code == 0 and "already balanced" in raw.stdout
    assert not (tmp_path / "x.jsonl").exists()


def test_migrate_writes_the_harness_framing(sesstool: Sesstool, tmp_path: Path) -> None:
    src = tmp_path / "session.jsonl.zstd"
    shutil.copyfile(ONE_FRAME, src)
    run = sesstool("migrate", "--to", "1", str(src))
    assert run.exit_code == 0, run.stderr
    assert "the new generation is written in the harness's framing" in run.stdout
    out = tmp_path / "session.v1.jsonl.zstd"
    parts = frames(out.read_bytes())
    assert len(parts) == 2 and parts[0].count(b"\n") == 1 and parts[0].endswith(b"\n")
    doc = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert doc["verdict"]["verdict"] == "clean" and SINGLE not in findings(doc)


def test_a_fat_header_frame_followed_by_frames_is_still_corrupt(sesstool: Sesstool, tmp_path: Path) -> None:
    """Only one frame holding everything is a generic compressor's layout; a header frame that
    holds more while frames follow is a writer breaking §9.2 (the DSH library refuses both)."""
    plain = CLEAN_RAW.read_bytes().split(b"\n")
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    data = cctx.compress(b"\n".join(plain[:2]) + b"\n") + cctx.compress(b"\n".join(plain[2:]))
    log = tmp_path / "session.jsonl.zstd"
    log.write_bytes(data)
    doc = json.loads(sesstool("inspect", "--json", str(log)).stdout)
    assert doc["verdict"]["verdict"] == "corrupt" and findings(doc) == ["zstd-header-frame"]


def test_other_dialects_have_no_header_frame(sesstool: Sesstool, tmp_path: Path) -> None:
    """A mini-agent log compressed whole is that dialect's ordinary layout: no finding."""
    mini = FIXTURES / "mini" / "basic" / "session.jsonl"
    log = tmp_path / "session.jsonl.zstd"
    log.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(mini.read_bytes()))
    doc = json.loads(sesstool("inspect", "--json", str(log)).stdout)
    assert SINGLE not in findings(doc)
    assert (
        doc["verdict"]["verdict"]
        == json.loads(sesstool("inspect", "--json", str(mini)).stdout)["verdict"]["verdict"]
    )
