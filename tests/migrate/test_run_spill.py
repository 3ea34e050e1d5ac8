"""The upgrade chain with its run's spill (issue 11 item 1; ``store.run_spill.RunSpill``, given to
each step by the engine): byte for byte what the chain gives in memory, the same refusals, with
every threshold lowered so that the spill is used from the first item — v1 → v2's held events
(``core.upgrade.slot_queue``: at 0 and 2 slots, read back 1 and 256 rows a page), ``SeqRemap``'s
change points and dropped runs (``core.upgrade.remap``), the ``HeldMap``s of v0 → v1 and
v2 → v3 —, on every dsh fixture log of v0 to v3 (raw and zstd) and every migrate fixture (raw,
and zstd made here) through ``engine.records.upgraded_lines`` (fused and step by step), on every
migrate fixture through the core, on generated v1 logs of interleaved, claimed, unclaimed and
superseded attempts (Hypothesis), and ``SeqRemap`` spilled against in memory on generated keep
and drop sequences (Hypothesis)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core import held_map
from sesstool.core.options import ScanOptions
from sesstool.core.upgrade import NumberedRows, SortedWords, Step, remap, slot_queue
from sesstool.core.upgrade.chain import chain
from sesstool.core.upgrade.fused import fused_chain
from sesstool.core.upgrade.remap import SeqRemap
from sesstool.engine import records
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import scan_source
from sesstool.store import run_spill
from sesstool.store.run_spill import RunSpill
from sesstool.store.source import ReadLimits
from tests.conftest import FIXTURES

MIGRATE_INPUTS = sorted((FIXTURES / "migrate").rglob("in.jsonl"))
DSH_LOGS = sorted((FIXTURES / "dsh").glob("*/session*.jsonl*"))
USED: Counter[str] = Counter()  # what the spills of this module were asked for


class CountingSpill(RunSpill):
    """A ``RunSpill`` that counts what it is asked for (so a test cannot pass vacuously)."""

    def rows(self, purpose: str) -> NumberedRows:
        made = super().rows(purpose)
        put, after = made.put, made.after

        def counted_put(n: int, value: Any) -> None:
            USED["placeholder" if value is None else "event"] += 1
            put(n, value)

        def counted_after(n: int) -> list[tuple[int, Any]]:
            USED["read back"] += 1
            return after(n)

        made.put = counted_put  # type: ignore[method-assign]
        made.after = counted_after  # type: ignore[method-assign]
        return made

    def sorted_words(self, purpose: str, items: Any) -> SortedWords:
        USED["remap"] += 1
        return super().sorted_words(purpose, items)

    def strings(self, purpose: str) -> held_map.StringTable:
        USED["strings"] += 1
        return super().strings(purpose)


@pytest.fixture(params=[(0, 1), (2, 256)], ids=["held-0-page-1", "held-2-page-256"])
def lowered(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    held, page = request.param
    monkeypatch.setattr(slot_queue, "HELD_SLOTS", held)
    monkeypatch.setattr(slot_queue, "HELD_BYTES", held * 100)
    monkeypatch.setattr(run_spill, "PAGE_ROWS", page)
    monkeypatch.setattr(remap, "HELD_AT", held)
    monkeypatch.setattr(held_map, "HELD_AT", held)
    monkeypatch.setattr(records, "RunSpill", CountingSpill)


Outcome = tuple[Any, ...]


def _outcome(head_lines: Any) -> Outcome:
    try:
        head, lines = head_lines()
        return ("upgraded", head, b"".join(lines))
    except Exception as err:  # a refusal must agree too
        return ("raised", type(err).__name__, str(err))


def _migratable(path: Path) -> bool:
    scan = scan_source(path, ScanOptions()).scan
    return scan.version is not None and scan.version < 4 and scan.verdict not in ("corrupt", "unsupported")


def _zstd_copies(tmp: Path) -> list[Path]:
    made = []
    for i, path in enumerate(MIGRATE_INPUTS):
        if _migratable(path):
            target = tmp / f"{i}" / "session.jsonl.zstd"
            target.parent.mkdir()
            target.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
            made.append(target)
    return made


@pytest.fixture(scope="module")
def engine_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every dsh fixture log of v0 to v3 (raw and zstd), every migrate fixture raw and zstd."""
    tmp = tmp_path_factory.mktemp("run-spill")
    raw = [p for p in [*DSH_LOGS, *MIGRATE_INPUTS] if _migratable(p)]
    copied = []
    for i, path in enumerate(raw):  # a fixture's own directory is never written to
        target = tmp / f"raw{i}" / path.name
        target.parent.mkdir()
        shutil.copyfile(path, target)
        copied.append(target)
    return [*copied, *_zstd_copies(tmp)]


