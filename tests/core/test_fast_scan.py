"""The scanner's fast path (``core.fast_scan``, ``dialects.dsh.fast_v0``) against the exact loop
(``ScanOptions(exact=True)``): the whole ``ScanResult`` — findings with their addresses, verdict,
tail, open state, statistics, boundaries — must be the same for every fixture log, raw and zstd,
fed in batches of 1, 2, 3, 7 and 1000 lines, and for logs with a randomly mutated line (issue 14).
"""

from __future__ import annotations

import io
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import genlog
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import PhysicalIssue
from sesstool.dialects.dsh.fast_v0 import FAST
from sesstool.dialects.registry import open_scanner
from sesstool.store.raw_reader import RawReader
from sesstool.store.zstd_reader import ZstdReader
from tests.conftest import FIXTURES, examples

BATCH_SIZES = (1, 2, 3, 7, 1000)


def _fixture_logs() -> list[Path]:
    logs = [
        p
        for root in (FIXTURES / "dsh", FIXTURES / "mini")
        for p in sorted(root.glob("*/session*.jsonl*"))
        if p.name.endswith((".jsonl", ".zstd"))
    ]
    logs += sorted((FIXTURES / "migrate").glob("**/*.jsonl"))
    assert len(logs) >= 200, "fixture corpus missing"
    return logs


LOGS = _fixture_logs()


def _rebatch(items: Any, size: int) -> Any:
    """The reader's items with every batch of lines cut into batches of ``size`` lines (offsets
    and line numbers carried), physical issues in place."""
    for item in items:
        if isinstance(item, PhysicalIssue):
            yield item
            continue
        lines, offset, lineno, frame = item
        for start in range(0, len(lines), size):
            part = lines[start : start + size]
            yield part, offset, lineno + start, frame
            offset += sum(map(len, part)) + len(part)


def scan(data: bytes, zstd: bool, size: int, options: ScanOptions) -> ScanResult:
    reader = ZstdReader(io.BytesIO(data)) if zstd else RawReader(io.BytesIO(data))
    scanner = open_scanner("log", options)
    for item in _rebatch(reader.batches(), size):
        scanner.feed(item)
    return scanner.finish(reader.summary)


def assert_same(data: bytes, zstd: bool, size: int, options: ScanOptions | None = None) -> None:
    options = options or ScanOptions()
    fast = scan(data, zstd, size, options)
    exact = scan(data, zstd, size, replace(options, exact=True))
    for f in fields(ScanResult):
        assert getattr(fast, f.name) == getattr(exact, f.name), f"{f.name} differs (batches of {size})"


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(FIXTURES)) for p in LOGS])
def test_every_fixture_in_every_batch_size(log: Path) -> None:
    data = log.read_bytes()
    for size in BATCH_SIZES:
        assert_same(data, log.name.endswith(".zstd"), size)


def _generated(workload: str, torn: bool, tmp: Path) -> bytes:
    path = tmp / f"{workload}.jsonl"
    genlog.generate(str(path), 96 * 1024, seed=5, torn=torn, workload=workload)
    return path.read_bytes()


@pytest.mark.parametrize("torn", [False, True])
@pytest.mark.parametrize("workload", ["small", "chunk"])
def test_generated_logs(workload: str, torn: bool, tmp_path: Path) -> None:
    """The bench workloads: nearly every record takes the fast path."""
    data = _generated(workload, torn, tmp_path)
    for size in BATCH_SIZES:
        assert_same(data, False, size)
    zstd = tmp_path / "log.zstd"
    genlog.compress(str(tmp_path / f"{workload}.jsonl"), str(zstd))
    assert_same(zstd.read_bytes(), True, 7)


def test_options_that_change_the_path(tmp_path: Path) -> None:
    """A timeline, collected messages, --at: the table and the loop change, the result does not."""
    data = _generated("small", False, tmp_path)
    for options in (
        ScanOptions(collect_timeline=True),
        ScanOptions(collect_messages=True),
        ScanOptions(at_seq=500),
        ScanOptions(fixture=True),
    ):
        assert_same(data, False, 3, options)


# -- mutations ---------------------------------------------------------------------------------

BASE_LINES: list[bytes] = []


