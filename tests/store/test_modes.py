"""The mode of a published file (issue 15 item 14, docs/format.md "Output mode"): the source's
read/write bits masked by the umask, plus owner read; the umask read without changing it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sesstool.store import modes
from sesstool.store.modes import copy_mode, current_umask


@pytest.fixture
def umask() -> Iterator[Any]:
    old = os.umask(0o022)

    def set_(mask: int) -> None:
        os.umask(mask)

    try:
        yield set_
    finally:
        os.umask(old)


def _no_umask_calls(mask: int) -> int:
    raise AssertionError("the umask must be read from /proc/self/status, not set and restored")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="no /proc: the fallback below")
@pytest.mark.parametrize("mask", [0o000, 0o022, 0o027, 0o077, 0o777])
def test_the_umask_is_read_without_changing_it(
    umask: Any, monkeypatch: pytest.MonkeyPatch, mask: int
) -> None:
    umask(mask)
    monkeypatch.setattr(os, "umask", _no_umask_calls)
    assert current_umask() == mask


@pytest.mark.parametrize("failure", [OSError(13, "Permission denied"), None])
def test_without_proc_the_umask_is_set_and_restored_at_once(
    umask: Any, monkeypatch: pytest.MonkeyPatch, failure: OSError | None
) -> None:
    """/proc unreadable, or without a Umask line (an older kernel): the fallback."""

    class Status:
        def __enter__(self) -> Iterator[bytes]:
            return iter([b"Name:\tpython\n", b"State:\tR (running)\n"])

        def __exit__(self, *args: object) -> None:
            return None

    def open_(path: str, mode: str = "r") -> Status:
        assert (path, mode) == ("/proc/self/status", "rb")
        if failure is not None:
            raise failure
        return Status()

    umask(0o027)
    monkeypatch.setattr(modes, "open", open_, raising=False)
    assert current_umask() == 0o027
    assert os.umask(0o027) == 0o027  # unchanged afterwards


@pytest.mark.parametrize(
    ("source_bits", "mask", "expected"),
    [
        (0o600, 0o000, 0o600),
        (0o644, 0o000, 0o644),
        (0o755, 0o022, 0o644),  # execute bits never copied
        (0o777, 0o077, 0o600),
        (0o666, 0o002, 0o664),
        (0o070, 0o000, 0o460),  # owner read added: the publisher reads the file back
        (0o200, 0o000, 0o600),
        (0o000, 0o000, 0o400),
        (0o1644, 0o000, 0o644),  # sticky, setuid, setgid never copied
        (0o6666, 0o000, 0o666),
    ],
)
def test_the_copy_mode_is_the_sources_read_write_bits_under_the_umask(
    tmp_path: Path, umask: Any, source_bits: int, mask: int, expected: int
) -> None:
    source = tmp_path / "session.jsonl"
    source.write_bytes(b"")
    os.chmod(source, source_bits)
    umask(mask)
    assert copy_mode(source) == expected


def test_a_source_that_cannot_be_examined_gives_owner_read_write(tmp_path: Path) -> None:
    assert copy_mode(tmp_path / "missing.jsonl") == 0o600