def _engine_outcomes(path: Path, spill: bool) -> list[Outcome]:
    report = scan_source(path, ScanOptions())
    scan = report.scan
    assert scan.version is not None and scan.header is not None
    closers_sets: list[tuple[dict[str, Any], ...]] = [()]
    if scan.open.turn is not None:
        closers_sets.append(tuple(report.dialect.closers(scan)))
    seen = []
    for closers in closers_sets:
        for target in range(scan.version + 1, 5):
            for fused in (True, False):
                args: dict[str, Any] = {
                    "path": path, "encoding": report.source.encoding, "header": dict(scan.header.raw),
                    "dialect": report.dialect, "body_offset": scan.body_offset or 0,
                    "committed": scan.tail.committed_bytes, "steps": chain(scan.version, target),
                    "target": target, "limits": ReadLimits(), "closers": closers,
                    "fused": fused, "spill": spill,
                }  # fmt: skip
                seen.append(_outcome(lambda: upgraded_lines(**args)))  # noqa: B023 - called at once
    return seen


def test_every_fixture_through_the_engine(lowered: None, engine_logs: list[Path]) -> None:
    """Spilled from the first item == in memory, byte for byte, raw and zstd, fused or not."""
    assert any(p.name.endswith(".zstd") for p in engine_logs) and len(engine_logs) > 100
    before = USED.copy()
    for path in engine_logs:
        assert _engine_outcomes(path, True) == _engine_outcomes(path, False), path
    used = USED - before
    assert {"placeholder", "event", "read back", "remap", "strings"} <= used.keys(), used


def _core(header: dict[str, Any], body: list[bytes], target: int, spill: bool) -> Outcome:
    steps: list[Step] = chain(header["version"], target)
    if spill:
        steps = [step.with_spill(CountingSpill()) for step in steps]
    return _outcome(lambda: fused_chain(steps, dict(header), iter(body), (), target))


def _split(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    lines = data.splitlines()
    return json.loads(lines[0]), lines[1:]


@pytest.mark.parametrize(
    "path", MIGRATE_INPUTS, ids=[str(p.parent.relative_to(FIXTURES)) for p in MIGRATE_INPUTS]
)
def test_every_migrate_fixture_in_the_core(lowered: None, path: Path) -> None:
    """The fixtures the scan refuses too (a step's refusal must be the same spilled)."""
    header, body = _split(path.read_bytes())
    for target in range(max(header["version"] + 1, 2), 5):
        assert _core(header, body, target, True) == _core(header, body, target, False)


# -- generated v1 logs: attempts interleaved, claimed, left unclaimed, superseded ---------------

_OPS = st.lists(
    st.tuples(st.integers(0, 9), st.integers(1, 3), st.integers(0, 1_000)), min_size=1, max_size=40
)


def _v1_log(ops: list[tuple[int, int, int]]) -> list[bytes]:
    """One turn of steps 1–3 (all open): chunks of each step's attempt, claims of an attempt's
    chunks (some wrong: a refusal), user messages, step ends, retries and references to earlier
    events (a consumed chunk: a refusal)."""
    events: list[dict[str, Any]] = [{"type": "turn/start", "data": {"turn": 1}}]
    events += [{"type": "step/start", "data": {"turn": 1, "step": s}} for s in (1, 2, 3)]
    chunks: dict[int, list[int]] = {1: [], 2: [], 3: []}
    for op, step, pick in ops:
        seq = len(events)
        at = {"turn": 1, "step": step}
        if op <= 3:
            kind = "finish" if op == 3 else "text-delta"
            chunk = {"type": kind, "index": 0, "text": f"t{pick}"} if kind == "text-delta" else {"type": kind}
            events.append({"type": "assistant/chunk", "data": {**at, "chunk": chunk}})
            chunks[step].append(seq)
        elif op == 4:
            message = {"id": f"a{seq}", "role": "assistant", "content": [], "source": {"kind": "model"}}
            cited = chunks[step] if pick % 4 else chunks[step][:-1]
            events.append(
                {"type": "assistant/message", "data": {**at, "message": message}, "sourceEventSeqs": cited}
            )
            chunks[step] = []
        elif op == 5:
            events.append({"type": "step/end", "data": at})
        elif op == 6:
            events.append({"type": "llm/retry", "data": {**at, "attempt": 1}})
        elif op == 7:
            events.append({"type": "command/done", "data": {"sourceEventSeq": pick % seq}})
        else:
            content = [{"type": "text", "text": "x" * (pick % 300)}]
            data = {"id": f"u{seq}", "role": "user", "source": {"kind": "user"}, "content": content}
            events.append({"type": "user/message", "data": data, "surfaceOp": "append"})
    events.append({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}})
    return [
        orjson.dumps({"type": e.pop("type"), "seq": i, "time": 1000 + i, **e}) for i, e in enumerate(events)
    ]


