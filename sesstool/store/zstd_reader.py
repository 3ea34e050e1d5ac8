"""Multi-frame zstd reader (spec §9.2): walks frames structurally, decodes them block by block
and streams their lines. EOF inside the last frame is a torn tail (§7.4); every other defect
is a fatal physical issue (§6.3).

Two halves (issue 14): a *walker* reads the file, checks the framing and decompresses, and
turns each frame into events (frame start, issue, plaintext, complete, torn, end); the reader
consumes those events in order and does everything that depends on the plaintext so far (the
line splitter, the decompression budget, frame 0's layout, the frame-boundary finding, every
address). By default the walker runs on a thread ahead of the reader (``store.ahead``) when a
second CPU can run it, so on two cores decompression (which releases the GIL) overlaps the
scan; run inline, the same events come in the same order, so every finding, address and
summary is the same either way.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Generator, Iterator
from typing import Any, BinaryIO

import zstandard

from sesstool.core import rule_ids as R
from sesstool.core.physical import (
    FRAME_0_MORE_LINES,
    FRAME_0_OPEN_LINE,
    Batch,
    Encoding,
    FramingFact,
    PhysicalIssue,
    ReadSummary,
    TornFrame,
)
from sesstool.store.ahead import Ahead, more_than_one_cpu
from sesstool.store.lines import DEFAULT_MAX_LINE, LineSplitter
from sesstool.store.raw_reader import CHUNK_SIZE, PhysicalReader

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DEFAULT_MAX_DECOMPRESSED = 64 << 30
DEFAULT_MAX_WINDOW = 32 << 20

# RFC 8878 §3.1.1.2: no block may exceed 128 KiB, compressed or regenerated. Checking it
# ourselves keeps a forged block size from making us buffer up to 2 MiB per block.
_MAX_BLOCK = 128 << 10
_MIN_WINDOW = 1 << 10
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_MAGIC = 0x184D2A50
_DICT_ID_LEN = (0, 1, 2, 4)
_FCS_LEN = (0, 2, 4, 8)  # FCS_flag 0 means 1 byte when Single_Segment is set
_BLOCK_TYPES = ("raw", "RLE", "compressed")

Item = Batch | PhysicalIssue

# The walker hands events to the reader in groups of about this much plaintext (one queue item;
# the queue holds AHEAD_GROUPS of them), so the walker's thread takes the GIL about once per
# group, not once per frame.
GROUP_PLAINTEXT = 512 << 10
AHEAD_GROUPS = 2

# Events (tuples; the first field says which):
_FRAME = 0  # (_FRAME, index, start): a frame starts at file offset ``start``
_ISSUE = 1  # (_ISSUE, rule, message, index, start, fatal, file offset after the bytes read)
_DATA = 2  # (_DATA, plaintext, index, start, file offset after the block)
_DONE = 3  # (_DONE, index, start, decoder error | None, decoder at eof, file offset after frame)
_WHOLE = 4  # (_WHOLE, plaintext, index, start, error | None, eof, file offset): _DATA then _DONE
_TORN = 5  # (_TORN, index, start, file offset at EOF)
_EOF = 6  # (_EOF, file offset): no more frames
Event = tuple[Any, ...]
Group = list[Event]
_Pending = tuple[int, bytes, int]  # (position of its _WHOLE in the group, frame bytes, content size)


def sniff_encoding(head: bytes) -> Encoding:
    """Encoding from the first bytes of a file: the magic decides, never the suffix."""
    return "zstd" if head.startswith(ZSTD_MAGIC) else "raw"


class _End(enum.Enum):
    COMPLETE = enum.auto()
    TORN = enum.auto()
    FATAL = enum.auto()


class _Input:
    """Sequential reads of exact sizes over a stream that may return short reads (pipes)."""

    def __init__(self, stream: BinaryIO, chunk_size: int) -> None:
        self._read = stream.read
        self._chunk_size = chunk_size
        self._buf = b""
        self._pos = 0
        self.offset = 0  # file offset of the next byte handed out

    def take(self, n: int) -> bytes:
        """``n`` bytes, or fewer only at EOF."""
        end = self._pos + n
        if end <= len(self._buf):
            out = self._buf[self._pos : end]
            self._pos = end
            self.offset += n
            return out
        parts = [self._buf[self._pos :]]
        have = len(parts[0])
        self._buf, self._pos = b"", 0
        while have < n:
            chunk = self._read(self._chunk_size)
            if not chunk:
                break
            need = n - have
            if len(chunk) > need:
                parts.append(chunk[:need])
                self._buf, self._pos = chunk, need
                have = n
            else:
                parts.append(chunk)
                have += len(chunk)
        out = b"".join(parts)
        self.offset += len(out)
        return out


class _Walker:
    """Reads the frames (RFC 8878 §3.1.1) and yields groups of events (see above).

    Most frames of an append-written log are one block of at most 128 KiB with their content
    size in the header: those are decoded a group at a time by one ``multi_decompress_to_buffer``
    call (one release of the GIL for the whole group); if that call fails, every frame of the
    group is decoded again alone, exactly as any other frame is, so the failing frame's error
    is the one a frame-by-frame decode gives. Every other frame is decoded block by block.
    """

    # False decodes every frame alone (the differential test compares the two).
    batching = True

    def __init__(self, stream: BinaryIO, chunk_size: int, max_window: int, max_decompressed: int) -> None:
        self.input = _Input(stream, chunk_size)
        self._dctx = zstandard.ZstdDecompressor(max_window_size=max_window)
        self._max_window = max_window
        self._max_decompressed = max_decompressed
        self._plain = 0  # plaintext bytes handed out in events so far
        self._group: Group = []
        self._group_bytes = 0
        self._pending: list[_Pending] = []

    def groups(self) -> Iterator[Group]:
        for _ in self._walk():
            if self._group_bytes >= GROUP_PLAINTEXT:
                yield self._flush()
        if self._group:
            yield self._flush()

    def _emit(self, event: Event) -> None:
        self._group.append(event)

    def _flush(self) -> Group:
        if self._pending:
            self._decode_pending()
        group, self._group, self._group_bytes = self._group, [], 0
        return group

    def _decode_pending(self) -> None:
        pending, self._pending = self._pending, []
        group = self._group
        try:
            # content sizes are all >= 1: an empty frame is never batched (zstandard 0.25
            # frees its output twice when a whole batch decodes to nothing)
            out = self._dctx.multi_decompress_to_buffer([frame for _, frame, _ in pending])
        except (zstandard.ZstdError, ValueError):
            for at, frame, _ in pending:
                dobj = self._dctx.decompressobj()
                error: str | None = None
                try:
                    plain = dobj.decompress(frame)
                except zstandard.ZstdError as exc:
                    error, plain = str(exc), b""
                _, _, index, start, _, _, end = group[at]
                group[at] = (_WHOLE, plain, index, start, error, dobj.eof, end)
            return
        for n, (at, _, _) in enumerate(pending):
            _, _, index, start, _, _, end = group[at]
            group[at] = (_WHOLE, out[n].tobytes(), index, start, None, True, end)

    def _walk(self) -> Iterator[None]:
        """Yields after each frame and each block's plaintext (the caller cuts groups there)."""
        src = self.input
        index = 0
        while True:
            start = src.offset
            magic = src.take(4)
            if not magic:
                self._emit((_EOF, src.offset))
                return
            self._emit((_FRAME, index, start))
            end = yield from self._frame(index, start, magic)
            if end is not _End.COMPLETE:
                return
            index += 1
            yield None

    def _fatal(self, rule: str, message: str, index: int, start: int) -> _End:
        self._emit((_ISSUE, rule, message, index, start, True, self.input.offset))
        return _End.FATAL

    def _frame(self, index: int, start: int, magic: bytes) -> Generator[None, None, _End]:
        """Walk one frame; ``magic`` is its first bytes read."""
        src = self.input
        if magic != ZSTD_MAGIC:
            if len(magic) < 4 and ZSTD_MAGIC.startswith(magic):
                return self._tear(index, start)
            rule, message = _bad_magic(magic)
            return self._fatal(rule, message, index, start)
        descriptor = src.take(1)
        if not descriptor:
            return self._tear(index, start)
        fhd = descriptor[0]
        if fhd & 0x08:
            return self._fatal(
                R.ZSTD_RESERVED_BIT,
                f"frame header descriptor 0x{fhd:02x} has the reserved bit set",
                index,
                start,
            )
        single_segment = bool(fhd & 0x20)
        has_checksum = bool(fhd & 0x04)
        dict_len = _DICT_ID_LEN[fhd & 0x03]
        fcs_flag = fhd >> 6
        fcs_len = _FCS_LEN[fcs_flag] or (1 if single_segment else 0)
        rest_len = (0 if single_segment else 1) + dict_len + fcs_len
        rest = src.take(rest_len)
        if len(rest) < rest_len:
            return self._tear(index, start)
        content_size = -1  # unknown
        if fcs_len:
            content_size = int.from_bytes(rest[rest_len - fcs_len :], "little") + (
                256 if fcs_flag == 1 else 0
            )
        if single_segment:
            # The window is the content size; FCS_flag 1 stores it minus 256.
            window = content_size
        else:
            exponent, mantissa = rest[0] >> 3, rest[0] & 0x07
            base = 1 << (10 + exponent)
            window = base + (base >> 3) * mantissa
        if window > self._max_window:
            return self._fatal(
                R.ZSTD_WINDOW_TOO_LARGE,
                f"frame needs a {window}-byte window, over the limit of {self._max_window}",
                index,
                start,
            )
        if not has_checksum:
            self._emit(
                (
                    _ISSUE,
                    R.ZSTD_NO_CHECKSUM,
                    "frame has no content checksum (writers always set it)",
                    index,
                    start,
                    False,
                    src.offset,
                )
            )
        # a content size the whole frame can hold in one block, and that keeps the budget
        batch_size = content_size if 0 < content_size <= _MAX_BLOCK and not dict_len and self.batching else 0
        if batch_size and self._plain + batch_size > self._max_decompressed:
            batch_size = 0
        return (yield from self._blocks(index, start, [magic, descriptor, rest], has_checksum, batch_size))

    def _blocks(
        self, index: int, start: int, pending: list[bytes], has_checksum: bool, batch_size: int
    ) -> Generator[None, None, _End]:
        """Walk the blocks (and checksum) of one frame, feeding each complete block to a fresh
        decoder; ``pending`` (bytes not yet decoded) starts with the frame header. A frame of one
        block whose content size is ``batch_size`` (> 0) is left for the group's batch decode."""
        src = self.input
        dobj = None
        error: str | None = None  # first decoder failure; fatal only if the frame is complete
        torn = False
        first = True
        while True:
            block_at = src.offset
            head = src.take(3)
            pending.append(head)
            if len(head) < 3:
                torn = True
                break
            header = int.from_bytes(head, "little")
            block_type = (header >> 1) & 0x03
            size = header >> 3
            if block_type == 3:
                return self._fatal(
                    R.ZSTD_RESERVED_BLOCK,
                    f"block at file offset {block_at} has the reserved block type 3",
                    index,
                    start,
                )
            if size > _MAX_BLOCK:
                return self._fatal(
                    R.ZSTD_DECODE_ERROR,
                    f"{_BLOCK_TYPES[block_type]} block at file offset {block_at} declares "
                    f"{size} bytes, over the 128 KiB block maximum",
                    index,
                    start,
                )
            body_len = 1 if block_type == 1 else size  # an RLE block stores its byte once
            body = src.take(body_len)
            pending.append(body)
            if len(body) < body_len:
                torn = True
                break
            last = header & 1
            if last and has_checksum:
                checksum = src.take(4)
                pending.append(checksum)
                if len(checksum) < 4:
                    torn = True
                    break
            if last and first and batch_size:
                self._pending.append((len(self._group), b"".join(pending), batch_size))
                self._emit((_WHOLE, b"", index, start, None, True, src.offset))
                self._plain += batch_size
                self._group_bytes += batch_size
                return _End.COMPLETE
            first = False
            if dobj is None:
                dobj = self._dctx.decompressobj()
            if error is None:
                # One block in, at most 128 KiB out: this is what bounds memory.
                try:
                    out = dobj.decompress(b"".join(pending))
                except zstandard.ZstdError as exc:
                    # Keep walking: only a complete frame makes this corruption (spec §6.3).
                    error = str(exc)
                else:
                    if out:
                        if not self._data(out, index, start):
                            return _End.FATAL
                        yield None
            pending.clear()
            if last:
                break

        if torn:
            return self._torn(dobj, error, pending, index, start)
        assert dobj is not None
        self._emit((_DONE, index, start, error, dobj.eof, src.offset))
        return _End.COMPLETE

    def _torn(self, dobj: Any, error: str | None, pending: list[bytes], index: int, start: int) -> _End:
        """§7.4 "flush, don't finish": whatever the present bytes of a torn frame decode to, no
        eof needed (a raw block even yields its partial content); then the tear."""
        if error is None:
            try:
                out = (dobj or self._dctx.decompressobj()).decompress(b"".join(pending))
            except zstandard.ZstdError:
                out = b""
            if out and not self._data(out, index, start):
                return _End.FATAL
        return self._tear(index, start)

    def _data(self, out: bytes, index: int, start: int) -> bool:
        """Emit plaintext; False once it is past the budget (the reader stops there: so do we)."""
        self._emit((_DATA, out, index, start, self.input.offset))
        self._plain += len(out)
        self._group_bytes += len(out)
        return self._plain <= self._max_decompressed

    def _tear(self, index: int, start: int) -> _End:
        self._emit((_TORN, index, start, self.input.offset))
        return _End.TORN


