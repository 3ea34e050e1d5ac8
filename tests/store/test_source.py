"""Opening sources: a growing (live) file is read only up to its size at open time."""

from __future__ import annotations

from pathlib import Path

from sesstool.store.source import changed_since, open_source


def test_growing_file_reads_stable_prefix(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_bytes(b'{"a":1}\n')
    with open_source(str(log)) as (stream, info):
        with log.open("ab") as f:  # a live writer appends after we opened
            f.write(b'{"b":2}\n')
        assert stream.read() == b'{"a":1}\n'
        assert changed_since(info)
    with open_source(str(log)) as (stream, info):
        assert stream.read() == b'{"a":1}\n{"b":2}\n'
        assert not changed_since(info)
