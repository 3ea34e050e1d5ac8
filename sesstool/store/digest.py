"""SHA-256 of a file (reported for sources and outputs: evidence that a source is unchanged)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

_CHUNK = 1 << 16  # one buffer, read into again and again: what the digest holds never varies


def sha256_file(path: Path) -> str:
    """The file's SHA-256, read through one ``_CHUNK`` buffer. A fresh buffer per read (1 MiB
    before) made a write command's peak RSS depend on whether the background digest was between
    two reads when the peak came: identical runs differed by a MiB or two."""
    digest = hashlib.sha256()
    buffer = bytearray(_CHUNK)
    with memoryview(buffer) as view, open(path, "rb", buffering=0) as f:  # read-only
        while size := f.readinto(buffer):
            digest.update(view[:size])
    return digest.hexdigest()


class BackgroundDigest:
    """``sha256_file`` on a thread: file reads and hashlib release the GIL, so a write command
    re-hashes its source beside the rescan that verifies its output instead of after it (issue
    14); ``result`` joins the thread and re-raises what it raised."""

    def __init__(self, path: Path) -> None:
        self._digest: str | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(path,), name="sesstool-source-digest")
        self._thread.start()

    def _run(self, path: Path) -> None:
        try:
            self._digest = sha256_file(path)
        except BaseException as exc:  # re-raised by result() on the calling thread
            self._failure = exc

    def result(self) -> str:
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        assert self._digest is not None
        return self._digest
