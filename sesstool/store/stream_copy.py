"""A private copy of a stream's bytes, taken while the stream is scanned (issue 11 item 1).

Standard input and a FIFO can be read only once. ``derive`` reads a log's surface records back
by address after the scan (``engine/derive_read.py``), so that its memory does not grow with the
number of messages; for a stream it reads them back from this copy instead: the bytes exactly as
they arrived (compressed, for a zstd stream), in an unnamed temporary file in ``$TMPDIR`` — it
has no name, so nothing can find or publish it, and the kernel frees it when the process ends,
however it ends.
"""

from __future__ import annotations

import tempfile
from typing import BinaryIO


class StreamCopy:
    """A sink with a digest's ``update(bytes)``: pass it as ``run_scan(digest=...)``, then read
    ``file`` once the scan has returned (every byte is then written; readers seek to 0)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="sesstool-stream-")  # noqa: SIM115 - closed by close()
        self.size = 0

    @property
    def file(self) -> BinaryIO:
        self._file.flush()
        return self._file

    def update(self, data: bytes) -> None:
        self._file.write(data)
        self.size += len(data)

    def close(self) -> None:
        self._file.close()
