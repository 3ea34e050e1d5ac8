"""``store.digest``: the SHA-256 reported for sources and outputs, read through one reused buffer
(the background digest's share of a write command's peak is one ``_CHUNK``, whenever it runs)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sesstool.engine import scan
from sesstool.store import digest
from sesstool.store.digest import BackgroundDigest, sha256_file

_SIZES = [0, 1, digest._CHUNK - 1, digest._CHUNK, digest._CHUNK + 1, 3 * digest._CHUNK + 5]


@pytest.mark.parametrize("size", _SIZES)
def test_the_digest_is_the_whole_files(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "source.jsonl"
    path.write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    assert sha256_file(path) == want
    assert BackgroundDigest(path).result() == want


def test_a_failure_is_raised_on_the_caller(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        BackgroundDigest(tmp_path / "gone.jsonl").result()


@pytest.mark.parametrize(
    "sizes", [[], [0], [1], [scan._PIECE], [scan._PIECE + 1, 3], [5 * scan._PIECE + 7] * 3]
)
def test_the_digest_worker_hashes_every_byte_in_order(sizes: list[int]) -> None:
    """``engine.scan.DigestWorker``: pieces copied into its fixed buffers, each reused many
    times over when the data is several times ``_PIECES`` buffers long, and the caller's buffer
    reused at once."""
    want = hashlib.sha256()
    got = hashlib.sha256()
    worker = scan.DigestWorker(got)
    reused = bytearray()
    for size in sizes:
        data = os.urandom(size)
        want.update(data)
        reused[:] = data
        worker.update(reused)
        reused[:] = bytes(len(reused))  # overwritten as soon as update returned
    worker.close()
    assert got.hexdigest() == want.hexdigest()


def test_a_failing_digest_is_raised_by_close() -> None:
    class Broken:
        def update(self, data: memoryview) -> None:
            raise OSError("no space left on the copy")

    worker = scan.DigestWorker(Broken())
    for _ in range(3 * scan._PIECES):  # more pieces than buffers: update never blocks for good
        worker.update(b"x" * scan._PIECE)
    with pytest.raises(OSError, match="no space"):
        worker.close()
