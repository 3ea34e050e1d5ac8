"""SHA-256 of a file (reported for sources and outputs: evidence that a source is unchanged)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

_CHUNK = 1 << 20


def sha256_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> str:
    """The file's SHA-256; ``on_bytes`` hears the bytes hashed so far after each chunk."""
    digest = hashlib.sha256()
    done = 0
    with open(path, "rb") as f:  # read-only
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if on_bytes is not None:
                on_bytes(done)
    return digest.hexdigest()
