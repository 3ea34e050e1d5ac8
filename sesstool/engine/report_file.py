"""Publish a rendered report page through the one writer (new file, never overwritten)."""

from __future__ import annotations

from pathlib import Path

from sesstool.core.errors import WriteRefusedError
from sesstool.store.digest import sha256_file
from sesstool.store.publish import Published, publish


def write_report(output: str, page: bytes) -> Published:
    import hashlib

    expected = hashlib.sha256(page).hexdigest()

    def verify(tmp: Path) -> None:
        if sha256_file(tmp) != expected:
            raise WriteRefusedError("verification: the written page differs from the rendered one")

    return publish(Path(output), lambda sink: sink.write(page), verify=verify, mode=0o644)
