"""store/sidecar.py: a log's sidecar is read only when it is a small regular file holding one JSON
object; anything else says why, and nothing ever raises or waits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sesstool.store.sidecar import MAX_SIDECAR_BYTES, Sidecar, read_sidecar


def test_an_object_is_read_as_written(tmp_path: Path) -> None:
    meta = tmp_path / "agent-a.meta.json"
    meta.write_bytes(b'{"agentType":"Explore","toolUseId":"toolu_1","finished":true}')
    assert read_sidecar(meta) == Sidecar(
        str(meta), {"agentType": "Explore", "toolUseId": "toolu_1", "finished": True}, None
    )


def test_no_file_is_no_sidecar(tmp_path: Path) -> None:
    assert read_sidecar(tmp_path / "agent-a.meta.json") is None


def test_a_lone_surrogate_written_by_node_is_still_read(tmp_path: Path) -> None:
    meta = tmp_path / "m.json"
    meta.write_bytes(b'{"description":"cut \\ud800 here"}')
    found = read_sidecar(meta)
    assert found is not None and found.content == {"description": "cut \ud800 here"}


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"[1, 2]", "not a JSON object (a list)"),
        (b'"text"', "not a JSON object (a str)"),
        (b"{", "not JSON: "),
        (b"\xff{}", "not JSON: invalid UTF-8"),
        (b"", "not JSON: "),
    ],
)
def test_what_is_not_one_object_says_why(tmp_path: Path, data: bytes, why: str) -> None:
    meta = tmp_path / "m.json"
    meta.write_bytes(data)
    found = read_sidecar(meta)
    assert found is not None and found.content is None
    assert found.error is not None and found.error.startswith(why), found.error


def test_a_large_file_is_not_read(tmp_path: Path) -> None:
    meta = tmp_path / "m.json"
    meta.write_bytes(b'{"a":"' + b"x" * MAX_SIDECAR_BYTES + b'"}')
    found = read_sidecar(meta)
    assert found is not None and found.content is None
    assert found.error == f"{MAX_SIDECAR_BYTES + 8} bytes, over the limit of {MAX_SIDECAR_BYTES}"
    small = read_sidecar(meta, limit=MAX_SIDECAR_BYTES + 8)
    assert small is not None and small.content == {"a": "x" * MAX_SIDECAR_BYTES}


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_bytes(b"{}")
    meta = tmp_path / "m.json"
    meta.symlink_to(target)
    assert read_sidecar(meta) == Sidecar(str(meta), None, "a symbolic link (not followed)")


def test_a_fifo_without_a_writer_is_refused_without_waiting(tmp_path: Path) -> None:
    meta = tmp_path / "m.json"
    os.mkfifo(meta)
    assert read_sidecar(meta) == Sidecar(str(meta), None, "not a regular file")


def test_a_directory_is_not_a_sidecar(tmp_path: Path) -> None:
    meta = tmp_path / "m.json"
    meta.mkdir()
    assert read_sidecar(meta) == Sidecar(str(meta), None, "not a regular file")
