"""Raw JSONL reader (spec §9.1, §6.3): complete lines with byte offsets; the bytes after the
last newline become the partial line (a torn tail). Also holds the one-pass contract that the
zstd reader shares.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import BinaryIO

from sesstool.core.physical import Batch, PhysicalIssue, ReadSummary
from sesstool.store.lines import DEFAULT_MAX_LINE, LineSplitter

CHUNK_SIZE = 1 << 20


class PhysicalReader(ABC):
    """One streaming pass over an open binary stream positioned at byte 0.

    ``batches()`` may be called once; ``summary`` is valid once it is exhausted. Readers never
    open, seek or slurp the file: memory is bounded by ``max_line`` plus one read chunk.
    """

    def __init__(
        self, stream: BinaryIO, *, max_line: int = DEFAULT_MAX_LINE, chunk_size: int = CHUNK_SIZE
    ) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be positive")  # read(0) would look like EOF
        self._stream = stream
        self.max_line = max_line
        self.chunk_size = chunk_size
        self._started = False
        self._summary: ReadSummary | None = None

    def batches(self) -> Iterator[Batch | PhysicalIssue]:
        # Not a generator itself, so a second call fails here rather than at first next().
        if self._started:
            raise RuntimeError("a reader makes one pass: batches() was already called")
        self._started = True
        return self._read()

    @property
    def summary(self) -> ReadSummary:
        if self._summary is None:
            raise RuntimeError("the read summary is valid only once batches() is exhausted")
        return self._summary

    @abstractmethod
    def _read(self) -> Iterator[Batch | PhysicalIssue]:
        """Yield batches and issues; set ``self._summary`` as the last step."""


class RawReader(PhysicalReader):
    """Uncompressed JSONL. CR before LF stays in the line: the scanner decides about it."""

    def _read(self) -> Iterator[Batch | PhysicalIssue]:
        splitter = LineSplitter(self.max_line)
        read = self._stream.read
        size = self.chunk_size
        file_bytes = 0
        while chunk := read(size):
            file_bytes += len(chunk)
            yield from splitter.feed(chunk)
        self._summary = ReadSummary(
            encoding="raw",
            file_bytes=file_bytes,
            plaintext_bytes=splitter.offset,
            lines=splitter.lines,
            frames=0,
            partial_line=splitter.finish(),
            torn_frame=None,
            stopped_early=False,
            last_good_frame_end=None,
        )
