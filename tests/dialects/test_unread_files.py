"""A log without a record to detect its dialect by — an empty file, or a compressed one that
decodes to nothing — is read by the one dialect whose file names it has, if one claims the
name: an empty ``rollout-….jsonl[.zst]`` is Codex's, and Codex refuses it as empty
(``codex-empty-file``, stop 37; it was the generic ``empty-file`` of the first dialect unless
``--dialect codex`` was given). Any other name keeps the first dialect listed (registry)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from tests.conftest import run_sesstool

ROLLOUT = "rollout-2026-12-01T13-52-52-01a231e1-36fc-7f51-b38e-974c0b3eaa8d.jsonl"


def rules(path: Path) -> list[tuple[str, int | None]]:
    doc = json.loads(run_sesstool("validate", "--json", str(path)).stdout)
    return [(f["rule"], f["address"]["frame"]) for f in doc["files"][0]["findings"]]


@pytest.mark.parametrize(
    ("name", "compressed", "expected"),
    [
        (ROLLOUT, False, [("codex-empty-file", None)]),
        (ROLLOUT + ".zst", True, [("codex-empty-file", 0)]),  # a frame that decodes to nothing
        (ROLLOUT + ".zst", False, [("codex-empty-file", None)]),  # no frame at all
        ("session.jsonl", False, [("empty-file", None)]),
        ("session.jsonl.zstd", True, [("zstd-header-frame", 0), ("empty-file", 0)]),
        ("0efa8ac9-c14d-5541-8e5c-329bb653094f.jsonl", False, [("empty-file", None)]),  # no claim
        ("rollout-notes.jsonl", False, [("empty-file", None)]),  # not a rollout's name
    ],
)
def test_an_empty_log_is_read_by_the_dialect_its_name_claims(
    tmp_path: Path, name: str, compressed: bool, expected: list[tuple[str, int | None]]
) -> None:
    log = tmp_path / name
    log.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(b"") if compressed else b"")
    assert rules(log) == expected


def test_a_name_decides_nothing_when_a_record_is_there(tmp_path: Path) -> None:
    log = tmp_path / ROLLOUT
    log.write_bytes(
        b'{"type":"session","version":4,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}\n'
    )
    doc = json.loads(run_sesstool("inspect", "--json", str(log)).stdout)
    assert doc["header"] is not None and doc["version"] == 4  # the record's dialect, dsh
