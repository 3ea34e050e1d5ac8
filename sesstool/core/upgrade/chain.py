"""Compose adjacent steps into a chain (spec §1.3): one module per step, named after the
version it introduces; a missing edge refuses ("Session migration vX->vY is missing")."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from sesstool.core.upgrade import Rec, Step, UpgradeRefused

# source version -> module defining ``STEP``
STEP_MODULES: dict[int, str] = {
    0: "sesstool.core.upgrade.v1",
    1: "sesstool.core.upgrade.v2",
    2: "sesstool.core.upgrade.v3",
    3: "sesstool.core.upgrade.v4",
}


def step_for(source: int) -> Step:
    module_name = STEP_MODULES.get(source)
    try:
        module = importlib.import_module(module_name) if module_name else None
    except ModuleNotFoundError:
        module = None
    step: Step | None = getattr(module, "STEP", None) if module is not None else None
    if step is None:
        raise UpgradeRefused(
            "session-format", source, f"Session migration v{source}->v{source + 1} is missing"
        )
    return step


def chain(source: int, target: int) -> list[Step]:
    return [step_for(v) for v in range(source, target)]


def run_chain(
    steps: list[Step], header: dict[str, Any], recs: Iterator[Rec]
) -> tuple[dict[str, Any], Iterator[Rec]]:
    """Thread the header and the record stream through every step (lazily: nothing is read
    until the result is iterated)."""
    for step in steps:
        recs = step.run(header, recs)
        header = step.header(header)
    return header, recs
