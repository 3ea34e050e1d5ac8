"""``plan_repair`` (§7.3, §7.4; DESIGN §1.3): what is copied verbatim, what is re-framed, what
is dropped — the plan's numbers for every repairable fixture in goldens, both output encodings,
and the zstd cases where no committed frame is complete."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.repair_plan import RepairPlan, Salvage, plan_repair
from sesstool.core.rules import Finding
from sesstool.dialects import registry
from sesstool.dialects.registry import open_scanner
from sesstool.store.raw_reader import RawReader
from sesstool.store.zstd_reader import ZstdReader
from tests.cli.test_read_commands import fixture_log
from tests.conftest import FIXTURES, UPDATE_GOLDENS, Sesstool, run_sesstool


def scan_of(data: bytes) -> ScanResult:
    reader: RawReader | ZstdReader
    reader = (
        ZstdReader(io.BytesIO(data)) if data.startswith(b"\x28\xb5\x2f\xfd") else RawReader(io.BytesIO(data))
    )
    scanner = open_scanner("log", ScanOptions())
    for item in reader.batches():
        scanner.feed(item)
    return scanner.finish(reader.summary)


def plan_of(scan: ScanResult, **kwargs: Any) -> RepairPlan:
    """``plan_repair`` with what the engine passes from the log's dialect."""
    dialect = registry.by_name(scan.dialect)
    return plan_repair(
        scan, closers=tuple(dialect.closers(scan)), header_frame=dialect.header_frame, **kwargs
    )


# -- the pure planner ----------------------------------------------------------------------------

TORN = fixture_log("torn-tail", False).read_bytes()  # an open turn and a torn last line


def test_raw_to_raw_copies_the_committed_prefix() -> None:
    scan = scan_of(TORN)
    committed = TORN.rfind(b"\n") + 1
    assert scan.tail.committed_bytes == committed
    plan = plan_of(
        scan, source_encoding="raw", output_encoding="raw", plaintext_bytes=len(TORN), frame_copy_point=None
    )
    assert (plan.committed, plan.copy_file, plan.copy_plain) == (committed, committed, committed)
    assert plan.dropped_plain == len(TORN) - committed > 0
    assert plan.body_offset == TORN.index(b"\n") + 1
    assert (plan.version, plan.source_verdict, plan.header_frame) == (0, "torn", True)
    assert (plan.source_encoding, plan.output_encoding) == ("raw", "raw")
    assert plan.committed_events == scan.open.events and plan.committed_events > 0
    assert (plan.dropped_lines, plan.recovered_lines) == (1, 0)  # the torn last line
    assert plan.closers == tuple(registry.by_name(scan.dialect).closers(scan))
    assert plan.salvage is None


@pytest.mark.parametrize(
    ("source", "output", "copy_point", "expected"),
    [
        ("zstd", "zstd", (300, 250), (300, 250)),  # whole verbatim frames up to the copy point
        ("zstd", "zstd", None, (0, 0)),  # no committed frame is complete: everything re-framed
        ("raw", "zstd", None, (0, 0)),  # a change of encoding re-frames everything
        ("zstd", "raw", (300, 250), (0, 0)),
        ("raw", "zstd", (300, 250), (0, 0)),
    ],
)
def test_what_is_copied_verbatim(
    source: Any, output: Any, copy_point: tuple[int, int] | None, expected: tuple[int, int]
) -> None:
    scan = scan_of(TORN)
    plan = plan_of(
        scan,
        source_encoding=source,
        output_encoding=output,
        plaintext_bytes=len(TORN),
        frame_copy_point=copy_point,
    )
    assert (plan.copy_file, plan.copy_plain) == expected
    assert plan.committed == scan.tail.committed_bytes


ONE_FRAME = FIXTURES / "dsh" / "zstd-one-frame" / "session.jsonl.zstd"  # `zstd FILE` (§9.2)


