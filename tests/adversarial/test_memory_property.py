"""Issue 11: the memory-amplification property. For generated hostile lines — overlapping or
wide seq ranges, packed rows of many members, floods of blank and NUL lines, long strings —
the peak memory of every command is at most k × the longest line + a constant (the interpreter
and its imports, measured on a tiny log). Peak RSS comes from the kernel for each child
(``os.wait4``) running under an address-space limit."""

from __future__ import annotations

import functools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.adversarial.hostile_logs import (
    EVERY_COMMAND,
    V4_HEADER,
    output_args,
    packed_row_bomb,
    run_measured,
    seq_range_bomb,
    v4_user,
)
from tests.conftest import FIXTURES

MiB = 1 << 20
K = 32  # Python objects of a decoded JSON line: ~18 bytes per byte for one-letter strings
SLACK = 24 * MiB  # allocator and buffer noise on top of the tiny log's peak
LIMIT = 1 << 30
COMMANDS: list[list[str]] = [*map(list, EVERY_COMMAND), ["fork", "--created-at", "0"]]
TINY = (FIXTURES / "dsh" / "v0-tiny" / "session.jsonl").read_bytes()


@functools.cache
def baseline(command: tuple[str, ...], tmp: str) -> int:
    """The command's peak on a tiny valid log: the constant of the bound."""
    directory = Path(tmp) / ("base-" + "-".join(command).replace("/", "_"))
    directory.mkdir(exist_ok=True)
    log = directory / "session.jsonl"
    log.write_bytes(TINY)
    return max(
        run_measured(
            [*command, *output_args(command, directory), str(log)], address_space=LIMIT, cwd=directory
        ).peak_rss
        for _ in range(2)
    )


def _flood(lines: int, nul: bool) -> bytes:
    base = TINY.split(b"\n")
    filler = (b"\x00" * 3 + b"\n") if nul else b"\n"
    return b"\n".join(base[:6]) + b"\n" + filler * lines + b"\n".join(base[6:])


def _long_text(size: int) -> bytes:
    return V4_HEADER + v4_user(0, "x" * size) + v4_user(1, "y")


def _wide_valid_ranges(events: int) -> bytes:
    body = b"".join(v4_user(s) for s in range(events))
    cite = [[s, s] if s % 3 else s for s in range(0, events, 2)]
    return V4_HEADER + body + v4_user(events, sourceEventSeqs=cite)


# (kind, size, variant): the hostile bytes are built inside the test, so that a failing example
# is reported by its parameters rather than by megabytes of repr
HOSTILE = st.one_of(
    st.tuples(st.just("seq-ranges"), st.integers(1_000, 30_000), st.integers(50, 400)),
    st.tuples(st.just("packed-row"), st.integers(10_000, 150_000), st.just(0)),
    st.tuples(st.just("filler"), st.integers(1 << 20, 6 << 20), st.integers(0, 1)),
    st.tuples(st.just("long-text"), st.integers(1 << 20, 6 << 20), st.just(0)),
    st.tuples(st.just("wide-ranges"), st.integers(100, 3_000), st.just(0)),
)


def build(kind: str, size: int, variant: int) -> bytes:
    if kind == "seq-ranges":
        return seq_range_bomb(variant, size)
    if kind == "packed-row":
        return packed_row_bomb(size)
    if kind == "filler":
        return _flood(size, bool(variant))
    if kind == "long-text":
        return _long_text(size)
    return _wide_valid_ranges(size)


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(HOSTILE)
def test_peak_memory_is_bounded_by_the_longest_line(tmp_path: Path, case: tuple[str, int, int]) -> None:
    kind, size, variant = case
    data = build(kind, size, variant)
    longest = max(map(len, data.split(b"\n")))
    directory = tmp_path / f"case-{kind}-{len(data)}"
    directory.mkdir(exist_ok=True)
    log = directory / "session.jsonl"
    log.write_bytes(data)
    for command in COMMANDS:
        args = [*command, *output_args(command, directory), str(log)]
        m = run_measured(args, address_space=LIMIT, cwd=directory)
        assert "Traceback" not in m.stderr and "MemoryError" not in m.stderr, (kind, command, m.stderr)
        bound = K * longest + baseline(tuple(command), str(tmp_path)) + SLACK
        assert m.peak_rss <= bound, (kind, command, m.peak_rss >> 20, "MiB >", bound >> 20, "MiB")
