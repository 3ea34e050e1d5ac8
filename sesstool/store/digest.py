"""SHA-256 of a file (reported for sources and outputs: evidence that a source is unchanged)."""

from __future__ import annotations

import hashlib
from pathlib import Path

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:  # read-only
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
