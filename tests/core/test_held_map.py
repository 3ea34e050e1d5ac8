"""``core.held_map.HeldMap`` (issue 11 item 1): the same answers in memory and spilled
(``store.spilled_strings``, given per map: by the engine's run spill or to the redactor), and
every user of it — the v0→v1 retry chains, the v2→v3 generated and prefixed message ids, the
redactor's tokens — gives the same bytes with its maps spilled from the first key as held in
memory."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from sesstool.core import held_map
from sesstool.core.held_map import HeldMap
from sesstool.core.redact import Redactor
from sesstool.core.upgrade.chain import chain
from sesstool.core.upgrade.fused import fused_chain
from sesstool.store.run_spill import RunSpill, spilled_strings
from tests.conftest import FIXTURES

MIGRATE_INPUTS = sorted((FIXTURES / "migrate").rglob("in.jsonl"))
KEYS = ["a", "b", "\ud800", "é", "", "a\x00b", "v2-to-v3-system-1", "long" * 50]


@pytest.mark.parametrize("at", [0, 1, 3, 1000])
def test_the_map_answers_as_a_dict(monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    monkeypatch.setattr(held_map, "HELD_AT", at)
    rng = random.Random(at)
    held, plain = HeldMap("a test", spilled_strings), dict[str, str]()
    for _ in range(400):
        key = rng.choice(KEYS) + str(rng.randrange(30))
        op = rng.random()
        if op < 0.02:
            held.clear()
            plain.clear()
        elif op < 0.5:
            value = rng.choice(KEYS)
            held.put(key, value)
            plain[key] = value
        assert held.get(key) == plain.get(key)
        assert (key in held) == (key in plain)
        assert len(held) == len(plain)


def _migrated(path: Path) -> list[Any]:
    lines = path.read_bytes().splitlines()
    header = json.loads(lines[0])
    out: list[Any] = []
    for target in range(max(header["version"] + 1, 2), 5):
        try:
            steps = [step.with_spill(RunSpill()) for step in chain(header["version"], target)]
            new, body = fused_chain(steps, dict(header), iter(lines[1:]), (), target)
            out.append((new, b"".join(body)))
        except Exception as err:  # a refusal must agree too
            out.append((type(err).__name__, str(err)))
    return out


@pytest.mark.parametrize(
    "path", MIGRATE_INPUTS, ids=[str(p.parent.relative_to(FIXTURES)) for p in MIGRATE_INPUTS]
)
def test_migrations_spilled_equal_held(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    held = _migrated(path)
    monkeypatch.setattr(held_map, "HELD_AT", 0)
    assert _migrated(path) == held


def test_redaction_spilled_equals_held(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"key AKIA{i % 7:016X} and ghp_{i % 5:036d} again AKIA{i % 3:016X}" for i in range(30)]
    held = Redactor(spill=spilled_strings)
    expected = [held.text(t) for t in texts]
    monkeypatch.setattr(held_map, "HELD_AT", 0)
    spilled = Redactor(spill=spilled_strings)
    assert [spilled.text(t) for t in texts] == expected
    assert spilled.counts() == held.counts()


def test_without_a_maker_the_map_stays_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core used alone (no maker given): a dict whatever its size, as before."""
    monkeypatch.setattr(held_map, "HELD_AT", 0)
    alone = HeldMap("a test")
    alone.put("a", "b")
    alone.put("c", "d")
    assert alone._table is None and alone.get("c") == "d" and len(alone) == 2