_V1_HEADER = {"type": "session", "version": 1, "id": "s1", "createdAt": 1000, "delegationDepth": 0}


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=_OPS)
def test_generated_v1_logs(lowered: None, ops: list[tuple[int, int, int]]) -> None:
    body = _v1_log(ops)
    for target in (2, 4):
        assert _core(_V1_HEADER, body, target, True) == _core(_V1_HEADER, body, target, False)


def test_generated_logs_hold_and_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator reaches what the property is for: events held behind an undecided attempt
    and spilled, attempts superseded and settled while spilled, and it upgrades."""
    monkeypatch.setattr(slot_queue, "HELD_SLOTS", 0)
    before = USED.copy()
    # step 1's attempt undecided; step 2's chunks twice around a message (superseded), settled
    ops = [(0, 1, 0), (8, 1, 5), (0, 2, 0), (8, 1, 6), (0, 2, 1), (5, 2, 0), (8, 1, 7), (4, 1, 1), (5, 1, 0)]
    body = _v1_log(ops)
    assert _core(_V1_HEADER, body, 4, True) == _core(_V1_HEADER, body, 4, False)
    assert _core(_V1_HEADER, body, 2, False)[0] == "upgraded"
    used = USED - before
    assert used["placeholder"] and used["event"] and used["read back"], used


# -- SeqRemap -----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["keep", "drop", "insert", "skip"]), st.integers(1, 3)), max_size=80
    ),
    held=st.integers(0, 4),
)
def test_seq_remap_spilled_answers_as_in_memory(
    monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, int]], held: int
) -> None:
    """Generated keep/drop sequences (an insert shifts later seqs, a skip leaves seqs unseen):
    every seq's ``new`` and ``dropped`` the same spilled past ``held`` numbers as in memory."""
    monkeypatch.setattr(remap, "HELD_AT", held)
    spill = RunSpill()
    spilled, plain = SeqRemap(spill), SeqRemap()
    old = new = 0
    for op, count in steps:
        for _ in range(count):
            if op == "keep":
                for m in (spilled, plain):
                    m.keep(old, new)
                new += 1
            elif op == "drop":
                for m in (spilled, plain):
                    m.drop(old)
            elif op == "insert":
                new += 1
                continue
            old += 1
    for seq in range(-1, old + 2):
        assert (spilled.new(seq), spilled.dropped(seq)) == (plain.new(seq), plain.dropped(seq))
    spill.close()


def test_seq_remap_moves_to_the_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``HELD_AT`` both pairs of arrays are the spill's (not arrays in memory)."""
    monkeypatch.setattr(remap, "HELD_AT", 2)
    m = SeqRemap(RunSpill())
    for old in range(0, 40, 2):
        m.keep(old, old // 2)  # every other seq dropped: a change point and a dropped run each
        m.drop(old + 1)
    assert type(m._points).__name__ == type(m._dropped_start).__name__ == "SpilledArray"
    assert [m.new(s) for s in range(6)] == [0, None, 1, None, 2, None]
