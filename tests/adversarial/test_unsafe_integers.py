"""Issue 11, item 12: integers beyond ±(2^53−1) are a warning with their address in validate
(raw and zstd), and migrate states what becomes of them; digits inside strings, 2^53−1 itself and
floats are not integers beyond the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from tests.conftest import FIXTURES, Sesstool

BASE = (FIXTURES / "dsh" / "v0-tiny" / "session.jsonl").read_bytes()


def with_note(value: bytes) -> bytes:
    lines = BASE.split(b"\n")
    lines[3] = lines[3].replace(b'"source":{"kind":"user"}', b'"source":{"kind":"user","n":' + value + b"}")
    return b"\n".join(lines)


def unsafe(sesstool: Sesstool, path: Path) -> list[dict[str, object]]:
    result = sesstool("validate", "--format", "json", str(path))
    assert result.exit_code == 0, result.stderr  # a warning, not a failure
    doc = json.loads(result.stdout)["files"][0]
    assert doc["verdict"]["verdict"] == "clean"
    return [f for f in doc["findings"] if f["rule"] == "unsafe-integer"]


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
@pytest.mark.parametrize(
    "value",
    [b"1180591620717411303424", b"9007199254740992", b"-9007199254740993", b"[1,18446744073709551616]"],
)
def test_integers_beyond_2_53_are_a_warning_with_their_address(
    sesstool: Sesstool, tmp_path: Path, value: bytes, encoding: str
) -> None:
    data = with_note(value)
    path = tmp_path / "session.jsonl"
    if encoding == "zstd":
        head, body = data.split(b"\n", 1)
        cctx = zstandard.ZstdCompressor(write_checksum=True)
        data = cctx.compress(head + b"\n") + cctx.compress(body)
        path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(data)
    (finding,) = unsafe(sesstool, path)
    address = finding["address"]
    assert isinstance(address, dict)
    assert address["line"] == 4 and address["seq"] == 2
    assert address["offset"] == len(b"\n".join(BASE.split(b"\n")[:3])) + 1
    assert finding["severity"] == "warning"


@pytest.mark.parametrize(
    "value",
    [
        b"9007199254740991",
        b"-9007199254740991",
        b'"12345678901234567890"',
        b"1e300",
        b"12345678901234567.5",
        b"1.0e21",
    ],
)
def test_safe_integers_strings_and_floats_are_not_flagged(
    sesstool: Sesstool, tmp_path: Path, value: bytes
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(with_note(value))
    assert unsafe(sesstool, path) == []


def test_migrate_states_the_unsafe_integers(sesstool: Sesstool, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(with_note(b"1180591620717411303424"))
    result = sesstool("migrate", "--json", str(path))
    assert result.exit_code == 0, result.stderr
    notes = json.loads(result.stdout)["notes"]
    (note,) = [n for n in notes if "2^53" in n]
    assert "line 4" in note and "nearest double" in note
    text = sesstool("migrate", "--dry-run", str(path))
    assert "2^53" in text.stdout
