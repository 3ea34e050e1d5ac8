"""Line-level mutations of valid logs (issue 6 item 2): lines swapped, duplicated, merged,
NUL-filled, dropped, and the whole log re-encoded raw ↔ zstd.

Every single mutation of every fixture has one precise expected outcome, checked exhaustively:

* a reordering (swap, duplicate) at line L is a ``seq-gap`` error at L when a ``turn/end``
  commits at or after L, and the uncommitted tail from L otherwise (docs/format.md, "tail
  versus corruption");
* damage (merge, NUL-fill) at line L is ``invalid-json``/``nul-bytes`` at L when a ``turn/end``
  after L commits it, and the uncommitted tail from L otherwise;
* in zstd every such line lies in a complete, checksummed frame, so it is always the error at L
  (the packages' rule, docs/format.md "Interop decisions" 1).

Stacked random mutations (Hypothesis) must only ever produce a verdict, never an exception, and
re-encoding the same plaintext as zstd must not change a single finding. Through the CLI,
``repair --salvage`` of any mutated log either refuses cleanly or publishes a log that validates
without an error, and never touches the source.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.dialects.registry import open_scanner
from sesstool.store.framing import compress_frame
from sesstool.store.raw_reader import RawReader
from sesstool.store.zstd_reader import ZstdReader
from tests.conftest import FIXTURES, Sesstool, examples


def _scan(data: bytes, zstd: bool = False) -> ScanResult:
    reader = ZstdReader(io.BytesIO(data), max_decompressed=1 << 24) if zstd else RawReader(io.BytesIO(data))
    scanner = open_scanner("mutated", ScanOptions())
    for item in reader.batches():
        scanner.feed(item)
    return scanner.finish(reader.summary)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def _join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


# the fixtures that scan clean or interrupted (the valid logs every mutation starts from)
VALID = sorted(
    p
    for p in (FIXTURES / "dsh").glob("*/session*.jsonl")
    if p.read_bytes().endswith(b"\n") and _scan(p.read_bytes()).verdict in ("clean", "interrupted")
)
assert len(VALID) >= 15, VALID  # the corpus, not an empty parametrization


def _is_turn_end(line: bytes) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") == "turn/end"


def _errors(result: ScanResult) -> list[tuple[str, int | None]]:
    return [
        (f.rule, f.address.line if f.address else None)
        for f in result.findings
        if f.severity is Severity.ERROR
    ]


def _expect(result: ScanResult, line_no: int, committed: bool, rules: tuple[str, ...]) -> None:
    """The precise outcome of one mutation at 1-based ``line_no``."""
    if committed:
        assert result.verdict == "corrupt", result.findings
        first = _errors(result)[0]
        assert first[1] == line_no and first[0] in rules, first
    else:
        assert result.verdict == "torn", result.findings
        assert result.tail.kind == "uncommitted"
        tails = [f for f in result.findings if f.rule == "uncommitted-tail"]
        assert tails and tails[0].address is not None and tails[0].address.line == line_no
        assert not _errors(result)


Mutation = Callable[[list[bytes], int], list[bytes] | None]


def swap(lines: list[bytes], i: int) -> list[bytes] | None:
    if i + 1 >= len(lines) or lines[i] == lines[i + 1]:
        return None
    out = list(lines)
    out[i], out[i + 1] = out[i + 1], out[i]
    return out


def duplicate(lines: list[bytes], i: int) -> list[bytes] | None:
    return [*lines[: i + 1], lines[i], *lines[i + 1 :]]


def merge(lines: list[bytes], i: int) -> list[bytes] | None:
    if i + 1 >= len(lines):
        return None
    return [*lines[:i], lines[i] + lines[i + 1], *lines[i + 2 :]]


def nul_fill(lines: list[bytes], i: int) -> list[bytes] | None:
    return [*lines[:i], b"\0" * len(lines[i]), *lines[i + 1 :]]


def _encode(lines: list[bytes], zstd: bool) -> bytes:
    return _frames(lines, list(range(0, len(lines), 4))) if zstd else _join(lines)


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("log", VALID, ids=lambda p: p.parent.name)
def test_every_single_line_mutation_has_its_precise_outcome(log: Path, zstd: bool) -> None:
    lines = _lines(log)
    checked = 0
    for i in range(1, len(lines)):  # the header's own damage is covered by the header rules
        # reorderings: the first out-of-order record is at line i+1 (swap) or i+2 (duplicate)
        for mutate, at in ((swap, i), (duplicate, i + 1)):
            mutated = mutate(lines, i)
            if mutated is None:
                continue
            committed = any(_is_turn_end(x) for x in mutated[at:])
            _expect(_scan(_encode(mutated, zstd), zstd), at + 1, committed or zstd, ("seq-gap",))
            checked += 1
        # damage: the undecodable line is i+1; a turn/end after it commits it
        for mutate, rules in ((merge, ("invalid-json",)), (nul_fill, ("nul-bytes",))):
            mutated = mutate(lines, i)
            if mutated is None:
                continue
            committed = any(_is_turn_end(x) for x in mutated[i + 1 :])
            _expect(_scan(_encode(mutated, zstd), zstd), i + 1, committed or zstd, rules)
            checked += 1
    assert checked >= 3 * (len(lines) - 2)


def _frames(lines: list[bytes], cuts: list[int]) -> bytes:
    """The writer's framing (§9.2): the header alone, then records grouped at ``cuts``."""
    if not lines:
        return b""
    out = [compress_frame(lines[0] + b"\n")]
    bounds = sorted({c for c in cuts if 1 < c < len(lines)})
    start = 1
    for end in [*bounds, len(lines)]:
        if end > start:
            out.append(compress_frame(_join(lines[start:end])))
            start = end
    return b"".join(out)


