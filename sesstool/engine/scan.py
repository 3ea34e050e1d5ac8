"""read → scan: open a source, stream it through the scanner, return the scan and read facts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sesstool.core.model import ScanResult
from sesstool.core.physical import ReadSummary
from sesstool.core.scanner import Scanner, ScanOptions
from sesstool.store.raw_reader import RawReader
from sesstool.store.source import ReadLimits, SourceInfo, changed_since, open_source
from sesstool.store.zstd_reader import ZstdReader

Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True, slots=True)
class ScanReport:
    source: SourceInfo
    read: ReadSummary
    scan: ScanResult
    live: bool  # the file changed while it was read: the report covers the stable prefix


def scan_source(
    arg: str,
    options: ScanOptions | None = None,
    limits: ReadLimits | None = None,
    progress: Progress | None = None,
) -> ScanReport:
    """Scan one log. Raises InputError only when the file cannot be opened at all."""
    limits = limits or ReadLimits()
    options = options or ScanOptions()
    with open_source(arg) as (stream, info):
        if info.filename_version is not None:
            options = replace(options, filename_version=info.filename_version)
        scanner = Scanner(info.display, options)
        reader: RawReader | ZstdReader
        if info.encoding == "zstd":
            reader = ZstdReader(
                stream,
                max_line=limits.max_line,
                max_decompressed=limits.max_decompressed,
                max_window=limits.max_window,
            )
        else:
            reader = RawReader(stream, max_line=limits.max_line)
        feed = scanner.feed
        total = info.size if info.encoding == "raw" else None
        summary: ReadSummary | None = None
        for item in reader.batches():
            feed(item)
            if progress is not None and type(item) is tuple:
                progress(item[1], total)
            if scanner.stopped:
                # --at reached or an unusable header: the rest is deliberately not read
                summary = ReadSummary(
                    info.encoding, info.size or 0, scanner.committed, 0, 0, None, None, True, None
                )
                break
        if summary is None:
            summary = reader.summary
        result = scanner.finish(summary)
        live = changed_since(info)
    return ScanReport(info, summary, result, live)
