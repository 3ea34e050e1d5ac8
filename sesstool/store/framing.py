"""zstd framing for new files (spec §9.2) and plaintext ranges of existing ones.

New frames use the default level with the content checksum, as DSH writers do. Reading a
plaintext range decodes frame by frame, at most one block at a time, so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Protocol

import zstandard

from sesstool.core.errors import InputError

LEVEL = 3
_CHUNK = 1 << 20


class ByteSink(Protocol):
    def write(self, data: bytes) -> None: ...


def compress_frame(data: bytes) -> bytes:
    """One complete checksummed frame holding ``data``."""
    return zstandard.ZstdCompressor(level=LEVEL, write_checksum=True).compress(data)


class FrameWriter:
    """Stream one checksummed frame of any size into a sink."""

    def __init__(self, sink: ByteSink) -> None:
        self._sink = sink
        self._cobj = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True).compressobj()
        self.plaintext = 0

    def write(self, data: bytes) -> None:
        self.plaintext += len(data)
        out = self._cobj.compress(data)
        if out:
            self._sink.write(out)

    def close(self) -> None:
        self._sink.write(self._cobj.flush())


def copy_bytes(stream: BinaryIO, start: int, end: int) -> Iterator[bytes]:
    """File bytes [start, end) in bounded pieces."""
    stream.seek(start)
    left = end - start
    while left > 0:
        piece = stream.read(min(_CHUNK, left))
        if not piece:
            raise InputError(
                f"the source ended at byte {end - left}, before byte {end}: it changed while being read"
            )
        left -= len(piece)
        yield piece


def zstd_plaintext(
    stream: BinaryIO, file_offset: int, plain_start: int, plain_end: int, max_window: int
) -> Iterator[bytes]:
    """Plaintext [plain_start, plain_end) of the frames starting at ``file_offset`` (whose first
    plaintext byte is ``plain_start``). The last frame may be torn: its decodable prefix counts
    (spec §7.4 "flush, don't finish"). Each read returns at most 1 MiB: memory stays bounded
    however far a frame expands. The range was validated by the scan that planned it."""
    stream.seek(file_offset)
    dctx = zstandard.ZstdDecompressor(max_window_size=max_window)
    position = plain_start
    with dctx.stream_reader(stream, read_across_frames=True, closefd=False) as reader:
        while position < plain_end:
            try:
                out = reader.read(min(_CHUNK, plain_end - position))
            except zstandard.ZstdError as err:
                raise InputError(
                    f"zstd source no longer decodes at plaintext byte {position}: {err}"
                ) from None
            if not out:
                raise InputError(f"zstd source ended at plaintext byte {position}, before {plain_end}")
            position += len(out)
            yield out
