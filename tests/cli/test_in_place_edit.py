"""Issue 11, item 7: a byte changed in the source while a write command runs — size kept, mtime
restored, so the file's identity looks untouched — is caught by the scan's digest: nothing is
published, exit 6, never "(unchanged)" with a stale hash."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import sesstool.engine.migrate as migrate_engine
import sesstool.engine.records as records_engine
import sesstool.engine.repair as repair_engine
import sesstool.store.digest as store_digest
import sesstool.store.plaintext as store_plaintext
from tests.conftest import FIXTURES, Sesstool
from tests.store.test_hashed_plaintext import counting_open

CRASHED = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"


def edit_in_place(path: Path) -> None:
    """Flip one letter inside the first user message, keeping the size and the mtime."""
    st = os.stat(path)
    data = bytearray(path.read_bytes())
    at = data.index(b'"text":"') + len(b'"text":"')
    data[at] = ord("Z") if data[at] != ord("Z") else ord("Y")
    with open(path, "r+b") as f:  # the attack itself: an in-place write
        f.write(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_repair_refuses_a_source_edited_while_it_runs(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(CRASHED, source)
    real = repair_engine._produce

    def produce(sink: Any, src: Path, *args: Any) -> None:
        edit_in_place(src)  # after the scan, before the bytes are carried
        real(sink, src, *args)

    monkeypatch.setattr(repair_engine, "_produce", produce)
    args = ["--encoding", "zstd"] if encoding == "zstd" else []
    result = sesstool("repair", *args, str(source))
    assert result.exit_code == 6, result.stdout + result.stderr
    assert "source changed while it was repaired" in result.stderr
    assert "unchanged" not in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.lock"]


def test_migrate_refuses_a_source_edited_while_it_runs(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl", source)
    real = records_engine.upgraded_lines

    def upgraded(f: Any, *args: Any, **kwargs: Any) -> Any:
        edit_in_place(source)
        return real(f, *args, **kwargs)

    monkeypatch.setattr(migrate_engine, "upgraded_lines", upgraded)
    result = sesstool("migrate", str(source))
    assert result.exit_code == 6, result.stdout + result.stderr
    assert "source changed while it was migrated" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.lock"]


def test_an_untouched_source_still_repairs(sesstool: Sesstool, tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(CRASHED, source)
    result = sesstool("repair", str(source))
    assert result.exit_code == 0 and "unchanged" in result.stdout


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_repair_verification_reads_the_source_once(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """The carried prefix and the source's digest are checked in one read of the source: after
    the scan, the read-back reads each source byte once (raw to raw: the copy is the kernel's)."""
    source = tmp_path / "session.jsonl"
    shutil.copy(CRASHED, source)
    counts: list[int] = []
    for module in (store_plaintext, store_digest):
        monkeypatch.setattr(module, "open", counting_open(counts, source), raising=False)
    args = ["--encoding", "zstd"] if encoding == "zstd" else []
    result = sesstool("repair", *args, str(source))
    assert result.exit_code == 0, result.stdout + result.stderr
    committed = CRASHED.read_bytes().rindex(b"\n") + 1
    carried_by_produce = committed if encoding == "zstd" else 0  # zstd output: read to compress
    assert sum(counts) == carried_by_produce + source.stat().st_size
