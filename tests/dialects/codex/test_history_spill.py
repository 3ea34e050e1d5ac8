"""The Codex history's columns spilled to disk (dialects/codex/history.py past ``SPILL_AT``
items, issue 11 item 1, second round) derive what the columns in memory derive: every Codex
fixture, raw and zstd, derived (messages and notes, streamed by entries) with the threshold
forced to 0 and 3 items and pages of four, compared with the history held in memory — also
with every call id's digest made equal, so each lookup walks its whole sorted run. A fixture
with a history must have spilled (else the comparison would prove nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import InputError, UnsupportedError
from sesstool.core.options import ScanOptions
from sesstool.dialects.codex import history
from sesstool.engine.derive import DeriveRequest, run_derive
from sesstool.engine.scan import scan_source
from sesstool.store import spill
from tests.conftest import FIXTURES

LOGS = sorted(
    p
    for p in (FIXTURES / "codex").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd", ".zst") and "expected" not in p.parts and "lane" not in p.parts
)


def test_there_are_fixtures_to_compare() -> None:
    assert len(LOGS) > 20 and any(p.suffix != ".jsonl" for p in LOGS)


def _streamed(log: Path) -> tuple[list[Any], tuple[str, ...]] | str:
    try:
        report = run_derive(DeriveRequest(str(log)))
        return list(report.messages), report.notes
    except (InputError, UnsupportedError) as err:
        return type(err).__name__


@pytest.mark.parametrize("equal_digests", [False, True])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_history_derives_what_the_history_in_memory_derives(
    log: Path, equal_digests: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if equal_digests:
        monkeypatch.setattr(history, "_call_key", lambda value: 5)
    held = _streamed(log)
    monkeypatch.setattr(spill, "PAGE", 4)
    monkeypatch.setattr(spill, "CACHED_PAGES", 2)
    monkeypatch.setattr(history, "_SORT_SLICE", 3)
    moved: list[int] = []
    original = history._Items._move

    def counted(self: Any) -> None:
        moved.append(len(self))
        original(self)

    monkeypatch.setattr(history._Items, "_move", counted)
    for threshold in (0, 3):
        monkeypatch.setattr(history, "SPILL_AT", threshold)
        moved.clear()
        assert _streamed(log) == held, threshold
        if threshold == 0 and not isinstance(held, str) and held[0]:
            assert moved, "the history never spilled"


def test_the_in_memory_scan_holds_no_spill() -> None:
    """Without addresses (the items held in memory) nothing moves to disk."""
    log = next(p for p in LOGS if p.suffix == ".jsonl" and p.parent.name == "rollback")
    report = scan_source(str(log), ScanOptions(collect_messages=True))
    assert report.scan.messages
    assert history.HistoryBuilder(by_address=False)._spill is None
