"""``LineSplitter.feed`` holds one split of a chunk at a time (issue 11 item 1). A chunk that
starts with the newline ending a pending line has an empty first piece, so it takes the bulk
filler search, which splits the chunk again: the first split was still referenced then, and a
chunk's lines were held twice at the peak wherever the reads fell so (a Codex rollout of 20,000
turns had one such read and 5,000 turns none: `derive`'s traced scan peak 15.39 -> 16.41 MiB,
now 15.39 -> 15.40). Python's traced peak, deterministic, in process."""

from __future__ import annotations

import tracemalloc

from sesstool.store.lines import LineSplitter

LINE = b'{"type":"response_item","payload":{"type":"message","text":"a line of the chunk"}}'
LINES = 8_000  # about 660 KB of lines in the chunk: far past the bulk search's 64


def _peak_of_feeding(chunk: bytes) -> int:
    splitter = LineSplitter()
    for _ in splitter.feed(b'{"pending":'):  # a line left pending before the chunk
        pass
    tracemalloc.start()
    try:
        for _ in splitter.feed(chunk):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_chunk_starting_with_a_newline_is_split_once_at_a_time() -> None:
    body = b"\n".join([LINE] * LINES) + b"\n"
    plain = _peak_of_feeding(b'"x"}\n' + body)  # the pending line ends inside the chunk
    leading = _peak_of_feeding(b"\n" + body)  # ... or with the chunk's first byte
    assert leading < plain * 1.25, (leading, plain)


def test_the_lines_are_the_same_either_way() -> None:
    for first in (b"\n", b'"x"}\n'):
        batches = [b for b in LineSplitter().feed(b'{"p":' + first + LINE + b"\n" + LINE + b"\n")]
        lines = [line for batch in batches if isinstance(batch, tuple) for line in batch[0]]
        assert lines == [b'{"p":' + first.rstrip(b"\n"), LINE, LINE]
