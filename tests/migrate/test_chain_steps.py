"""The dsh chain's wiring (spec §1.3): which step serves which edge, a missing edge's exact
refusal, and that steps thread the header and records in order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from sesstool.core.upgrade import Rec, UpgradeRefused, UpgradeSpill
from sesstool.core.upgrade import chain as chain_module
from sesstool.core.upgrade.chain import chain, run_chain, step_for


@pytest.mark.parametrize("source", [0, 1, 2, 3])
def test_each_dsh_edge_has_its_step(source: int) -> None:
    step = step_for(source)
    assert (step.source, step.target) == (source, source + 1)
    assert step.name == f"session-format-v{source}-to-v{source + 1}"
    assert step_for(source) is step


@pytest.mark.parametrize("source", [4, 5, -1])
def test_a_missing_edge_refuses_naming_it(source: int) -> None:
    with pytest.raises(UpgradeRefused) as info:
        step_for(source)
    assert info.value.detail == f"Session migration v{source}->v{source + 1} is missing"
    assert info.value.step == "session-format"


def test_a_module_that_is_gone_or_has_no_step_is_a_missing_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(chain_module.STEP_MODULES, 2, "sesstool.core.upgrade.no_such_step")
    with pytest.raises(UpgradeRefused, match=r"Session migration v2->v3 is missing$"):
        step_for(2)
    monkeypatch.setitem(chain_module.STEP_MODULES, 2, "sesstool.core.upgrade.records")  # no STEP
    with pytest.raises(UpgradeRefused, match=r"Session migration v2->v3 is missing$"):
        step_for(2)


def test_chains_are_the_edges_in_order() -> None:
    assert [(s.source, s.target) for s in chain(0, 4)] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert [(s.source, s.target) for s in chain(1, 3)] == [(1, 2), (2, 3)]
    assert chain(2, 2) == []
    with pytest.raises(UpgradeRefused, match="v4->v5 is missing"):
        chain(3, 5)


@dataclass
class Tag:
    """A step that appends its name to every event and to the header's trail."""

    name: str
    source: int = 0
    target: int = 0
    seen: list[dict[str, Any]] = field(default_factory=list)

    def header(self, header: dict[str, Any]) -> dict[str, Any]:
        return {**header, "trail": [*header.get("trail", []), self.name]}

    def with_spill(self, spill: UpgradeSpill | None) -> Tag:
        return self  # it holds nothing

    def run(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        self.seen.append(header)  # each step gets ITS source header
        for rec in recs:
            yield Rec([{**e, "by": [*e.get("by", []), self.name]} for e in rec.events], None)


def test_run_chain_threads_headers_and_records_in_order() -> None:
    a, b = Tag("a"), Tag("b")
    header, recs = run_chain([a, b], {"v": 0}, iter([Rec([{"n": 1}], b"x"), Rec([{"n": 2}], b"y")]))
    assert header == {"v": 0, "trail": ["a", "b"]}
    assert a.seen == b.seen == []  # lazy: nothing runs until the records are read
    assert [r.events for r in recs] == [[{"n": 1, "by": ["a", "b"]}], [{"n": 2, "by": ["a", "b"]}]]
    assert a.seen == [{"v": 0}] and b.seen == [{"v": 0, "trail": ["a"]}]
    header, recs = run_chain([], {"v": 3}, iter([Rec([{"n": 1}], b"x")]))
    assert header == {"v": 3} and [r.raw for r in recs] == [b"x"]
