"""read → scan: open a source, stream it through the scanner, return the scan and read facts."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch, ReadSummary
from sesstool.dialects import registry
from sesstool.dialects.base import Dialect
from sesstool.dialects.registry import DetectingScanner
from sesstool.store.readers import make_reader
from sesstool.store.source import ReadLimits, SourceInfo, changed_since, open_source
from sesstool.store.zstd_reader import ZstdReader

# (phase, bytes done, total bytes or None): "scan" reads the source, "write" produces the new
# file, "verify" reads it back. Called once per batch of lines (write: once per MiB).
Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True, slots=True)
class ScanReport:
    source: SourceInfo
    read: ReadSummary
    scan: ScanResult
    live: bool  # the file changed while it was read: the report covers the stable prefix
    dialect: Dialect  # the dialect that read the log


# What waits for the digest thread: pieces of ``_PIECE`` bytes copied into ``_PIECES`` buffers
# made once, and reused. A copy per read (1 MiB) queued two deep made a command's peak depend on
# whether the thread was behind when the peak came (a loaded machine starves it); fixed buffers
# are the same memory however the threads interleave, and four keep the thread busy while the
# scan reads on (a read's MiB ahead). Pieces of 256 KiB, not 64: a quarter of the hand-offs
# between the threads (a fork of a 60 MB Claude transcript 3.06 -> 2.97 s, three runs each).
_PIECE = 1 << 18
_PIECES = 4


class DigestWorker:
    """A digest fed on a worker thread: hashlib releases the GIL on large buffers, so hashing
    overlaps the scan (which holds it) instead of adding to it. The buffers are fixed (memory
    stays flat and does not vary), the queue ordered (one worker), and ``close`` waits until
    every byte is hashed. ``digest`` is anything with ``update(bytes-like)`` that does not keep
    what it is given (a hash, ``store.stream_copy.StreamCopy``)."""

    def __init__(self, digest: Any) -> None:
        self._free: queue.Queue[bytearray] = queue.Queue()
        for _ in range(_PIECES):
            self._free.put(bytearray(_PIECE))
        self._pending: queue.Queue[tuple[bytearray, int] | None] = queue.Queue()
        self._failure: BaseException | None = None
        self._worker = threading.Thread(
            target=self._hash, args=(digest,), name="sesstool-digest", daemon=True
        )
        self._worker.start()

    def _hash(self, digest: Any) -> None:
        # keep draining after a failure so that neither ``update`` nor ``close`` can block
        while (item := self._pending.get()) is not None:
            buffer, size = item
            if self._failure is None:
                try:
                    with memoryview(buffer) as view:
                        digest.update(view[:size])
                except BaseException as exc:  # re-raised by close() on the calling thread
                    self._failure = exc
            self._free.put(buffer)

    def update(self, data: bytes | bytearray | memoryview) -> None:
        """Queue ``data``, copied (the caller may reuse a buffer it passed)."""
        with memoryview(data) as whole:
            for start in range(0, len(whole), _PIECE):
                piece = whole[start : start + _PIECE]
                buffer = self._free.get()
                with memoryview(buffer) as into:
                    into[: len(piece)] = piece
                self._pending.put((buffer, len(piece)))

    def close(self) -> None:
        self._pending.put(None)
        self._worker.join()
        if self._failure is not None:
            raise self._failure


class _Hashing:
    """A read-only stream wrapper feeding every byte read to a digest (one pass, no re-read),
    hashed on a ``DigestWorker``."""

    def __init__(self, stream: BinaryIO, digest: Any) -> None:
        self._stream = stream
        self._worker = DigestWorker(digest)

    def peek(self, size: int) -> bytes:
        """The next bytes without consuming them (nothing is hashed twice)."""
        return peek_head(self._stream, size)

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        if data:
            self._worker.update(data)
        return data

    def close(self) -> None:
        self._worker.close()


FrameHook = Callable[[int, int, int, DetectingScanner], None]
Tap = Callable[[Batch, Dialect], None]  # a batch the scanner was fed, and the dialect reading it


def scan_source(
    arg: str | Path,
    options: ScanOptions | None = None,
    limits: ReadLimits | None = None,
    progress: Progress | None = None,
    *,
    phase: str = "scan",
) -> ScanReport:
    """Scan one log: a ``Path`` is always a file or directory; only the string ``-`` is standard
    input. Raises InputError only when the file cannot be opened at all. ``phase`` names the
    read for ``progress`` (``verify`` when a new file is read back)."""
    return run_scan(arg, options, limits, progress, phase=phase)[0]


def run_scan(
    arg: str | Path,
    options: ScanOptions | None = None,
    limits: ReadLimits | None = None,
    progress: Progress | None = None,
    *,
    digest: Any = None,
    on_frame_end: FrameHook | None = None,
    tap: Tap | None = None,
    phase: str = "scan",
) -> tuple[ScanReport, DetectingScanner]:
    """``scan_source`` for write commands: also returns the scanner (its state continues into
    verification), feeds every source byte to ``digest``, and reports complete zstd frames.
    ``tap`` sees every batch of lines the scanner is fed (the report's timeline)."""
    limits = limits or ReadLimits()
    options = options or ScanOptions()
    with open_source(arg) as (opened, info):
        hashing = _Hashing(opened, digest) if digest is not None else None
        try:
            reported = None if progress is None else partial(progress, phase)
            scanned = _scan_stream(hashing or opened, info, options, limits, reported, on_frame_end, tap)
            if hashing is not None:
                # the digest is of the whole source, also when the scan stopped early (a fatal
                # zstd issue: the reader read ahead of it by a varying amount)
                while hashing.read(1 << 20):
                    pass
            return scanned
        finally:
            if hashing is not None:
                hashing.close()


def _scan_stream(
    stream: Any,
    info: SourceInfo,
    options: ScanOptions,
    limits: ReadLimits,
    progress: Callable[[int, int | None], None] | None,
    on_frame_end: FrameHook | None,
    tap: Tap | None = None,
) -> tuple[ScanReport, DetectingScanner]:
    """Stream ``stream`` through a scanner (``run_scan`` owns the file and the digest)."""
    if info.filename_version is not None:
        options = replace(options, filename_version=info.filename_version)
    if limits.max_depth != options.max_depth:
        options = replace(options, max_depth=limits.max_depth)
    scanner = registry.open_scanner(info.display, options, registry.forced(limits.dialect))
    if info.encoding == "raw":
        scanner.vet_head(peek_head(stream, HEAD_BYTES))  # a gzip file, an ELF binary: exit 4
    reader = make_reader(stream, info.encoding, limits)
    if isinstance(reader, ZstdReader) and on_frame_end is not None:
        hook = on_frame_end
        reader.on_frame_end = lambda i, end, plain: hook(i, end, plain, scanner)
    batches = reader.batches()
    try:
        return _scan_batches(batches, reader, scanner, info, options, progress, tap)
    finally:
        # the zstd reader's read-ahead thread stops here, before the caller closes the file
        # or the digest it reads into, whatever ended the scan (an exception included)
        batches.close()  # type: ignore[attr-defined]


def _scan_batches(
    batches: Any,
    reader: Any,
    scanner: DetectingScanner,
    info: SourceInfo,
    options: ScanOptions,
    progress: Callable[[int, int | None], None] | None,
    tap: Tap | None,
) -> tuple[ScanReport, DetectingScanner]:
    total = info.size if info.encoding == "raw" else None
    summary: ReadSummary | None = None
    for item in batches:
        scanner.feed(item)
        if tap is not None and type(item) is tuple:
            tap(item, scanner.chosen())
        if progress is not None and type(item) is tuple:
            progress(item[1], total)
        if scanner.stopped:
            # --at reached or an unusable header: the rest is not scanned
            summary = ReadSummary(
                info.encoding, info.size or 0, scanner.committed, 0, 0, None, None, True, None
            )
            break
    if summary is None:
        read = summary = reader.summary
    elif options.at_seq is None:
        # an unusable header stopped the scan: the file is still read to the end, unscanned, so
        # that the report counts its lines and bytes (a 2-line file never shows "0 lines")
        for _ in batches:
            pass
        read = reader.summary
    else:
        read = summary
    result = scanner.finish(summary)
    live = changed_since(info)
    return ScanReport(info, read, result, live, scanner.chosen()), scanner


HEAD_BYTES = 64  # enough for every signature in core.looks_like


def peek_head(stream: Any, size: int) -> bytes:
    """The first ``size`` bytes of a stream, left unread: ``peek`` on a buffered stream (stdin,
    a file, a FIFO), read-and-seek-back on a seekable one (an object), else nothing."""
    if hasattr(stream, "peek"):
        return bytes(stream.peek(size)[:size])
    if getattr(stream, "seekable", lambda: False)():
        head = stream.read(size)
        stream.seek(0)
        return bytes(head)
    return b""
