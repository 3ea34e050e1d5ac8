"""atheris harness: any bytes through the readers and the scanner (raw and zstd), RELIABILITY 27.

Run with ``make fuzz`` (time-boxed; not part of CI). The only acceptable outcome for any input
is a scan result, or the one refusal the scan makes on purpose: ``NotASessionLog`` (exit 4, issue
15 item 9) for bytes whose first lines are not any dialect's log. Every other exception is a
finding that sesstool failed to turn into a finding.
"""

from __future__ import annotations

import io
import sys

import atheris

with atheris.instrument_imports():
    from sesstool.core.errors import NotASessionLog
    from sesstool.core.options import ScanOptions
    from sesstool.dialects.registry import open_scanner
    from sesstool.store.raw_reader import RawReader
    from sesstool.store.zstd_reader import ZstdReader

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def scan(data: bytes, options: ScanOptions) -> None:
    reader: RawReader | ZstdReader
    if data.startswith(ZSTD_MAGIC):
        reader = ZstdReader(io.BytesIO(data), max_decompressed=1 << 24, max_line=1 << 20)
    else:
        reader = RawReader(io.BytesIO(data), max_line=1 << 20)
    scanner = open_scanner("fuzz", options)
    try:
        for item in reader.batches():
            scanner.feed(item)
            if scanner.stopped:
                break
    except NotASessionLog as refused:
        assert str(refused).startswith("fuzz: not a session log: "), refused
        return
    result = scanner.finish(reader.summary if not scanner.stopped else None)
    assert result.verdict in ("clean", "interrupted", "torn", "corrupt", "unsupported")


def test_one_input(data: bytes) -> None:
    scan(data, ScanOptions(collect_messages=True, collect_timeline=True))
    scan(data, ScanOptions(fixture=True, strict=True, max_depth=64))


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
