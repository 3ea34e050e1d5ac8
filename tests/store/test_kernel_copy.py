"""The carried prefix of a repair is copied by the kernel (``os.copy_file_range``) where the
platform has it, and by a plain read/write where it does not or refuses (issue 14): the
published bytes are the same either way, and so is their hash."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import InputError
from sesstool.store.publish import Sink, copy_into, publish
from tests.cli.test_read_commands import fixture_log
from tests.conftest import Sesstool

HAS_KERNEL_COPY = hasattr(os, "copy_file_range")


def _source(tmp_path: Path, size: int = (3 << 20) + 12345) -> Path:
    path = tmp_path / "src.bin"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"tail")
    return path


def _publish_range(tmp_path: Path, source: Path, start: int, end: int, name: str) -> tuple[bytes, str]:
    def produce(sink: Sink) -> None:
        sink.write(b"head:")
        copy_into(sink, source, start, end)
        sink.write(b":tail")

    published = publish(tmp_path / name, produce, verify=lambda tmp: None)
    data = published.path.read_bytes()
    return data, published.sha256


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.copy_file_range

    def counted(*args: Any, **kwargs: Any) -> int:
        n = real(*args, **kwargs)
        calls.append(n)
        return n

    monkeypatch.setattr(os, "copy_file_range", counted)
    return calls


@pytest.mark.skipif(not HAS_KERNEL_COPY, reason="this platform has no os.copy_file_range")
def test_the_kernel_copies_the_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source(tmp_path)
    calls = _counting(monkeypatch)
    data, digest = _publish_range(tmp_path, source, 3, source.stat().st_size - 2, "out")
    expected = b"head:" + source.read_bytes()[3:-2] + b":tail"
    assert data == expected and digest == hashlib.sha256(expected).hexdigest()
    assert sum(calls) == len(expected) - 10  # every carried byte went through the kernel copy


@pytest.mark.parametrize("refusal", [errno.EXDEV, errno.ENOSYS, errno.EINVAL, None])
def test_the_plain_copy_takes_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int | None
) -> None:
    source = _source(tmp_path)
    if refusal is None:
        monkeypatch.delattr(os, "copy_file_range", raising=False)  # a platform without it
    else:

        def refuse(*args: Any, **kwargs: Any) -> int:
            raise OSError(refusal, os.strerror(refusal))

        monkeypatch.setattr(os, "copy_file_range", refuse)
    data, digest = _publish_range(tmp_path, source, 0, source.stat().st_size, "out")
    expected = b"head:" + source.read_bytes() + b":tail"
    assert data == expected and digest == hashlib.sha256(expected).hexdigest()


@pytest.mark.skipif(not HAS_KERNEL_COPY, reason="this platform has no os.copy_file_range")
def test_a_refusal_midway_keeps_what_was_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source(tmp_path)
    real = os.copy_file_range
    calls: list[int] = []

    def once_then_refuse(src: int, dst: int, count: int, offset_src: int | None = None) -> int:
        if calls:
            raise OSError(errno.EXDEV, "cross-device")
        calls.append(1)
        return real(src, dst, min(count, 1000), offset_src)

    monkeypatch.setattr(os, "copy_file_range", once_then_refuse)
    data, _ = _publish_range(tmp_path, source, 0, source.stat().st_size, "out")
    assert data == b"head:" + source.read_bytes() + b":tail"


def test_a_source_shorter_than_planned_is_an_input_error(tmp_path: Path) -> None:
    source = _source(tmp_path, 1000)
    with pytest.raises(InputError, match="changed while being read"):
        _publish_range(tmp_path, source, 0, 5000, "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("zstd", [False, True])
@pytest.mark.parametrize("name", ["crash-dangling-call", "torn-tail"])
def test_repair_publishes_the_same_bytes_with_and_without_the_kernel_copy(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, zstd: bool
) -> None:
    src = fixture_log(name, zstd)
    source = tmp_path / src.name
    shutil.copy(src, source)
    suffix = ".jsonl.zstd" if zstd else ".jsonl"
    kernel = sesstool("repair", str(source), "-o", str(tmp_path / f"kernel{suffix}"))
    assert kernel.exit_code == 0, kernel.stderr
    monkeypatch.delattr(os, "copy_file_range", raising=False)
    plain = sesstool("repair", str(source), "-o", str(tmp_path / f"plain{suffix}"))
    assert plain.exit_code == 0, plain.stderr
    assert (tmp_path / f"kernel{suffix}").read_bytes() == (tmp_path / f"plain{suffix}").read_bytes()
    assert sesstool("validate", str(tmp_path / f"plain{suffix}")).exit_code == 0
