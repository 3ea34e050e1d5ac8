"""Split a stream of plaintext chunks into complete lines with byte offsets and line numbers.

Shared by the raw and zstd readers. Memory is bounded by ``max_line``: a line that grows past
it is reported once and skipped up to its newline, never buffered. Long runs of filler lines
(empty, or NUL bytes only: a crash's preallocated tail, a zstd frame of newlines) are found by a
bytes-level search and delivered as one issue with their exact address and line count, never
as one Python object per line.
"""

from __future__ import annotations

from collections.abc import Iterator

from sesstool.core import rule_ids as R
from sesstool.core.physical import Batch, PartialLine, PhysicalIssue
from sesstool.core.unsafe_integers import DigitRunFree, has_digit_run

DEFAULT_MAX_LINE = 64 * 1024 * 1024
# A run of at least this many filler lines is skipped in bulk (shorter runs go line by line and
# get the per-record findings they always had).
BULK_FILLER_LINES = 64
# Without a NUL byte, a run of BULK_FILLER_LINES filler lines is that many newlines in a row.
_NEWLINE_RUN = b"\n" * BULK_FILLER_LINES


def _has_empty_line(parts: list[bytes]) -> bool:
    """Does a piece other than the last (the pending tail) equal b"" (a C-level list scan)?"""
    try:
        parts.index(b"", 0, len(parts) - 1)
    except ValueError:
        return False
    return True


