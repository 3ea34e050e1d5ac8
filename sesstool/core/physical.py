"""What a reader hands to the scanner: batches of complete lines, physical issues, a summary.

The store ring produces these; the core ring consumes them. Kept deliberately small and
tuple-based on the hot path: a batch is ``(lines, first_offset, first_line, frame)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sesstool.core.errors import Address

# (complete lines without their b"\n", plaintext offset of the first, its 1-based line number,
#  zstd frame index of the chunk the batch came from or None for raw input)
Batch = tuple[list[bytes], int, int, "int | None"]

Encoding = Literal["raw", "zstd"]

# What a FramingFact says of zstd frame 0 (its ``rule`` field: a fact, not a rule id)
FRAME_0_MORE_LINES = "frame-0-more-lines"  # frame 0 holds more than one line
FRAME_0_OPEN_LINE = "frame-0-open-line"  # frame 0 does not end with a newline


@dataclass(frozen=True, slots=True)
class PhysicalIssue:
    """A defect found below the JSON level. ``rule`` is a rule id (see core.rules).

    ``fatal`` means the reader stopped: nothing after this point was delivered.
    """

    rule: str
    message: str
    offset: int | None = None
    line: int | None = None
    frame: int | None = None
    frame_offset: int | None = None
    fatal: bool = False
    lines: int = 1  # lines the issue stands for (a bulk run of filler lines: many)
    length: int | None = None  # bytes it spans, newlines included (a run of filler lines)
    blank: bool = False  # a run of empty lines only (no NUL): a dialect may skip them


@dataclass(frozen=True, slots=True)
class FramingFact(PhysicalIssue):
    """How zstd frame 0 is laid out, where that is no defect by itself: it holds more than one
    line, or does not end with a newline (``rule`` is ``FRAME_0_*``, ``message`` says it in
    words; addressed to frame 0). The reader reports it after the lines it speaks of and reads
    on; it takes no dialect's view of it. A dialect whose layout puts its first record alone in
    frame 0 (dsh §9.2) judges it once the reading has left frame 0, when it is known whether
    that frame is the whole log (``Dialect.framing_finding``); the others skip it."""


@dataclass(frozen=True, slots=True)
class PartialLine:
    """Bytes after the last newline: a torn record (never decoded)."""

    offset: int
    length: int
    line: int
    frame: int | None = None  # zstd: the frame its first byte was decoded from (None for raw)
    frame_offset: int | None = None  # that frame's offset in the compressed file

    def address(self, path: str) -> Address:
        """Where the torn record starts: in a zstd log, in the plaintext of ``frame``."""
        return Address(path, self.offset, self.line, self.frame, self.frame_offset, None)


@dataclass(frozen=True, slots=True)
class TornFrame:
    """A zstd last frame cut by EOF (spec §7.4)."""

    index: int
    file_offset: int  # where the torn frame starts in the compressed file
    file_length: int  # compressed bytes present
    plaintext_offset: int  # plaintext offset where its decoded prefix starts
    plaintext_length: int  # plaintext bytes decodable from the present prefix
    lines: int = 0  # complete lines recovered (delivered) from that prefix


@dataclass(frozen=True, slots=True)
class ReadSummary:
    """Facts about the physical file, valid once the reader is exhausted."""

    encoding: Encoding
    file_bytes: int  # bytes read from the file (compressed for zstd)
    plaintext_bytes: int  # decoded bytes delivered or held as partial line
    lines: int  # complete lines delivered
    frames: int  # complete zstd frames (0 for raw)
    partial_line: PartialLine | None  # trailing bytes without a newline
    torn_frame: TornFrame | None  # zstd only
    stopped_early: bool  # a fatal physical issue stopped the read
    last_good_frame_end: int | None  # zstd: file offset after the last intact frame

    @property
    def first_frame(self) -> int | None:
        """0 in a zstd file that holds a frame (its first line is decoded from frame 0: where
        an address of the first line points), else None."""
        return 0 if self.encoding == "zstd" and self.file_bytes else None

    @property
    def one_frame(self) -> bool:
        """The log is one complete zstd frame read to its end (how a generic compressor, ``zstd
        FILE``, writes a whole log), not a frame per append."""
        return self.frames == 1 and self.torn_frame is None and not self.stopped_early