def _bad_magic(magic: bytes) -> tuple[str, str]:
    value = int.from_bytes(magic, "little")
    if len(magic) == 4 and value & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
        return (
            R.ZSTD_SKIPPABLE_FRAME,
            f"skippable frame (magic 0x{value:08x}) where a zstd frame should start",
        )
    return R.ZSTD_BAD_MAGIC, f"bytes {magic.hex(' ')} where a zstd frame should start"


class ZstdReader(PhysicalReader):
    """A concatenation of independent checksummed zstd frames. How frame 0 is laid out is a
    ``FramingFact``, reported after the lines it speaks of; what it must be is a dialect's rule
    (dsh §9.2), judged by the scanner, never here.

    Lines are streamed as soon as a block decodes, so a fatal issue about frame N can follow
    batches of frame N (decoded before the defect showed, e.g. a checksum mismatch at its end):
    consumers treat the lines of the issue's frame as unverified. Nothing follows the issue.

    ``ahead`` walks and decompresses the frames on a thread ahead of the consumer
    (``store.ahead.Ahead``: a bounded queue, stopped when the read ends or is abandoned); False
    does the same work inline. The default (None) is a thread when the process may run on more
    than one CPU (``store.ahead.more_than_one_cpu``). The events, and so everything yielded, are
    the same either way.
    """

    def __init__(
        self,
        stream: BinaryIO,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
        max_window: int = DEFAULT_MAX_WINDOW,
        chunk_size: int = CHUNK_SIZE,
        ahead: bool | None = None,
    ) -> None:
        super().__init__(stream, max_line=max_line, chunk_size=chunk_size)
        if max_window < _MIN_WINDOW:
            # libzstd rejects the setting itself, but only once the first frame is decoded.
            raise ValueError(f"max_window must be at least {_MIN_WINDOW} bytes")
        self.max_decompressed = max_decompressed
        self.max_window = max_window
        self.ahead = more_than_one_cpu() if ahead is None else ahead
        self._splitter = LineSplitter(max_line)
        self._frame_plain = 0  # plaintext offset where the current frame's output starts
        self._frame_lines = 0  # complete lines delivered before the current frame
        self._frame_line = 1  # line number at that offset
        self._frame0_newline = False  # frame 0 has produced its (first) newline
        self._frame0_lines = False  # frame 0 holds more than one line (a FramingFact said so)
        self._torn: TornFrame | None = None
        # Spec §6.3 judges only the *joined* plaintext of the complete frames, so a record
        # straddling two frames mid-file passes; this holds the finding for the last one.
        self._boundary: PhysicalIssue | None = None
        # Called after each complete frame with (index, file offset after it, plaintext offset
        # after it), once its lines have been consumed: a repair copies complete frames whole.
        self.on_frame_end: Callable[[int, int, int], None] | None = None

    def _read(self) -> Iterator[Item]:
        walker = _Walker(self._stream, self.chunk_size, self.max_window, self.max_decompressed)
        groups: Ahead[Group] | Iterator[Group]
        groups = Ahead(walker.groups, AHEAD_GROUPS) if self.ahead else walker.groups()
        try:
            yield from self._consume(groups)
        finally:
            if isinstance(groups, Ahead):
                groups.close()

    def _consume(self, groups: Iterator[Group]) -> Iterator[Item]:
        splitter = self._splitter
        frames = 0
        last_good_end: int | None = None
        fatal = False
        file_bytes = 0
        for event in _events(groups):
            kind = event[0]
            if kind == _WHOLE:
                _, out, index, start, error, eof, file_bytes = event
                if out and error is None and not (yield from self._deliver(out, index, start)):
                    fatal = True
                    break
                event = (_DONE, index, start, error, eof, file_bytes)
                kind = _DONE
            if kind == _DATA:
                _, out, index, start, file_bytes = event
                if not (yield from self._deliver(out, index, start)):
                    fatal = True
                    break
            elif kind == _DONE:
                _, index, start, error, eof, file_bytes = event
                end = yield from self._complete(index, start, error, eof)
                if end is _End.FATAL:
                    fatal = True
                    break
                frames += 1
                last_good_end = file_bytes
                if self.on_frame_end is not None:
                    self.on_frame_end(frames - 1, file_bytes, splitter.offset)
            elif kind == _FRAME:
                self._frame_plain = splitter.offset
                self._frame_lines = splitter.lines
                self._frame_line = splitter.line
            elif kind == _ISSUE:
                _, rule, message, index, start, is_fatal, file_bytes = event
                yield self._issue(rule, message, index, start, fatal=is_fatal)
                if is_fatal:
                    fatal = True
                    break
            elif kind == _TORN:
                _, index, start, file_bytes = event
                self._tear(index, start, file_bytes)
                break
            else:  # _EOF
                file_bytes = event[1]
                break
        # One frame of several lines holding everything: a whole plaintext log compressed by a
        # generic tool (`zstd FILE`), whose last line may be torn as in the raw log it was made
        # from: a tear, as in a raw file, for every dialect; only frames written one per append
        # promise to end on a record (docs/format.md "zstd").
        one_frame = self._frame0_lines and frames == 1 and not fatal and self._torn is None
        if not fatal and self._boundary is not None and not one_frame:
            yield self._boundary
            fatal = True
        self._summary = ReadSummary(
            encoding="zstd",
            file_bytes=file_bytes,
            plaintext_bytes=splitter.offset,
            lines=splitter.lines,
            frames=frames,
            partial_line=splitter.finish(),
            torn_frame=self._torn,
            stopped_early=fatal,
            last_good_frame_end=last_good_end,
        )

    def _complete(self, index: int, start: int, error: str | None, eof: bool) -> Generator[Item, None, _End]:
        """A frame whose every block and checksum is present: decoded cleanly, or corruption."""
        if error is None and not eof:
            error = "frame data did not end after its last block"
        if error is not None:
            rule = R.ZSTD_CHECKSUM if "checksum" in error else R.ZSTD_DECODE_ERROR
            yield self._issue(rule, f"complete frame failed to decode: {error}", index, start)
            return _End.FATAL
        if index == 0 and not self._frame0_newline and not self._frame0_lines:
            yield self._frame0_fact(FRAME_0_OPEN_LINE, "frame 0 does not end with a newline", index, start)
        splitter = self._splitter
        pending_bytes = splitter.pending_bytes
        self._boundary = None
        if pending_bytes:
            self._boundary = self._issue(
                R.ZSTD_FRAME_BOUNDARY,
                f"complete frames end inside a record ({pending_bytes} bytes after the last newline)",
                index,
                start,
                offset=splitter.offset - pending_bytes,
                line=splitter.line,
            )
        return _End.COMPLETE

    def _deliver(self, out: bytes, index: int, start: int) -> Generator[Item, None, bool]:
        """Hand decoded bytes to the splitter after the budget check, noting how frame 0 is laid out."""
        splitter = self._splitter
        if splitter.offset + len(out) > self.max_decompressed:
            yield self._issue(
                R.ZSTD_BUDGET_EXCEEDED,
                f"decompressed data exceeds the budget of {self.max_decompressed} bytes",
                index,
                start,
                offset=splitter.offset,
                line=splitter.line,
            )
            return False
        more_lines = False
        if index == 0 and not self._frame0_lines:
            newline = out.find(b"\n")
            if self._frame0_newline or (newline != -1 and newline != len(out) - 1):
                more_lines = self._frame0_lines = True
            else:
                self._frame0_newline = newline != -1
        yield from splitter.feed(out, index, start)
        if more_lines:  # after the lines it speaks of (the order their findings keep)
            yield self._frame0_fact(FRAME_0_MORE_LINES, "frame 0 holds more than one line", index, start)
        return True

    def _tear(self, index: int, start: int, file_offset: int) -> None:
        self._torn = TornFrame(
            index=index,
            file_offset=start,
            file_length=file_offset - start,
            plaintext_offset=self._frame_plain,
            plaintext_length=self._splitter.offset - self._frame_plain,
            lines=self._splitter.lines - self._frame_lines,
        )

    def _frame0_fact(self, fact: str, what: str, index: int, start: int) -> FramingFact:
        return FramingFact(fact, what, self._frame_plain, self._frame_line, index, start)

    def _issue(
        self,
        rule: str,
        message: str,
        index: int,
        start: int,
        *,
        fatal: bool = True,
        offset: int | None = None,
        line: int | None = None,
    ) -> PhysicalIssue:
        """An issue addressed to a frame; plaintext address defaults to the frame's start."""
        return PhysicalIssue(
            rule,
            message,
            offset=self._frame_plain if offset is None else offset,
            line=self._frame_line if line is None else line,
            frame=index,
            frame_offset=start,
            fatal=fatal,
        )


def _events(groups: Iterator[Group]) -> Iterator[Event]:
    for group in groups:
        yield from group
