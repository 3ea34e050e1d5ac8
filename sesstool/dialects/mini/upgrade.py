"""mini-agent v0 → v1 (spec/mini-agent-format.md rule 2: an older version "is accepted and
upgraded"). The layout defines no v0 difference, so the step only raises ``data.version`` in
the header event; every other record is carried byte for byte (docs/format.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sesstool.core.upgrade import Rec, StepShell


class MiniV0ToV1(StepShell, name="mini-agent-format-v0-to-v1", source=0):
    def edit_header(self, header: dict[str, Any]) -> dict[str, Any]:
        data = header.get("data")
        new = dict(header)
        new["data"] = {**(data if isinstance(data, dict) else {}), "version": self.target}
        return new

    def events(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        yield from recs


STEP = MiniV0ToV1()
