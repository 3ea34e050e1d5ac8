"""atheris harness: the record decoders one by one (line JSON with its fallbacks, packed chunk
rows, range-encoded sourceEventSeqs, dsh and mini-agent headers, ISO times), RELIABILITY 27.

Every input must end in a value or in the decoder's own documented error; anything else is a
bug. Run with ``make fuzz``.
"""

from __future__ import annotations

import contextlib
import sys

import atheris

with atheris.instrument_imports():
    from sesstool.core.chunk_rows import RowError, expand_row
    from sesstool.core.header import decode_header
    from sesstool.core.jsonline import LineError, duplicate_keys, loads, negative_zero_keys
    from sesstool.core.seq_ranges import SeqRangeError, decode_seqs
    from sesstool.dialects.mini import handlers as mini


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    depth = fdp.ConsumeIntInRange(1, 1024)
    raw = fdp.ConsumeBytes(fdp.remaining_bytes())
    negative_zero_keys(raw)
    duplicate_keys(raw)
    try:
        value = loads(raw, depth)
    except LineError:
        return
    decode_header(value)
    mini.decode_header(value)
    if isinstance(value, dict):
        mini.iso_ms(value.get("time"))
        if isinstance(value.get("type"), str) and value["type"].endswith("-chunks"):
            with contextlib.suppress(RowError):
                expand_row(value)
        seq = value.get("seq")
        if type(seq) is int:
            with contextlib.suppress(SeqRangeError):
                decode_seqs(value.get("sourceEventSeqs"), seq, bool(seq % 2))


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
