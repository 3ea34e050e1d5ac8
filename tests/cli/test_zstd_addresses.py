"""Every address in a zstd log says where it is: a byte of the decoded plaintext and the frame
it was decoded from (``decoded byte N, frame K``), never a bare ``byte N`` that a reader would
look for in the compressed file. Found in stop 37: the findings a scan makes at its end — a
Codex call without output, a Codex turn never finished, a torn last line of any dialect, the
DSH header's seed claims, a header missing — named no frame, so a ``.jsonl.zst`` rollout's
``codex-unfinished-turn`` said "byte 720" of a file whose byte 720 is compressed data.

For every log fixture of every dialect, two zstd twins: the whole file in one frame (as
``zstd FILE`` writes it) and a frame per line (as the harness appends; the log's complete lines,
since a frame per append promises to end on a record). Each twin's findings are its plaintext's
(the same rules at the same offsets and lines, the zstd layout's own rules aside), and each
names its frame: frame 0 in the first twin, frame line − 1 in the second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.conftest import FIXTURES, run_sesstool

_NOT_LOGS = ("fuzz", "not-a-log")  # fuzz seeds and files that are refused before any scan
LOGS = sorted(
    p
    for p in FIXTURES.rglob("*.jsonl")
    if "expected" not in p.parts and p.relative_to(FIXTURES).parts[0] not in _NOT_LOGS
)
_COMPRESS = zstandard.ZstdCompressor(write_checksum=True)


def findings(path: Path) -> list[dict[str, Any]]:
    run = run_sesstool("validate", "--format", "json", "--max-findings", "100000", str(path))
    assert "Traceback" not in run.stderr, run.stderr
    document: dict[str, Any] = json.loads(run.stdout)
    found: list[dict[str, Any]] = document["files"][0]["findings"]
    return found


def _plain(found: list[dict[str, Any]]) -> list[tuple[str, int | None, int | None]]:
    """Rule, offset and line of each finding but the zstd layout's own (``zstd-*``)."""
    return [
        (f["rule"], f["address"]["offset"], f["address"]["line"])
        for f in found
        if not f["rule"].startswith("zstd-")
    ]


def _twin(tmp_path: Path, log: Path, name: str, blob: bytes) -> Path:
    """``blob`` under the log's name as its writer names a compressed copy (Codex: ``.zst``)."""
    path = tmp_path / name / (log.name + (".zst" if log.name.startswith("rollout-") else ".zstd"))
    path.parent.mkdir()
    path.write_bytes(blob)
    return path


def test_the_fixtures_cover_every_dialect() -> None:
    tops = {p.relative_to(FIXTURES).parts[0] for p in LOGS}
    assert {"dsh", "mini", "claude", "codex"} <= tops and len(LOGS) > 200


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_zstd_twin_names_the_frame_of_every_address(tmp_path: Path, log: Path) -> None:
    data = log.read_bytes()
    raw = findings(log)
    one = findings(_twin(tmp_path, log, "one", _COMPRESS.compress(data)))
    assert _plain(one) == _plain(raw)
    for f in one:
        a = f["address"]
        if a["offset"] is not None:
            assert a["frame"] == 0, f  # an empty log compressed is a frame too
    complete = data[: data.rfind(b"\n") + 1]
    lines = complete.split(b"\n")[:-1]
    per_line = _twin(tmp_path, log, "per-line", b"".join(_COMPRESS.compress(line + b"\n") for line in lines))
    (tmp_path / "complete").mkdir()
    plain = tmp_path / "complete" / log.name
    plain.write_bytes(complete)
    each = findings(per_line)
    assert _plain(each) == _plain(findings(plain))
    for f in each:
        a = f["address"]
        if a["offset"] is not None:
            assert a["frame"] == (a["line"] - 1 if lines else None), f  # no line: an empty file


def test_a_codex_rollout_names_the_frame_of_its_end_findings(tmp_path: Path) -> None:
    """The finding that found it, as the text output shows it."""
    log = next((FIXTURES / "codex" / "kill-during-command").glob("rollout-*.jsonl"))
    twin = tmp_path / (log.name + ".zst")
    twin.write_bytes(_COMPRESS.compress(log.read_bytes()))
    run = run_sesstool("validate", str(twin))
    assert f"{twin}:2 (decoded byte 728, frame 0): warning [codex-unfinished-turn]" in run.stdout
    assert f"{twin}:10 (decoded byte 7029, frame 0): warning [codex-call-without-output]" in run.stdout
    assert "(byte " not in run.stdout, run.stdout
