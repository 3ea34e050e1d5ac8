"""store.paths.classify_path: what a path names, asked once, on real layouts (docs/format.md
"What a path is")."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sesstool.dialects import registry
from sesstool.store.paths import PathClass, classify_path, is_log_name, walk_logs
from tests.conftest import FIXTURES

CODEX_HOME = FIXTURES / "codex" / "home"
TINY = FIXTURES / "dsh" / "v0-tiny"


def classify(arg: str | Path) -> PathClass:
    return classify_path(arg, registry.layouts(), registry.log_suffixes())


def test_stdin_missing_and_a_path_through_a_file(tmp_path: Path) -> None:
    assert classify("-").kind == "stdin"
    missing = classify(str(tmp_path / "nope.jsonl"))
    expected = f"{tmp_path / 'nope.jsonl'}: no such file or directory"
    assert (missing.kind, missing.reason) == ("missing", expected)
    (tmp_path / "file").write_bytes(b"{}\n")
    through = classify(str(tmp_path / "file" / "x.jsonl"))
    assert through.kind == "unreadable"
    assert through.reason is not None and "not a directory" in through.reason


def test_a_log_file_with_its_size_and_sniffed_encoding() -> None:
    raw = classify(TINY / "session.jsonl")
    zst = classify(str(TINY / "session.jsonl.zstd"))
    assert (raw.kind, raw.encoding, raw.size) == ("log", "raw", (TINY / "session.jsonl").stat().st_size)
    assert (zst.kind, zst.encoding) == ("log", "zstd")
    assert not raw.listable and raw.logs == ()


def test_a_fifo_is_a_stream_and_a_device_is_special(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert classify(str(fifo)).kind == "stream"  # never opened: a FIFO without writer would block
    dev = classify("/dev/null")
    assert dev.kind == "special" and dev.reason == "/dev/null: is a character device, not a session log"


def test_a_session_directory_before_anything_else() -> None:
    assert classify(str(TINY)).kind == "session-dir"


def test_a_codex_home_is_a_root_with_its_rollouts() -> None:
    found = classify(str(CODEX_HOME))
    assert found.kind == "root" and found.listable
    assert [g.layout for g in found.groups] == ["codex"]
    day = CODEX_HOME / "sessions" / "2026" / "12" / "01"
    assert found.logs == tuple(str(p) for p in sorted(day.iterdir()))
    assert len(found.logs) == 3 and found.logs[-1].endswith(".jsonl.zst")


def test_a_claude_home_and_a_dsh_root_are_roots(tmp_path: Path) -> None:
    claude = classify(str(FIXTURES / "claude"))
    assert claude.kind == "root" and [g.layout for g in claude.groups] == ["claude"]
    assert all("/projects/" in p for p in claude.logs)
    session = tmp_path / "root" / "--home-me--" / "abc"
    session.mkdir(parents=True)
    shutil.copy(TINY / "session.jsonl", session / "session.jsonl")
    dsh = classify(str(tmp_path / "root"))
    assert dsh.kind == "root" and [g.layout for g in dsh.groups] == ["dsh"]
    assert dsh.logs == (str(session / "session.jsonl"),)


def test_a_directory_of_logs_any_case_and_every_registered_suffix(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    names = ["A.JSONL", "deep/b.jsonl.zst", "deep/er/c.Jsonl.Zstd", "notes.txt", "d.json"]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    found = classify(str(tmp_path))
    assert found.kind == "log-dir" and found.listable and [g.layout for g in found.groups] == [None]
    assert found.logs == tuple(str(tmp_path / n) for n in sorted(names[:3]))
    assert list(walk_logs(tmp_path, registry.log_suffixes())) == list(found.logs)
    assert is_log_name("X.JSONL.ZST", registry.log_suffixes()) and not is_log_name("x.json", (".jsonl",))


def test_a_directory_without_logs(tmp_path: Path) -> None:
    (tmp_path / "readme.md").write_text("no logs")
    assert classify(str(tmp_path)).kind == "empty-dir"