def _base_lines() -> list[bytes]:
    """A small v0 log of the small-event workload: every fast handler's type, hooks, approvals,
    chunks, a compaction."""
    if not BASE_LINES:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "base.jsonl"
            genlog.generate(str(path), 24 * 1024, seed=11, workload="small")
            BASE_LINES.extend(path.read_bytes().splitlines())
    return BASE_LINES


JSON_VALUES = st.one_of(
    st.sampled_from(
        [None, True, False, 0, 1, -1, 2, 1.5, "", "x", "append", "user", [], {}, [1], {"kind": "tool"}]
    ),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.text(max_size=4),
)
RAW_VALUES = st.sampled_from([b"1e400", b"NaN", b"123456789012345678901234567890", b'"\\ud800"', b'"\xff"'])


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into a decoded record (objects and arrays, three levels deep)."""
    found = [prefix] if prefix else []
    if len(prefix) < 4:
        if isinstance(obj, dict):
            for k, v in obj.items():
                found += _paths(v, (*prefix, k))
        elif isinstance(obj, list):
            for i, v in enumerate(obj[:3]):
                found += _paths(v, (*prefix, i))
    return found


def _set(obj: Any, path: tuple[Any, ...], value: Any, delete: bool) -> None:
    for key in path[:-1]:
        obj = obj[key]
    if delete:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value


class Mutated:
    """A mutated log whose repr is the list of mutations (the log itself is ~24 KB)."""

    def __init__(self, data: bytes, done: list[str]) -> None:
        self.data, self.done = data, done

    def __repr__(self) -> str:
        return f"Mutated({self.done!r})"


@st.composite
def mutated_logs(draw: st.DrawFn) -> Mutated:
    lines = list(_base_lines())
    done: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        # mostly a line of a type with a fast handler (the records the fast path decides on)
        n = draw(st.one_of(st.sampled_from(_handled(lines)), st.integers(1, len(lines) - 1)))
        try:
            obj = orjson.loads(lines[n])
        except orjson.JSONDecodeError:
            obj = None  # an earlier mutation broke it
        moves = ["drop", "copy", "cut"]
        edits = ["value", "delete", "add", "raw"] if type(obj) is dict else []
        how = draw(st.sampled_from([*edits, *moves]))
        done.append(f"{how} line {n}")
        if how in ("value", "delete", "raw"):
            path = draw(st.sampled_from(_paths(obj)))
            if how == "raw":
                _set(obj, path, "@RAW@", False)
                lines[n] = orjson.dumps(obj).replace(b'"@RAW@"', draw(RAW_VALUES))
                done.append(repr(lines[n][:300]))
                continue
            if how == "delete" and not isinstance(path[-1], str):
                how = "value"
            _set(obj, path, draw(JSON_VALUES), how == "delete")
            lines[n] = orjson.dumps(obj)
            done.append(repr(lines[n][:300]))
        elif how == "add":
            key = draw(st.sampled_from(["surfaceOp", "sourceEventSeqs", "ignorable", "extra"]))
            obj[key] = draw(st.one_of(JSON_VALUES, st.just([0]), st.just("append")))
            lines[n] = orjson.dumps(obj)
        elif how == "drop":
            del lines[n]
        elif how == "copy":  # nearby, mostly inside the same step
            lines.insert(min(n + draw(st.integers(0, 3)), len(lines)), lines[n])
        else:
            lines[n] = lines[n][: draw(st.integers(0, len(lines[n])))]
    if draw(st.booleans()) or any(d.startswith(("drop", "copy")) for d in done):
        lines = _renumbered(lines)  # relational rules, not a seq gap, meet a dropped or copied line
        done.append("renumbered")
    return Mutated(b"\n".join(lines) + b"\n", done)


def _handled(lines: list[bytes]) -> list[int]:
    types = set(FAST)
    return [n for n, line in enumerate(lines) if n and any(f'"type":"{t}"'.encode() in line for t in types)]


def _renumbered(lines: list[bytes]) -> list[bytes]:
    """Seqs made contiguous again over every record that decodes to an object with a seq."""
    out, seq = [], 0
    for line in lines:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        if type(obj) is dict and "seq" in obj:
            obj["seq"] = seq
            seq += 1
            line = orjson.dumps(obj)
        out.append(line)
    return out


@settings(max_examples=examples(200))
@given(log=mutated_logs(), size=st.sampled_from(BATCH_SIZES))
def test_mutated_lines(log: Mutated, size: int) -> None:
    assert_same(log.data, False, size)
