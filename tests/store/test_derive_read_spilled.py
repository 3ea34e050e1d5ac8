"""derive's read-back sorted through a spill file (engine/derive_read.py past ``SORT_AT``
offsets out of file order, store/spill_sort.py; issue 11 item 1, second round) prints exactly
what the sort in memory prints: every dsh, mini-agent and migration fixture, raw and zstd,
derived (JSON, JSONL, Markdown, and upgraded to v4 with ``--as-version``) with the threshold
forced to 0, 1 and 5 offsets, compared byte for byte with the threshold out of reach. A
fixture whose surface is out of file order must have taken the spilled sort at 0 (else the
comparison would prove nothing), and some fixtures are."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from sesstool.engine import derive_read
from sesstool.store import spill_sort
from sesstool.store.spool import LineSpool
from tests.conftest import FIXTURES, Sesstool

LOGS = sorted(
    p
    for root in ("dsh", "mini", "migrate")
    for p in (FIXTURES / root).rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts
)
IN_MEMORY = 1 << 62
_VIEWS = (
    ("derive", "--format", "json"),
    ("derive", "--format", "jsonl"),
    ("derive", "--format", "markdown"),
    ("derive", "--format", "jsonl", "--as-version", "4"),
)


class Sorts:
    """Forces ``derive_read.SORT_AT`` and counts the sorts in memory and in a spill file."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.spilled = self.held = 0
        spilled = spill_sort.SpilledOrder.sorted_pairs
        held = LineSpool

        def counted(this: spill_sort.SpilledOrder, values: Iterable[int]) -> Iterator[tuple[int, int]]:
            self.spilled += 1
            return spilled(this, values)

        def spool() -> LineSpool:
            self.held += 1
            return held()

        monkeypatch.setattr(spill_sort.SpilledOrder, "sorted_pairs", counted)
        monkeypatch.setattr(derive_read, "LineSpool", spool)

    def at(self, threshold: int) -> None:
        self.monkeypatch.setattr(derive_read, "SORT_AT", threshold)
        self.spilled = self.held = 0


def _outputs(sesstool: Sesstool, log: Path) -> list[tuple[int, bytes, str]]:
    return [(r.exit_code, r.stdout_bytes, r.stderr) for r in (sesstool(*view, str(log)) for view in _VIEWS)]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_sort_reads_back_the_same_bytes(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, log: Path
) -> None:
    sorts = Sorts(monkeypatch)
    sorts.at(IN_MEMORY)
    held = _outputs(sesstool, log)
    reordered = sorts.held
    assert sorts.spilled == 0
    for threshold in (0, 1, 5):
        sorts.at(threshold)
        assert _outputs(sesstool, log) == held, threshold
        if threshold == 0:
            assert (sorts.spilled, sorts.held) == (reordered, 0)


def test_some_fixtures_are_read_back_out_of_file_order(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above meets surfaces out of file order, raw and zstd."""
    sorts = Sorts(monkeypatch)
    reordered = []
    for log in LOGS:
        sorts.at(0)
        sesstool("derive", "--format", "jsonl", str(log))
        if sorts.spilled:
            reordered.append(log)
    assert {p.suffix for p in reordered} == {".jsonl", ".zstd"}, reordered
