"""Fleet summaries on disk: JSONL rows streamed into a new file, a Parquet copy, and reading an
earlier summary back for --resume. Both files go through the one publisher (new names only).

The JSONL file is published while the run goes: its temporary file receives each row as it
arrives (memory stays flat however many files), and it is linked to its name when the run
ends — also after an interrupt, with the rows finished so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from sesstool.core.errors import InputError, WriteRefusedError
from sesstool.store.publish import Published, Sink, publish

# Parquet column types by name ("str", "int", "float", "list[str]"); the fleet passes its row
# layout so that this module knows nothing of what a row means.
ColumnTypes = tuple[tuple[str, str], ...]
_ROW_GROUP = 64 * 1024


def publish_jsonl(target: Path, rows: Iterable[dict[str, Any]]) -> tuple[Published, int]:
    """Write every row of ``rows`` (consumed while it is produced) as one JSON line."""
    count = [0]

    def produce(sink: Sink) -> None:
        for row in rows:
            sink.write(orjson.dumps(row) + b"\n")
            count[0] += 1

    def verify(tmp: Path) -> None:
        n = sum(1 for _ in read_jsonl(tmp))
        if n != count[0]:
            raise WriteRefusedError(f"summary read back {n} rows, {count[0]} were written")

    published = publish(target, produce, verify=verify, mode=0o644)
    return published, count[0]


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a summary file, one per line; a line that is not a JSON object is an error."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below; read-only
    except OSError as err:
        raise InputError(f"{path}: cannot read the summary: {err.strerror}") from None
    with f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as err:
                raise InputError(f"{path}, line {number}: not a summary row: {err}") from None
            if not isinstance(row, dict):
                raise InputError(f"{path}, line {number}: not a summary row (a JSON object)")
            yield row


def publish_parquet(target: Path, source: Path, columns: ColumnTypes) -> Published:
    """The rows of the JSONL summary ``source`` as Parquet (pyarrow), in bounded row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds: dict[str, Callable[[], Any]] = {
        "str": pa.string,
        "int": pa.int64,
        "float": pa.float64,
        "bool": pa.bool_,
        "list[str]": lambda: pa.list_(pa.string()),
    }
    schema = pa.schema([(name, kinds[kind]()) for name, kind in columns])
    total = [0]

    def produce(sink: Sink) -> None:
        out = _SinkFile(sink)
        with pq.ParquetWriter(out, schema) as writer:
            chunk: list[dict[str, Any]] = []
            for row in read_jsonl(source):
                chunk.append(row)
                if len(chunk) >= _ROW_GROUP:
                    writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                    total[0] += len(chunk)
                    chunk = []
            if chunk or total[0] == 0:
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                total[0] += len(chunk)

    def verify(tmp: Path) -> None:
        rows = pq.ParquetFile(tmp).metadata.num_rows
        if rows != total[0]:
            raise WriteRefusedError(f"parquet summary read back {rows} rows, {total[0]} were written")

    return publish(target, produce, verify=verify, mode=0o644)


class _SinkFile:
    """The minimal writable file pyarrow asks for, over a publisher sink."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._pos = 0
        self.closed = False

    def write(self, data: Any) -> int:
        b = bytes(data)
        self._sink.write(b)
        self._pos += len(b)
        return len(b)

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False
