"""validate: which files a directory walk finds, and that finding none fails (issue 15 item 10)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import FIXTURES, Sesstool

V0 = FIXTURES / "dsh" / "v0-tiny"
SEQ_GAP = FIXTURES / "dsh" / "seq-gap" / "session.jsonl"


def test_empty_directory_is_a_usage_error(sesstool: Sesstool, tmp_path: Path) -> None:
    result = sesstool("validate", str(tmp_path))
    assert result.exit_code == 2, result.stdout
    assert "no session log found in directory" in result.stderr
    assert str(tmp_path) in result.stderr
    assert result.stdout == ""


def test_directory_without_logs_fails_even_beside_good_logs(sesstool: Sesstool, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a log\n")
    (tmp_path / "session.json").write_text("{}\n")
    result = sesstool("validate", "--format", "json", str(V0 / "session.jsonl"), str(tmp_path))
    assert result.exit_code == 2
    assert "no session log found" in result.stderr
    assert result.stdout == ""  # nothing was checked


def test_glob_matching_nothing_is_a_usage_error(sesstool: Sesstool, tmp_path: Path) -> None:
    result = sesstool("validate", str(tmp_path / "*.jsonl"))
    assert result.exit_code == 2
    assert "no file matches" in result.stderr
    assert result.stdout == ""


def test_directory_walk_finds_zst_and_upper_case_suffixes(sesstool: Sesstool, tmp_path: Path) -> None:
    shutil.copy(V0 / "session.jsonl.zstd", tmp_path / "a.jsonl.zst")
    shutil.copy(V0 / "session.jsonl", tmp_path / "b.JSONL")
    shutil.copy(V0 / "session.jsonl.zstd", tmp_path / "c.Jsonl.ZSTD")
    shutil.copy(SEQ_GAP, tmp_path / "d.JSONL.ZST")  # raw bytes: the encoding is sniffed
    (tmp_path / "e.jsonl.gz").write_bytes(b"ignored")
    (tmp_path / "f.zst").write_bytes(b"ignored")
    result = sesstool("validate", "--format", "json", str(tmp_path))
    doc = json.loads(result.stdout)
    files = {Path(f["path"]).name: f for f in doc["files"]}
    assert sorted(files) == ["a.jsonl.zst", "b.JSONL", "c.Jsonl.ZSTD", "d.JSONL.ZST"]
    assert [files[n]["verdict"]["verdict"] for n in ("a.jsonl.zst", "b.JSONL", "c.Jsonl.ZSTD")] == [
        "clean"
    ] * 3
    assert files["d.JSONL.ZST"]["verdict"]["verdict"] == "corrupt"
    assert result.exit_code == 1  # the corrupt one fails the run: it was really checked
