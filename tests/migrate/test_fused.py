"""The fused upgrade pass (``core.upgrade.fused``, issue 14) against the step-by-step chain
(``run_chain`` then ``encode_records``): the same header, the same body bytes, or the same
refusal, on every migrate fixture at every target it can reach, on every dsh fixture log (raw
and zstd, with and without ``--repair`` closers) through ``engine.records.upgraded_lines``, on
generated logs of both bench workloads (plain, packed and torn), and on Hypothesis-mutated
logs the scan never vetted (the two paths must not diverge even where the steps refuse)."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import genlog
from sesstool.core.errors import UnsupportedError
from sesstool.core.options import ScanOptions
from sesstool.core.upgrade import Step
from sesstool.core.upgrade.chain import chain, run_chain
from sesstool.core.upgrade.fused import fusable, fused_chain
from sesstool.core.upgrade.records import decode_records, encode_records
from sesstool.core.upgrade.v4 import ChildFact, V3ToV4
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import scan_source
from sesstool.store.source import ReadLimits
from tests.conftest import FIXTURES

MIGRATE_INPUTS = sorted((FIXTURES / "migrate").rglob("in.jsonl"))


def _migratable(path: Path) -> bool:
    scan = scan_source(path, ScanOptions()).scan
    return scan.version is not None and scan.version < 4 and scan.verdict not in ("corrupt", "unsupported")


DSH_LOGS = sorted(p for p in (FIXTURES / "dsh").glob("*/session.jsonl*") if _migratable(p))
CHILDREN = (
    ChildFact("child-b", 1760000000500),
    ChildFact("child-a", 1760000000400, ({"version": 2, "provider": "p", "mode": "one-shot"},)),
)

Outcome = tuple[Any, ...]


def _outcome(run: Callable[..., tuple[dict[str, Any], Iterator[bytes]]], *args: Any) -> Outcome:
    try:
        header, lines = run(*args)
        return ("upgraded", header, b"".join(lines))
    except Exception as err:  # the refusal (or any failure) itself is what must agree
        return ("raised", type(err).__name__, str(err))


def _stepwise(
    steps: list[Step], header: dict[str, Any], body: list[bytes], target: int
) -> tuple[dict[str, Any], Iterator[bytes]]:
    new_header, recs = run_chain(steps, dict(header), decode_records(iter(body)))
    return new_header, encode_records(recs, target)


def _fused(
    steps: list[Step], header: dict[str, Any], body: list[bytes], target: int
) -> tuple[dict[str, Any], Iterator[bytes]]:
    return fused_chain(steps, dict(header), iter(body), (), target)


def _steps(source: int, target: int, children: tuple[ChildFact, ...]) -> list[Step]:
    steps = chain(source, target)
    if children and isinstance(steps[-1], V3ToV4):
        steps[-1] = steps[-1].with_children(children)
    return steps


def _compare(header: dict[str, Any], body: list[bytes], children: tuple[ChildFact, ...] = ()) -> list[str]:
    """Both paths for every fused target of ``header``'s version; the outcomes seen."""
    version = header.get("version")
    assert type(version) is int
    seen = []
    for target in range(max(version + 1, 2), 5):
        steps = _steps(version, target, children)
        assert fusable(steps)

        expected = _outcome(_stepwise, steps, header, body, target)
        assert _outcome(_fused, steps, header, body, target) == expected, f"v{version} -> v{target}"
        seen.append(expected[0])
    return seen


