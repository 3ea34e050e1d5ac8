"""derive's index spilled to disk (issue 17) derives exactly what the index in memory derives:
every Claude fixture, raw and zstd, derived through the CLI's streamed path with the spill
threshold forced to 0, 1 and 5 wanted lines (the per-line offsets then spill too, in pages of
four with two in memory), equals the derivation of a scan that holds every entry, messages and
best-effort notes alike. Each run must have opened its spill file (else it proves nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import InputError, UnsupportedError
from sesstool.core.options import ScanOptions
from sesstool.dialects.claude import derive as claude_derive
from sesstool.dialects.claude import dialect as claude_dialect
from sesstool.engine.derive import DeriveRequest, run_derive
from sesstool.engine.scan import scan_source
from sesstool.store import spill
from sesstool.store.spill import SpilledArray, SpillFile
from tests.conftest import FIXTURES

LOGS = sorted(
    p
    for p in (FIXTURES / "claude").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts and "lane" not in p.parts
)


def test_there_are_fixtures_raw_and_zstd() -> None:
    assert sum(p.suffix == ".zstd" for p in LOGS) > 20 and sum(p.suffix == ".jsonl" for p in LOGS) > 20


@pytest.mark.parametrize("threshold", [0, 1, 5])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_spilled_derivation_is_the_in_memory_one(
    log: Path, threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = scan_source(str(log), ScanOptions(collect_messages=True))
    verdict = held.scan.verdict
    expected = (list(held.scan.messages or ()), held.dialect.derive_notes(held.scan))
    monkeypatch.setattr(claude_derive, "SPILL_AT", threshold)
    monkeypatch.setattr(spill, "PAGE", 4)
    monkeypatch.setattr(spill, "CACHED_PAGES", 2)
    opened: list[str] = []

    class Counted(SpillFile):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            opened.append(args[0] if args else "")

    monkeypatch.setattr(claude_derive, "SpillFile", Counted)
    monkeypatch.setattr(claude_dialect, "SpillFile", Counted)
    if verdict in ("corrupt", "unsupported"):
        with pytest.raises((InputError, UnsupportedError)):
            run_derive(DeriveRequest(str(log)))
        return
    report = run_derive(DeriveRequest(str(log)))
    offsets = report.scan.scan.facts.offsets
    assert (list(report.messages), report.notes) == expected
    if report.scan.scan.facts.scan.chain:
        assert "a large transcript's derivation" in opened  # the index was spilled
    if threshold <= len(offsets.offsets):
        assert offsets.spilled and isinstance(offsets.offsets, SpilledArray)
