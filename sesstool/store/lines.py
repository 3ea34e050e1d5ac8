"""Split a stream of plaintext chunks into complete lines with byte offsets and line numbers.

Shared by the raw and zstd readers. Memory is bounded by ``max_line``: a line that grows past
it is reported once and skipped up to its newline, never buffered.
"""

from __future__ import annotations

from collections.abc import Iterator

from sesstool.core import rule_ids as R
from sesstool.core.physical import Batch, PartialLine, PhysicalIssue

DEFAULT_MAX_LINE = 64 * 1024 * 1024


class LineSplitter:
    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._discarding = False  # inside an over-long line, dropping bytes up to "\n"
        self.offset = 0  # plaintext offset of the next byte to be consumed
        self._line_start = 0  # plaintext offset where the pending line starts
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
        base = self.offset
        self.offset += len(chunk)
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
            self._pending_len = 0
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
        self._pending = []
        self._pending_len = 0
        tail = parts[-1]
        self._line_start = base + len(chunk) - len(tail)
        n = len(lines)
        self.line = start_line + n
        self.lines += n
        if n and max(map(len, lines)) > self.max_line:
            yield from self._split_long(lines, start_offset, start_line, frame, frame_offset)
        elif n:
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
        partial = PartialLine(self._line_start, self._pending_len, self.line)
        self._pending.clear()
        self._pending_len = 0
        return partial

    def take_partial(self) -> bytes:
        """The buffered partial line (empty when it was over-long and discarded)."""
        return b"".join(self._pending)