@pytest.mark.parametrize(
    ("output", "reframed"),
    [("zstd", True), ("raw", False)],  # raw output has no frames: nothing is re-framed
)
def test_a_one_frame_source_is_reframed_only_into_zstd(output: Any, reframed: bool) -> None:
    """``reframe``: nothing of the single frame is copied verbatim, even with a copy point, and
    the plan says it was re-framed only when the output is zstd."""
    data = ONE_FRAME.read_bytes()
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    scan = scan_of(data)
    plan = plan_of(
        scan,
        source_encoding="zstd",
        output_encoding=output,
        plaintext_bytes=len(plain),
        frame_copy_point=(len(data), len(plain)),
        reframe=True,
    )
    assert (plan.reframed, plan.copy_file, plan.copy_plain) == (reframed, 0, 0)
    assert (plan.committed, plan.dropped_plain) == (len(plain), 0)


def test_nothing_dropped_is_never_negative() -> None:
    scan = scan_of(TORN)
    committed = scan.tail.committed_bytes
    for plaintext, dropped in ((committed, 0), (committed - 5, 0), (committed + 1, 1)):
        plan = plan_of(
            scan,
            source_encoding="raw",
            output_encoding="raw",
            plaintext_bytes=plaintext,
            frame_copy_point=None,
        )
        assert plan.dropped_plain == dropped


def test_salvage_keeps_only_the_prefix_before_the_defect() -> None:
    scan = scan_of(TORN)
    defect: Finding = scan.findings[0]
    salvage = Salvage(defect, cut=200, dropped_file_offset=200, dropped_file_bytes=len(TORN) - 200)
    plan = plan_of(
        scan,
        source_encoding="raw",
        output_encoding="raw",
        plaintext_bytes=len(TORN),
        frame_copy_point=None,
        salvage=salvage,
    )
    assert (plan.committed, plan.copy_file, plan.copy_plain) == (200, 200, 200)
    assert plan.dropped_plain == len(TORN) - 200
    assert plan.salvage is salvage


def test_a_header_only_log_has_no_body_offset_default() -> None:
    scan = dataclasses.replace(scan_of(TORN), body_offset=None)
    plan = plan_of(
        scan, source_encoding="raw", output_encoding="raw", plaintext_bytes=len(TORN), frame_copy_point=None
    )
    assert plan.body_offset == 0


# -- the plan of every repairable fixture, in goldens --------------------------------------------

REPAIRABLE = [
    ("dsh", "crash-dangling-call", ""),
    ("dsh", "crash-not-started", ""),
    ("dsh", "torn-tail", ""),
    ("dsh", "torn-frame", ""),
    ("dsh", "bad-nul-run", ""),
    ("dsh", "corrupt-middle", "--salvage"),
    ("dsh", "seq-gap", "--salvage"),
    ("mini", "dangling-call", ""),
    ("mini", "not-started", ""),
    ("mini", "torn-tail", ""),
    ("mini", "seq-gap", "--salvage"),
]
SOURCES = [
    (dialect, name, option, log)
    for dialect, name, option in REPAIRABLE
    for log in sorted((FIXTURES / dialect / name).glob("session*.jsonl*"))
]


def dry_run(sesstool: Sesstool, path: Path, *options: str) -> dict[str, Any]:
    result = sesstool("repair", "--dry-run", "--json", *options, str(path))
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return {"status": doc["status"], "plan": doc["plan"], "salvage": doc["salvage"]}


@pytest.mark.parametrize(
    ("dialect", "name", "option", "log"), SOURCES, ids=[f"{d}-{n}-{p.name}" for d, n, _, p in SOURCES]
)
def test_plan_numbers_golden(
    sesstool: Sesstool, tmp_path: Path, dialect: str, name: str, option: str, log: Path
) -> None:
    """committed, copied verbatim, dropped plaintext, recovered lines and the closers of each
    fixture repaired to raw and to zstd (a copy: a repair takes the directory's session.lock)."""
    src = tmp_path / log.name
    shutil.copy(log, src)
    options = [option] if option else []
    doc = {enc: dry_run(sesstool, src, *options, "--encoding", enc) for enc in ("raw", "zstd")}
    golden = FIXTURES / dialect / name / "expected" / "repair" / f"{log.name}.plan.json"
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if UPDATE_GOLDENS:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}"
    zstd_source = log.name.endswith(".zstd")
    for enc, got in doc.items():
        plan = got["plan"]
        kept = got["salvage"]["kept_plaintext_bytes"] if option else plan["committed_bytes"]
        assert plan["committed_bytes"] == kept
        if enc == "raw" and not zstd_source:
            assert plan["copied_verbatim_bytes"] == kept  # raw to raw: the committed prefix
        elif enc == "raw" or not zstd_source:
            assert plan["copied_verbatim_bytes"] == 0  # a change of encoding re-frames it all
        else:  # zstd to zstd: every whole frame whose plaintext lies inside the kept region
            assert plan["copied_verbatim_bytes"] == verbatim_frames_end(log.read_bytes(), kept)


