"""store.plaintext.HashedPlaintext: a write's source read once, for the carried plaintext and the
whole file's SHA-256 together (repair's verification, issue 11 item 7)."""

from __future__ import annotations

import builtins
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

import sesstool.store.plaintext as plaintext
from sesstool.core.physical import Encoding
from sesstool.store.plaintext import HashedPlaintext, plaintext_range
from tests.conftest import FIXTURES, plaintext_of

WINDOW = 32 << 20
LOGS = [
    (FIXTURES / "dsh" / "torn-tail" / "session.jsonl", "raw"),
    (FIXTURES / "dsh" / "torn-frame" / "session.jsonl.zstd", "zstd"),
    (FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl.zstd", "zstd"),
]


class Counted:
    """A file whose reads are counted (bytes handed out)."""

    def __init__(self, f: Any, tally: list[int]) -> None:
        self._f, self._tally = f, tally

    def __enter__(self) -> Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def read(self, size: int = -1) -> bytes:
        piece: bytes = self._f.read(size)
        self._tally.append(len(piece))
        return piece

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def counting_open(counts: list[int], only: Path | None = None) -> Any:
    """``open`` whose files count what they hand out (only ``only``'s, if given)."""

    def opener(path: Any, *args: Any, **kwargs: Any) -> Any:
        f = builtins.open(path, *args, **kwargs)  # noqa: SIM115 (closed by Counted or the caller)
        return Counted(f, counts) if only is None or Path(path) == only else f

    return opener


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counts: list[int] = []
    monkeypatch.setattr(plaintext, "open", counting_open(counts), raising=False)
    return counts


@pytest.mark.parametrize(("log", "encoding"), LOGS, ids=lambda v: getattr(v, "parent", v))
def test_plaintext_and_digest_in_one_read(log: Path, encoding: Encoding, tally: list[int]) -> None:
    plain = plaintext_of(log)
    end = plain.rindex(b"\n", 0, len(plain) - 1) + 1  # a committed prefix, short of the end
    carried = HashedPlaintext(log, encoding, end, WINDOW)
    assert b"".join(carried.pieces()) == plain[:end]
    assert carried.sha256() == hashlib.sha256(log.read_bytes()).hexdigest()
    assert sum(tally) == log.stat().st_size  # every byte of the file read exactly once
    tally.clear()
    assert b"".join(plaintext_range(log, encoding, 0, end, WINDOW)) == plain[:end]


def test_the_digest_reads_what_the_plaintext_left(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl.zstd"
    shutil.copy(LOGS[1][0], log)
    carried = HashedPlaintext(log, "zstd", 10, WINDOW)
    next(iter(carried.pieces()))  # a consumer that stopped early
    assert carried.sha256() == hashlib.sha256(log.read_bytes()).hexdigest()


def test_a_byte_changed_past_the_carried_part_changes_the_digest(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copy(LOGS[0][0], log)
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    data = bytearray(log.read_bytes())
    data[-1] ^= 1  # inside the torn tail, which is not carried
    log.write_bytes(bytes(data))
    end = bytes(data).rindex(b"\n") + 1
    carried = HashedPlaintext(log, "raw", end, WINDOW)
    assert b"".join(carried.pieces()) == bytes(data[:end])
    assert carried.sha256() != before