def _view(result: ScanResult) -> tuple[object, ...]:
    findings = [
        (f.rule, f.severity, f.address.line if f.address else None, f.address.seq if f.address else None)
        for f in result.findings
    ]
    return result.verdict, result.tail.kind, result.version, findings


OPS: list[Mutation] = [swap, duplicate, merge, nul_fill, lambda ls, i: [*ls[:i], *ls[i + 1 :]]]


@st.composite
def mutated_logs(draw: st.DrawFn) -> list[bytes]:
    """A valid fixture, then one to four line mutations stacked (any line but the header)."""
    lines = _lines(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        if len(lines) < 3:
            break
        op = draw(st.sampled_from(OPS))
        lines = op(lines, draw(st.integers(1, len(lines) - 1))) or lines
    return lines


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=mutated_logs(), cuts=st.lists(st.integers(0, 200), max_size=6))
def test_stacked_mutations_are_classified_alike_raw_and_zstd(lines: list[bytes], cuts: list[int]) -> None:
    raw = _scan(_join(lines))  # any exception, the project's own included, fails the test
    packed = _scan(_frames(lines, cuts), zstd=True)
    # the verdict follows from the findings: an error exactly when corrupt or unsupported
    assert bool(_errors(raw)) == (raw.verdict in ("corrupt", "unsupported")), raw.findings
    assert (raw.tail.kind == "uncommitted") == (raw.verdict == "torn"), raw.findings
    if raw.tail.kind == "uncommitted":
        # the one difference: in a complete zstd frame the uncommitted record was committed
        tail = next(f for f in raw.findings if f.rule == "uncommitted-tail")
        assert packed.verdict == "corrupt" and tail.address is not None
        assert _errors(packed)[0][1] == tail.address.line
    else:
        assert _view(packed) == _view(raw)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=st.sampled_from(VALID), cuts=st.lists(st.integers(0, 200), max_size=6))
def test_reencoding_a_valid_log_changes_nothing(log: Path, cuts: list[int]) -> None:
    lines = _lines(log)
    assert _view(_scan(_frames(lines, cuts), zstd=True)) == _view(_scan(log.read_bytes()))


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(lines=mutated_logs(), zstd=st.booleans())
def test_salvage_of_any_mutated_log_publishes_only_valid_logs(
    sesstool: Sesstool, tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], zstd: bool
) -> None:
    directory = tmp_path_factory.mktemp("mutated")
    version = json.loads(lines[0])["version"]  # the header is never mutated: its canonical name
    stem = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    source = directory / (stem + ".zstd" if zstd else stem)
    source.write_bytes(_frames(lines, [5, 11]) if zstd else _join(lines))
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    out = directory / ("out.jsonl.zstd" if zstd else "out.jsonl")
    verdict = _scan(source.read_bytes(), zstd).verdict
    result = sesstool("repair", "--salvage", "--json", "-o", str(out), str(source))
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    assert "Traceback" not in result.stderr
    if result.exit_code != 0:
        # refused, nothing written: unsupported (4); corrupt beyond salvage (3: the defect is in
        # the header or the prefix before it is not valid either); or closers that would end a
        # v0 seed without its marker (6, docs/format.md "Repair")
        expected = {"unsupported": (4,), "corrupt": (3, 6)}.get(verdict, (6,))
        assert result.exit_code in expected, (verdict, result.stderr)
        if result.exit_code == 6:
            assert "[seed-length-marker]" in result.stderr
        assert sorted(p.name for p in directory.iterdir()) == [source.name, "session.lock"]
        return
    report = json.loads(result.stdout)
    assert report["status"] == ("balanced" if verdict == "clean" else "repaired"), (verdict, report)
    assert (report.get("salvage") is not None) == (verdict == "corrupt")
    if report["status"] == "balanced":
        assert not out.exists()
        return
    checked = json.loads(sesstool("validate", "--format", "json", str(out)).stdout)["files"][0]
    assert checked["verdict"]["verdict"] == "clean", checked
    assert not [f for f in checked["findings"] if f["severity"] == "error"], checked