def verbatim_frames_end(data: bytes, kept: int) -> int:
    """End offset of the last complete frame whose plaintext ends within ``kept`` (libzstd's
    own frame walk); 0 when even the first frame reaches past it (a single-frame mini log)."""
    end = plain = 0
    rest = data
    while rest:
        obj = zstandard.ZstdDecompressor().decompressobj()
        plain += len(obj.decompress(rest))
        if not obj.eof or plain > kept:
            break
        end = len(data) - len(obj.unused_data)
        rest = obj.unused_data
    return end


# -- zstd with no complete committed frame -------------------------------------------------------

MINI = (FIXTURES / "mini" / "dangling-call" / "session.jsonl").read_bytes()


def one_frame(lines: list[bytes], flush_blocks: bool) -> tuple[bytes, list[int]]:
    """All lines in a single zstd frame (a mini-agent writer's layout), and the compressed
    offset after each line; with ``flush_blocks`` every line ends a block, so a cut inside a
    later block leaves the earlier lines decodable."""
    obj = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    out, ends = b"", []
    for line in lines:
        out += obj.compress(line + b"\n")
        if flush_blocks:
            out += obj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        ends.append(len(out))
    return out + obj.flush(), ends


def test_zstd_repair_of_a_torn_only_frame_reframes_what_it_recovers(
    sesstool: Sesstool, tmp_path: Path
) -> None:
    lines = MINI.rstrip(b"\n").split(b"\n")
    data, ends = one_frame(lines, flush_blocks=True)
    src = tmp_path / "session.jsonl.zstd"
    src.write_bytes(data[: ends[-2] + 5])  # inside the last line's block: the only frame is torn
    result = sesstool("repair", "--json", str(src))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    plan = doc["plan"]
    recovered = lines[:-1]
    committed = sum(len(x) + 1 for x in recovered)
    assert plan["copied_verbatim_bytes"] == 0  # nothing can be copied: no frame is complete
    assert plan["committed_bytes"] == committed
    assert plan["recovered_lines"] == len(recovered)
    assert plan["dropped_plaintext_bytes"] == 0  # the torn block never decoded
    out = Path(doc["output"]["path"])
    checked = json.loads(run_sesstool("validate", "--format", "json", str(out)).stdout)["files"][0]
    assert checked["verdict"]["verdict"] == "clean" and checked["findings"] == []
    with zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO(out.read_bytes()), read_across_frames=True
    ) as r:
        text = r.read()
    closers = [json.dumps(c, separators=(",", ":"), ensure_ascii=False).encode() for c in plan["closers"]]
    assert text == b"".join(x + b"\n" for x in [*recovered, *closers])


def test_zstd_salvage_of_a_single_frame_drops_the_whole_frame_to_the_sidecar(
    sesstool: Sesstool, tmp_path: Path
) -> None:
    lines = MINI.rstrip(b"\n").split(b"\n")
    lines[3] = b"{not json"
    data, _ = one_frame(lines, flush_blocks=False)
    src = tmp_path / "session.jsonl.zstd"
    src.write_bytes(data)
    result = sesstool("repair", "--salvage", "--json", str(src))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    kept = sum(len(x) + 1 for x in lines[:3])
    assert doc["plan"]["copied_verbatim_bytes"] == 0
    assert doc["plan"]["committed_bytes"] == doc["salvage"]["kept_plaintext_bytes"] == kept
    # the only frame holds the defect: nothing of it is carried verbatim, all of it is recorded
    assert (doc["salvage"]["dropped_file_offset"], doc["salvage"]["dropped_file_bytes"]) == (0, len(data))
    assert Path(doc["salvage"]["sidecar"]).read_bytes() == data
    out = Path(doc["output"]["path"])
    checked = json.loads(run_sesstool("validate", "--format", "json", str(out)).stdout)["files"][0]
    assert checked["verdict"]["verdict"] == "clean" and checked["findings"] == []
    assert src.read_bytes() == data