def _split(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return json.loads(lines[0]), lines[1:]


@pytest.mark.parametrize(
    "path", MIGRATE_INPUTS, ids=[str(p.parent.relative_to(FIXTURES)) for p in MIGRATE_INPUTS]
)
def test_every_migrate_fixture(path: Path) -> None:
    header, body = _split(path.read_bytes())
    _compare(header, body)
    if header.get("version") == 3 or "subagent" in str(path):
        _compare(header, body, CHILDREN)


def test_fixtures_cover_both_outcomes() -> None:
    """The comparison above meets upgrades and refusals alike (it could not pass vacuously)."""
    seen: set[str] = set()
    for path in MIGRATE_INPUTS:
        header, body = _split(path.read_bytes())
        seen.update(_compare(header, body))
    assert seen == {"upgraded", "raised"}


@pytest.mark.parametrize("path", DSH_LOGS, ids=[str(p.relative_to(FIXTURES / "dsh")) for p in DSH_LOGS])
def test_every_dsh_fixture_through_the_engine(path: Path) -> None:
    report = scan_source(path, ScanOptions())
    scan = report.scan
    assert scan.version is not None and scan.header is not None
    dialect = report.dialect
    closers_sets: list[tuple[dict[str, Any], ...]] = [()]
    if scan.open.turn is not None:
        closers_sets.append(tuple(dialect.closers(scan)))
    for closers in closers_sets:
        for target in range(max(scan.version + 1, 2), 5):
            steps = chain(scan.version, target)

            args: dict[str, Any] = {
                "path": path, "encoding": report.source.encoding, "header": dict(scan.header.raw),
                "dialect": dialect, "body_offset": scan.body_offset or 0,
                "committed": scan.tail.committed_bytes, "steps": steps, "target": target,
                "limits": ReadLimits(), "closers": closers,
            }  # fmt: skip
            assert _outcome(_engine, True, args) == _outcome(_engine, False, args)


def _engine(fused: bool, args: dict[str, Any]) -> tuple[dict[str, Any], Iterator[bytes]]:
    head, lines = upgraded_lines(**args, fused=fused)
    return {"head": head}, lines


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fused")
    logs = {}
    for workload in ("chunk", "small"):
        for packed in (False, True):
            name = f"{workload}-{'packed' if packed else 'plain'}"
            logs[name] = root / f"{name}.jsonl"
            genlog.generate(logs[name], 384 << 10, seed=7, packed=packed, workload=workload)
    logs["torn"] = root / "torn.jsonl"
    genlog.generate(logs["torn"], 256 << 10, seed=8, torn=True, workload="small")
    return logs


@pytest.mark.parametrize("name", ["chunk-plain", "chunk-packed", "small-plain", "small-packed", "torn"])
def test_generated_logs(generated: dict[str, Path], name: str) -> None:
    data = generated[name].read_bytes()
    if name == "torn":
        data = data[: data.rindex(b"\n") + 1]  # the committed region
    header, body = _split(data)
    assert set(_compare(header, body)) == {"upgraded"}


def _base_lines() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header, body = _split((FIXTURES / "dsh" / "chunks-unpacked" / "session.jsonl").read_bytes())
    return header, [json.loads(line) for line in body]


_BASE = _base_lines()


def _mutate(events: list[dict[str, Any]], op: int, at: int, rng: random.Random) -> None:
    if not events:
        return
    i = at % len(events)
    ev = events[i]
    data = ev.get("data")
    if op == 0:
        del events[i]
    elif op == 1:
        events.insert(i, copy.deepcopy(ev))
    elif op == 2 and i + 1 < len(events):
        events[i], events[i + 1] = events[i + 1], events[i]
    elif op == 3:
        seq = ev.get("seq")
        ev["seq"] = rng.choice([(seq if type(seq) is int else 0) + 1, "7", None, -1])
    elif op == 4 and isinstance(data, dict):
        data[rng.choice(["extra", "turn", "step", "chunk"])] = rng.choice([1, "x", None, {}, True])
    elif op == 5:
        ev[rng.choice(["surfaceOp", "sourceEventSeqs", "ignorable", "time"])] = rng.choice(
            ["append", [0, 1], [[0, 2]], True, 1.5, None]
        )
    elif op == 6:
        ev["type"] = rng.choice(["assistant/chunk", "assistant/message", "step/end", "turn/end", "x/unknown"])
    elif op == 7 and isinstance(data, dict) and isinstance(data.get("chunk"), dict):
        data["chunk"][rng.choice(["type", "index", "text", "id"])] = rng.choice(
            ["finish", "text-delta", "tool-call-delta", 0, -1, "", "t", None]
        )
    elif op == 8 and isinstance(data, dict):
        turn = data.get("turn")
        data["turn"] = rng.choice([(turn if type(turn) is int else 0) + 1, 0, "1"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 10_000)), min_size=1, max_size=6),
    seed=st.integers(0, 2**16),
    version=st.sampled_from([0, 1]),
)
def test_mutated_logs(ops: list[tuple[int, int]], seed: int, version: int) -> None:
    header, events = copy.deepcopy(_BASE)
    header["version"] = version
    rng = random.Random(seed)
    for op, at in ops:
        _mutate(events, op, at, rng)
    _compare(header, [orjson.dumps(ev) for ev in events])


def test_unfused_chains_are_left_to_run_chain() -> None:
    """A chain ending at v1 keeps packed rows as rows: only ``run_chain`` handles it."""
    assert not fusable(chain(0, 1))
    assert not fusable([])
    assert fusable(chain(0, 2)) and fusable(chain(2, 4)) and fusable(chain(3, 4))


def test_refusal_through_the_engine_is_unsupported(tmp_path: Path) -> None:
    """A header the first step refuses: the fused pass raises UnsupportedError at once, as the
    step-by-step one does."""
    log = FIXTURES / "migrate" / "v0-to-v1" / "refuse-header-unknown-key" / "in.jsonl"
    header, _ = _split(log.read_bytes())
    for fused in (True, False):
        with pytest.raises(UnsupportedError, match="refuses"):
            upgraded_lines(log, "raw", header, _dialect(), 0, 0, chain(0, 4), 4, ReadLimits(), fused=fused)


def _dialect() -> Any:
    from sesstool.dialects import registry

    return next(d for d in registry.DIALECTS if d.name == "dsh")


def test_a_chunk_between_the_splice_and_the_next_turn() -> None:
    """§1.3 v1 → v2 legacy fix 1 needs the splice *directly* before the ``turn/start``: a chunk
    in between (taken by the fused pass's chunk shortcut) breaks the pattern in both paths, and
    the fixture without it still gets its closer (so the case can tell the two apart)."""
    header, body = _split(
        (FIXTURES / "migrate" / "v1-to-v2" / "legacy-restart-turn" / "in.jsonl").read_bytes()
    )
    events = [json.loads(line) for line in body]
    at = next(i for i, ev in enumerate(events) if ev["type"] == "agent/inbox/spliced") + 1
    chunk = {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}
    with_chunk = [
        *events[:at],
        {"type": "assistant/chunk", "seq": 0, "time": 5000, "data": chunk},
        *events[at:],
    ]
    for seq, ev in enumerate(with_chunk):
        ev["seq"] = seq
    closers = []
    for log in (events, with_chunk):
        lines = [orjson.dumps(ev) for ev in log]
        assert _compare(header, lines) == ["upgraded"] * 3
        _, out = fused_chain(chain(1, 2), dict(header), iter(lines), (), 2)
        closers.append(sum(b'"interrupted"' in line for line in out))
    assert closers == [1, 0]
