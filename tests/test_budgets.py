"""Every read budget has a safe default, an option, and holds exactly at its limit (DESIGN §7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import zstandard

from tests.conftest import FIXTURES, Sesstool

HEADER = b'{"type":"session","version":0,"id":"b","createdAt":1,"delegationDepth":0}\n'


def validate(sesstool: Sesstool, *args: str) -> dict[str, Any]:
    result = sesstool("validate", "--format", "json", *args)
    doc: dict[str, Any] = json.loads(result.stdout)["files"][0]
    return doc


def rules(doc: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in doc["findings"]]


def test_line_length_at_and_past_the_limit(sesstool: Sesstool, tmp_path: Path) -> None:
    line = orjson.dumps(
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}, "pad": "x" * 100}
    )  # an envelope-key error, but a decodable line
    log = tmp_path / "s.jsonl"
    log.write_bytes(HEADER + line + b"\n")
    at = validate(sesstool, "--max-line-bytes", str(len(line)), str(log))
    assert "line-too-long" not in rules(at)
    past = validate(sesstool, "--max-line-bytes", str(len(line) - 1), str(log))
    # the over-long last record cannot be decoded and no turn/end follows: an uncommitted tail
    assert rules(past) == ["uncommitted-tail"]
    assert f"line is {len(line)} bytes, over the limit of {len(line) - 1}" in past["findings"][0]["message"]


def test_nesting_at_and_past_the_limit(sesstool: Sesstool, tmp_path: Path) -> None:
    deep = {"type": "todo/write", "seq": 1, "time": 2, "data": {"todos": [[[["x"]]]]}}
    body = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        deep,
        {"type": "turn/end", "seq": 2, "time": 3, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    log = tmp_path / "s.jsonl"
    log.write_bytes(HEADER + b"".join(orjson.dumps(e) + b"\n" for e in body))
    depth = 6  # object, data, todos, and three more arrays
    assert "depth-limit" not in rules(validate(sesstool, "--max-depth", str(depth), str(log)))
    past = validate(sesstool, "--max-depth", str(depth - 1), str(log))
    assert "depth-limit" in rules(past) and past["verdict"]["verdict"] == "corrupt"


def test_decompressed_bytes_at_and_past_the_limit(sesstool: Sesstool, tmp_path: Path) -> None:
    plain = (FIXTURES / "dsh" / "v0-tiny" / "session.jsonl").read_bytes()
    first = plain.index(b"\n") + 1
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    log = tmp_path / "s.jsonl.zstd"
    log.write_bytes(cctx.compress(plain[:first]) + cctx.compress(plain[first:]))
    at = validate(sesstool, "--max-decompressed", str(len(plain)), str(log))
    assert at["verdict"]["verdict"] == "clean"
    past = validate(sesstool, "--max-decompressed", str(len(plain) - 1), str(log))
    assert "zstd-budget-exceeded" in rules(past) and past["verdict"]["verdict"] == "corrupt"


def test_findings_kept_at_and_past_the_limit(sesstool: Sesstool, tmp_path: Path) -> None:
    lines = [
        orjson.dumps({"type": "todo/write", "seq": i, "time": i, "data": {}, "x": 1}) for i in range(10)
    ]  # ten envelope-key errors
    log = tmp_path / "s.jsonl"
    log.write_bytes(HEADER + b"\n".join(lines) + b"\n")
    all_kept = validate(sesstool, "--max-findings", "20", str(log))
    total = len(all_kept["findings"])
    assert all_kept["findings_dropped"] == 0 and total >= 10
    at = validate(sesstool, "--max-findings", str(total), str(log))
    assert len(at["findings"]) == total and at["findings_dropped"] == 0
    past = validate(sesstool, "--max-findings", str(total - 1), str(log))
    assert len(past["findings"]) == total - 1 and past["findings_dropped"] == 1
