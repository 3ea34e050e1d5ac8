"""How many times fork reads, and that reading less weakens nothing (issue 14).

* The open state at the boundary comes from the first scan when the boundary is its last
  committed event: compared with the second scan it replaces (``at_seq``) on every fixture log
  of every dialect, raw and zstd — the same plan, the same seed end, or the same refusal.
* A boundary before the last event still costs one scan that stops there; at the last event,
  the source is scanned once. Either way the child is the same bytes as before.
* Verification hashes the plaintext the rescan reads: a child whose bytes differ from what was
  written (a sink or a compressor that alters a byte, keeping the log valid and its size) is
  refused by that digest alone, raw and zstd.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import SesstoolError
from sesstool.core.options import ScanOptions
from sesstool.engine import fork as fork_engine
from sesstool.store.framing import FrameWriter
from sesstool.store.publish import Sink
from tests.conftest import FIXTURES, Sesstool, plaintext_of

CLEAN = FIXTURES / "dsh" / "clean-multiturn"
CLEAN_LAST_SEQ = 61  # the last event of clean-multiturn: the end of its third turn
CLEAN_EARLIER_TURN_END = 48


def _fixture_logs() -> list[Path]:
    skip = {"expected", "not-a-log", "fuzz"}
    found = [
        p
        for p in sorted(FIXTURES.rglob("*"))
        if p.is_file()
        and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.zstd"))
        and not skip.intersection(p.relative_to(FIXTURES).parts)
    ]
    assert len(found) > 100
    return found


def _outcome(request: fork_engine.ForkRequest, full: Any, scan_arg: Any, identity: Any) -> tuple[Any, ...]:
    boundary = full[1].last_seq
    try:
        plan, end = fork_engine._plan(request, full, scan_arg, identity, boundary)
    except SesstoolError as err:
        return ("refused", type(err).__name__, str(err))
    fields = replace(plan, rewrite=None)
    line = b'{"sessionId":"parent","type":"user"}'
    rewritten = plan.rewrite(line) if plan.rewrite is not None else None
    return ("plan", fields, rewritten, end)


def test_the_first_scan_stands_for_the_second_at_the_last_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture log a fork gets past the gate with: planning at its last committed event
    from the first scan gives exactly what the scan folded up to that seq gave."""
    compared: dict[str, int] = {}
    for path in _fixture_logs():
        request = fork_engine.ForkRequest(str(path), created_at=1760000100000)
        _source, identity, scan_arg = fork_engine._resolve(request)
        try:
            full = fork_engine._scan(scan_arg, ScanOptions(), request.limits)
        except SesstoolError:
            continue
        scan = full[0].scan
        if scan.verdict in ("corrupt", "unsupported") or scan.body_offset is None or full[1].last_seq is None:
            continue
        request = replace(request, child_id=full[0].dialect.new_child_id(0))
        reused = _outcome(request, full, scan_arg, identity)
        with monkeypatch.context() as m:
            m.setattr(
                fork_engine,
                "_at_boundary",
                lambda _full, arg, limits, at: fork_engine._scan(arg, ScanOptions(at_seq=at), limits),
            )
            rescanned = _outcome(request, full, scan_arg, identity)
        assert reused == rescanned, path
        compared[full[0].dialect.name] = compared.get(full[0].dialect.name, 0) + 1
    assert set(compared) == {"dsh", "codex", "claude", "mini"}, compared
    assert sum(compared.values()) > 60, compared


def _copy_clean(tmp: Path, zstd: bool) -> Path:
    name = "session.jsonl.zstd" if zstd else "session.jsonl"
    shutil.copy(CLEAN / name, tmp / name)
    return tmp / name