class LineSplitter:
    # Skip the bulk filler search for a chunk that cannot hold a filler line (issue 14: the two
    # two-byte searches cost about a quarter of the bare decode loop). A class attribute so a
    # test can compare against the splitter that searches every chunk.
    _shortcut = True
    # Test each chunk once for a run of 16 digits and mark the batches of a chunk without one
    # (``DigitRunFree``): the scanner's unsafe-integer prefilter then skips them (issue 14).
    _prefilter = True

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._discarding = False  # inside an over-long line, dropping bytes up to "\n"
        self.offset = 0  # plaintext offset of the next byte to be consumed
        self._line_start = 0  # plaintext offset where the pending line starts
        self._line_frame: tuple[int | None, int | None] = (None, None)  # its zstd frame, file offset
        self.line = 1  # 1-based number of the line being assembled
        self.lines = 0  # complete lines delivered

    @property
    def pending_bytes(self) -> int:
        return self._pending_len

    def feed(
        self, chunk: bytes, frame: int | None = None, frame_offset: int | None = None
    ) -> Iterator[Batch | PhysicalIssue]:
        if not chunk:
            return
        if self._shortcut and b"\x00" not in chunk:  # memchr: most chunks have no NUL byte
            parts = chunk.split(b"\n")
            # no NUL and no empty piece (no "\n\n", no leading "\n"): no filler line, so no
            # run of them: the split is the one the line-by-line path makes anyway
            if len(parts) < BULK_FILLER_LINES or not _has_empty_line(parts):
                yield from self._feed(chunk, frame, frame_offset, parts)
                return
            # the filler search below splits again: let this split go first, or a chunk that
            # merely starts with the newline ending a pending line holds two (a chunk's lines
            # twice over at the peak, by where the reads fall: issue 11 item 1)
            del parts
        pos = 0
        for start, end, count in self._filler_runs(chunk):
            if start > pos:
                yield from self._feed(chunk[pos:start], frame, frame_offset)
            yield self._filler(chunk, start, end, count, frame, frame_offset)
            pos = end
        if pos < len(chunk):
            yield from self._feed(chunk[pos:] if pos else chunk, frame, frame_offset)

    def _filler_runs(self, chunk: bytes) -> Iterator[tuple[int, int, int]]:
        """(start, end, lines) of each run of >= BULK_FILLER_LINES filler lines in ``chunk``,
        each starting at a line start and ending after a newline.

        Only C-level searches: a run starts after a newline that is followed by a newline or a
        NUL (two ``find`` calls per chunk find none in an ordinary log), and it extends over
        NULs and newlines by ``lstrip`` on growing windows.
        """
        if b"\x00" not in chunk and _NEWLINE_RUN not in chunk:
            # The common case, decided by two fast searches (memchr, and a long needle that
            # skips): the two-byte searches below cost ~5 ms per MiB, a third of a validate.
            return
        n = len(chunk)
        at_line_start = not (self._pending_len or self._discarding)
        candidate = 0 if at_line_start and chunk[0] in (0, 10) else -1
        pos = 0
        while True:
            if candidate < 0:
                a, b = chunk.find(b"\n\n", pos), chunk.find(b"\n\x00", pos)
                hit = min(a, b) if a >= 0 and b >= 0 else max(a, b)
                if hit < 0:
                    return
                candidate = hit + 1
            start = candidate
            candidate = -1
            end, window = start, 256
            while end < n:
                piece = chunk[end : end + window]
                rest = len(piece.lstrip(b"\x00\n"))
                end += len(piece) - rest
                if rest:
                    break
                window *= 4
            end = chunk.rfind(b"\n", start, end) + 1  # whole lines only
            if end > start:
                count = chunk.count(b"\n", start, end)
                if count >= BULK_FILLER_LINES:
                    yield start, end, count
            pos = max(end, start)
            if pos >= n:
                return

    def _filler(
        self, chunk: bytes, start: int, end: int, count: int, frame: int | None, frame_offset: int | None
    ) -> PhysicalIssue:
        """``count`` filler lines at a line start: one issue, addressed at the first of them."""
        first_is_nul = chunk[start] == 0
        issue = PhysicalIssue(
            R.NUL_BYTES if first_is_nul else R.INVALID_JSON,
            f"{count} filler lines (empty or NUL bytes only) where records should be",
            offset=self.offset,
            line=self.line,
            frame=frame,
            frame_offset=frame_offset,
            lines=count,
            length=end - start,
            blank=chunk.find(b"\x00", start, end) < 0,
        )
        self.offset += end - start
        self._line_start = self.offset
        self.line += count
        self.lines += count
        return issue

    def _feed(
        self, chunk: bytes, frame: int | None, frame_offset: int | None, parts: list[bytes] | None = None
    ) -> Iterator[Batch | PhysicalIssue]:
        base = self.offset
        self.offset += len(chunk)
        if parts is None:
            parts = chunk.split(b"\n")
        if len(parts) == 1:
            self._grow(chunk, frame, frame_offset)
            if self._issue is not None:
                issue, self._issue = self._issue, None
                yield issue
            return
        # parts[0] completes the pending line; parts[1:-1] are whole lines; parts[-1] pends.
        first = parts[0]
        first_offset = self._line_start
        first_line = self.line
        joined = False  # the first line holds bytes of earlier chunks
        if self._discarding:
            self._discarding = False
            lines = parts[1:-1]
            start_offset = base + len(first) + 1
            start_line = self.line + 1
        else:
            if self._pending:
                self._pending.append(first)
                first = b"".join(self._pending)
                self._pending.clear()
                joined = True
            if len(first) > self.max_line:
                yield self._too_long(first_offset, first_line, len(first), frame, frame_offset)
                lines = parts[1:-1]
                start_offset = base + len(parts[0]) + 1
                start_line = first_line + 1
            else:
                parts[0] = first
                lines = parts[:-1]
                start_offset = first_offset
                start_line = first_line
        self._pending_len = 0  # nothing pends (a discarded line counted its bytes here)
        tail = parts[-1]
        self._line_start = base + len(chunk) - len(tail)
        n = len(lines)
        self.line = start_line + n
        self.lines += n
        if n and max(map(len, lines)) > self.max_line:
            yield from self._split_long(lines, start_offset, start_line, frame, frame_offset)
        elif n:
            if self._prefilter and not has_digit_run(chunk) and not (joined and has_digit_run(lines[0])):
                # every line is in ``chunk`` but a joined first one, tested on its own
                lines = DigitRunFree(lines)
            yield (lines, start_offset, start_line, frame)
        if tail:
            self._grow(tail, frame, frame_offset)
            if self._issue is not None:
                issue, self._issue = self._issue, None
                yield issue

    _issue: PhysicalIssue | None = None

    def _grow(self, piece: bytes, frame: int | None, frame_offset: int | None) -> None:
        if self._discarding:
            self._pending_len += len(piece)
            return
        if not self._pending_len:
            self._line_frame = (frame, frame_offset)
        self._pending.append(piece)
        self._pending_len += len(piece)
        if self._pending_len > self.max_line:
            self._issue = self._too_long(
                self._line_start, self.line, self._pending_len, frame, frame_offset, at_least=True
            )
            self._pending.clear()
            self._discarding = True

    def _too_long(
        self,
        offset: int,
        line: int,
        length: int,
        frame: int | None,
        frame_offset: int | None,
        at_least: bool = False,
    ) -> PhysicalIssue:
        more = "more than " if at_least else ""
        return PhysicalIssue(
            R.LINE_TOO_LONG,
            f"line is {more}{length} bytes, over the limit of {self.max_line}",
            offset=offset,
            line=line,
            frame=frame,
            frame_offset=frame_offset,
        )

    def _split_long(
        self,
        lines: list[bytes],
        offset: int,
        line: int,
        frame: int | None,
        frame_offset: int | None,
    ) -> Iterator[Batch | PhysicalIssue]:
        run: list[bytes] = []
        run_offset, run_line = offset, line
        for data in lines:
            if len(data) > self.max_line:
                if run:
                    yield (run, run_offset, run_line, frame)
                    run = []
                yield self._too_long(offset, line, len(data), frame, frame_offset)
                run_offset, run_line = offset + len(data) + 1, line + 1
            else:
                run.append(data)
            offset += len(data) + 1
            line += 1
        if run:
            yield (run, run_offset, run_line, frame)

    def finish(self) -> PartialLine | None:
        """End of input: the bytes after the last newline, if any, are a partial line."""
        if self._pending_len == 0:
            return None
        partial = PartialLine(self._line_start, self._pending_len, self.line, *self._line_frame)
        self._pending.clear()
        self._pending_len = 0
        return partial

    def take_partial(self) -> bytes:
        """The buffered partial line (empty when it was over-long and discarded)."""
        return b"".join(self._pending)
