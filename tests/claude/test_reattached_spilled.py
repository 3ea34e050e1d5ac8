"""The off-chain entries derive reattaches (active_chain.py: parallel siblings on side branches,
their results, a compaction's preserved entries; issue 11 item 1, second round) are marked a
byte per entry in the entry graph's arrays and handed on as a sorted array of line numbers, in
the graph's spill file once it spilled. Every Claude fixture, raw and zstd, scanned and derived
with the graph's threshold forced to 0, 1 and 5 entries (pages of four, two in memory) equals
the scan and the derivation with the graph in memory: the same reattached lines, the same
messages and notes. Fixtures that reattach entries are among them (else nothing is proved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sesstool.core.options import ScanOptions
from sesstool.dialects.claude import entry_graph
from sesstool.engine.derive import DeriveRequest, run_derive
from sesstool.engine.scan import scan_source
from sesstool.store import spill
from sesstool.store.spill import SpilledArray
from tests.conftest import FIXTURES

LOGS = sorted(
    p
    for p in (FIXTURES / "claude").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts and "lane" not in p.parts
)
IN_MEMORY = 1 << 30


def _scanned(log: Path) -> tuple[list[int], str, list[object], tuple[str, ...]]:
    """(reattached lines, verdict, derived messages, notes); a log derive refuses has none."""
    result = scan_source(str(log), ScanOptions()).scan
    scan = result.facts.scan
    lines = list(scan.reattached)
    assert lines == sorted(set(lines))
    if result.verdict in ("corrupt", "unsupported"):
        return lines, result.verdict, [], ()
    report = run_derive(DeriveRequest(str(log)))
    return lines, result.verdict, list(report.messages), report.notes


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_reattached_entries_spilled_are_those_in_memory(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry_graph, "SPILL_AT", IN_MEMORY)
    held = _scanned(log)
    monkeypatch.setattr(spill, "PAGE", 4)
    monkeypatch.setattr(spill, "CACHED_PAGES", 2)
    for threshold in (0, 1, 5):
        monkeypatch.setattr(entry_graph, "SPILL_AT", threshold)
        assert _scanned(log) == held, threshold
        if threshold == 0:
            reattached = scan_source(str(log), ScanOptions()).scan.facts.scan.reattached
            assert isinstance(reattached, SpilledArray) or len(held[0]) == 0


def test_fixtures_reattach_entries_raw_and_zstd() -> None:
    """Parallel results on side branches (tool-parallel) and preserved entries, raw and zstd."""
    reattaching = [
        log for log in LOGS if len(scan_source(str(log), ScanOptions()).scan.facts.scan.reattached)
    ]
    assert {p.suffix for p in reattaching} == {".jsonl", ".zstd"}, reattaching
    assert any("tool-parallel" in p.parts for p in reattaching)
