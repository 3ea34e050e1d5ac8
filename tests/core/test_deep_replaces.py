"""Issue 11 item 2 (time amplification), found in round three: a v4 log whose replaces each name
a node deep in a long surface (here: the last node, replaced again and again) made the fold
search the surface array from its head per replace: n² positions (10,000 messages then 10,000
replaces, 4 MB: 3.4 s of CPU in validate; 40,000, 16 MB: 52 s). Past ``fold.LINK_AT`` searched
positions the node list becomes the linked list a spilled fold keeps, in memory. Counted in
operations, never timed: the positions searched stay within ``LINK_AT`` plus the log."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any, ClassVar

import pytest

from sesstool.core import fold
from sesstool.core.options import ScanOptions
from sesstool.engine.scan import scan_source
from tests.adversarial.hostile_logs import V4_HEADER, v4_user
from tests.conftest import FIXTURES
from tests.core.test_fold_spill import LOGS, _plain


def deep_replaces(path: Path, messages: int) -> Path:
    """``messages`` user messages, then as many replaces, each of the node the one before made."""
    with open(path, "wb") as f:
        f.write(V4_HEADER)
        for seq in range(messages):
            f.write(v4_user(seq, "m"))
        last = messages - 1
        for seq in range(messages, 2 * messages):
            op = {"op": "replace", "startSeq": last, "endSeq": last}
            f.write(v4_user(seq, "r", sourceEventSeqs=[last], surfaceOp=op))
            last = seq
    return path


class _Searched(array):  # type: ignore[type-arg]
    """The fold's node array, counting the positions every ``index`` passes."""

    passed: ClassVar[list[int]] = [0]

    def index(self, value: Any, *args: Any) -> int:
        found: int = super().index(value, *args)
        _Searched.passed[0] += found + 1
        return found


def _searched(monkeypatch: pytest.MonkeyPatch, log: Path) -> tuple[int, int, int]:
    """(positions searched, surface nodes, replacements) of a scan of ``log``."""
    _Searched.passed[0] = 0
    with monkeypatch.context() as patched:
        patched.setattr(fold, "array", _Searched)
        surface = scan_source(str(log)).scan.stats.surface
    return _Searched.passed[0], surface.current, surface.replacements


def test_replaces_deep_in_the_surface_search_a_bounded_number_of_positions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _searched(monkeypatch, deep_replaces(tmp_path / "small.v4.jsonl", 1000))
    large = _searched(monkeypatch, deep_replaces(tmp_path / "large.v4.jsonl", 4000))
    assert small[1:] == (1000, 1000) and large[1:] == (4000, 4000)
    assert large[0] <= (1 << 16) + 4 * 4000, (small, large)  # LINK_AT and the log; 32 million before
    assert fold.LINK_AT <= 1 << 16


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_fold_linked_in_memory_scans_what_the_array_scans(
    monkeypatch: pytest.MonkeyPatch, log: Path
) -> None:
    """Every dsh, mini and migration fixture, its list linked from the first replace (LINK_AT
    below zero) and kept as an array: the same scan, messages and timeline included."""
    for options in (
        ScanOptions(collect_messages=True, message_addresses=True),
        ScanOptions(collect_timeline=True),
    ):
        monkeypatch.setattr(fold, "LINK_AT", 1 << 62)
        held = _plain(scan_source(log, options).scan)
        monkeypatch.setattr(fold, "LINK_AT", -1)
        assert _plain(scan_source(log, options).scan) == held, options


def test_a_list_linked_in_memory_then_spilled_scans_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linked at the first replace (seq 1000), then spilled at seq 1500: the links move to the
    spill file and the scan is the one of the array kept in memory."""
    log = deep_replaces(tmp_path / "moved.v4.jsonl", 1000)
    options = ScanOptions(collect_messages=True, message_addresses=True)
    held = _plain(scan_source(log, options).scan)
    monkeypatch.setattr(fold, "LINK_AT", -1)
    monkeypatch.setattr(fold, "SPILL_AT", 1500)
    moved: list[int] = []
    move = fold.LinkedNodes.move

    def counted(self: fold.LinkedNodes, spill: fold.Spill) -> None:
        moved.append(len(self))
        move(self, spill)

    monkeypatch.setattr(fold.LinkedNodes, "move", counted)
    assert _plain(scan_source(log, options).scan) == held
    assert moved == [1000]
