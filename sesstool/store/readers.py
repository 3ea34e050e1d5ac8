"""The one place a reader is chosen for an encoding, with the read budgets applied."""

from __future__ import annotations

from typing import Any

from sesstool.core.physical import Encoding
from sesstool.store.raw_reader import RawReader
from sesstool.store.source import ReadLimits
from sesstool.store.zstd_reader import ZstdReader


def make_reader(stream: Any, encoding: Encoding, limits: ReadLimits) -> RawReader | ZstdReader:
    if encoding == "zstd":
        return ZstdReader(
            stream,
            max_line=limits.max_line,
            max_decompressed=limits.max_decompressed,
            max_window=limits.max_window,
        )
    return RawReader(stream, max_line=limits.max_line)