def _counting_scans(monkeypatch: pytest.MonkeyPatch) -> list[ScanOptions]:
    seen: list[ScanOptions] = []
    real = fork_engine._scan

    def counted(arg: Any, options: ScanOptions, *args: Any, **kwargs: Any) -> Any:
        seen.append(options)
        return real(arg, options, *args, **kwargs)

    monkeypatch.setattr(fork_engine, "_scan", counted)
    return seen


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_fork_at_the_last_event_scans_the_source_once(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zstd: bool
) -> None:
    source = _copy_clean(tmp_path, zstd)
    default, at_last = tmp_path / "default", tmp_path / "at-last"
    seen = _counting_scans(monkeypatch)
    args = ("--id", "session-fork", "--created-at", "1760000100000")
    result = sesstool("fork", str(source), *args, "-o", str(default))
    assert result.exit_code == 0, result.stderr
    assert [o.at_seq for o in seen] == [None]  # the default boundary is the last event: one scan
    seen.clear()
    result = sesstool("fork", str(source), "--at", str(CLEAN_LAST_SEQ), *args, "-o", str(at_last))
    assert result.exit_code == 0, result.stderr
    assert [o.at_seq for o in seen] == [None]
    assert default.read_bytes() == at_last.read_bytes()
    # the committed golden child of the default fork (tests/cli/test_fork.py), byte for byte
    golden = CLEAN / "expected" / "fork" / f"{source.name}.fork.jsonl{'.zstd' if zstd else ''}"
    assert default.read_bytes() == golden.read_bytes()


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_fork_before_the_last_event_scans_up_to_the_boundary(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zstd: bool
) -> None:
    source = _copy_clean(tmp_path, zstd)
    child = tmp_path / "child"
    seen = _counting_scans(monkeypatch)
    at = str(CLEAN_EARLIER_TURN_END)
    result = sesstool("fork", str(source), "--at", at, "--id", "c", "--created-at", "1", "-o", str(child))
    assert result.exit_code == 0, result.stderr
    assert [o.at_seq for o in seen] == [None, CLEAN_EARLIER_TURN_END]
    records = plaintext_of(child).splitlines(keepends=True)
    assert (
        records[1 : CLEAN_EARLIER_TURN_END + 2]
        == plaintext_of(source).splitlines(keepends=True)[1 : CLEAN_EARLIER_TURN_END + 2]
    )
    assert len(records) == CLEAN_EARLIER_TURN_END + 3  # header, the seed, the end-seed marker


# -- verification still catches a child that is not what was written ------------------------------

ORIGINAL, ALTERED = b"pytest fails", b"pytest failz"  # same size, still a valid log


class _AlteringSink:
    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    def write(self, data: bytes) -> None:
        self._sink.write(data.replace(ORIGINAL, ALTERED))


class _AlteringFrames(FrameWriter):
    """A compressor that does not give back what it was handed."""

    def write(self, data: bytes) -> None:
        super().write(data.replace(ORIGINAL, ALTERED))


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_child_altered_after_hashing_is_refused_by_the_plaintext_digest(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zstd: bool
) -> None:
    source = _copy_clean(tmp_path, zstd)
    assert ORIGINAL in plaintext_of(source)
    if zstd:
        monkeypatch.setattr(fork_engine, "FrameWriter", _AlteringFrames)
    else:
        real = fork_engine._ChildWriter.produce

        def produce(self: fork_engine._ChildWriter, sink: Sink) -> None:
            real(self, _AlteringSink(sink))

        monkeypatch.setattr(fork_engine._ChildWriter, "produce", produce)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = sesstool("fork", str(source), "--id", "x", "-o", str(tmp_path / "child"))
    assert result.exit_code == 6, result.stderr
    # only the digest can tell: the altered child is clean and of the planned size
    assert "the new file's plaintext differs from what was written" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_plaintext_digest_refuses_a_gap_between_batches() -> None:
    """A byte the reader did not deliver as a line leaves no digest at all."""
    dialect: Any = None
    whole = fork_engine._PlaintextDigest()
    whole.tap(([b"a", b"bc"], 0, 1, None), dialect)
    whole.tap(([b"d"], 5, 3, None), dialect)
    size, digest = whole.close()
    assert size == 7 and digest is not None
    gap = fork_engine._PlaintextDigest()
    gap.tap(([b"a", b"bc"], 0, 1, None), dialect)
    gap.tap(([b"d"], 6, 4, None), dialect)  # one byte (an issue's) between the two batches
    assert gap.close()[1] is None
