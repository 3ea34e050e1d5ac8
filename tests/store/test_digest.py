"""``store.digest``: the SHA-256 reported for sources and outputs, read through one reused buffer
(the background digest's share of a write command's peak is one ``_CHUNK``, whenever it runs)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

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
