"""What the spill differential tests compare (the fold's, the mini-agent calls', Codex's waiting
calls'): every byte the CLI prints and writes for one log, under whatever threshold the caller
has just set."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from tests.conftest import FIXTURES, Sesstool

Outputs = list[tuple[int, bytes, bytes]]

# Every Codex rollout fixture, raw and zstd (not the expected outputs, not the lane's recordings),
# what the Codex spill tests print of each, and the thread id their forks take.
CODEX_LOGS = sorted(
    p
    for p in (FIXTURES / "codex").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd", ".zst") and "expected" not in p.parts and "lane" not in p.parts
)
VIEWS = (  # what the spill differential tests print of a log (Codex's and Claude's)
    ("validate", "--format", "json"),
    ("validate", "--max-findings", "1"),
    ("inspect", "--json"),
    ("inspect",),
    ("derive", "--format", "jsonl"),
)
CODEX_VIEWS = VIEWS
CODEX_CHILD = "01a231e1-4e3c-7083-8cfc-000000000001"
CODEX_SCANS = (  # the scans the Codex spill tests compare: plain, derive's two, the timeline's, capped
    ScanOptions(),
    ScanOptions(collect_messages=True, message_addresses=True),
    ScanOptions(collect_timeline=True),
    ScanOptions(max_findings=1),
)


def printed_and_written(
    sesstool: Sesstool,
    log: Path,
    views: tuple[tuple[str, ...], ...],
    where: Path,
    *,
    suffix: str,
    child: str = "child",
) -> Outputs:
    """Exit status and standard output of each of ``views`` on a fresh copy of ``log``, then
    those of ``repair`` and ``fork`` with the bytes each wrote (``repaired``/``child`` +
    ``suffix`` in the new directory ``where``, named ``<dir>`` in what they print). The copy is
    fresh each time because a repair takes its directory's lock."""
    source = where.parent / "source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir()
    copy = source / log.name
    shutil.copyfile(log, copy)
    seen = [(r.exit_code, r.stdout_bytes, b"") for r in (sesstool(*view, str(copy)) for view in views)]
    where.mkdir()
    for name, args in (
        ("repaired", ("repair", str(copy))),
        ("child", ("fork", str(copy), "--id", child, "--created-at", "5")),
    ):
        target = where / f"{name}{suffix}"
        result = sesstool(*args, "-o", str(target))
        written = target.read_bytes() if target.exists() else b""
        seen.append((result.exit_code, result.stdout_bytes.replace(str(where).encode(), b"<dir>"), written))
    return seen


def held(value: Any) -> Any:
    """A document with each array made as it is walked (``core.closer_list.Closers``: closers,
    waiting calls) as the list the in-memory code put there, to dump it whole."""
    if isinstance(value, Closers):
        return [held(item) for item in value]
    if isinstance(value, dict):
        return {key: held(item) for key, item in value.items()}
    return value


def codex_plain(result: ScanResult) -> ScanResult:
    """A Codex scan with every lazy sequence read into a tuple (a spilled view is equal to its
    tuple; this also shows it is read back whole) and without derive's addresses."""
    facts = result.facts
    if facts is not None:
        lazy = {"open_turns": tuple(facts.open_turns), "dangling": tuple(facts.dangling)}
        facts = dataclasses.replace(facts, **lazy, history=None)
    messages = result.messages
    return dataclasses.replace(
        result,
        facts=facts,
        open=dataclasses.replace(result.open, pending=tuple(result.open.pending)),
        messages=list(messages) if messages is not None else None,
    )


class SpillMoves:
    """Counts the spill files opened for ``purpose`` (each is one move of a ``SpillingRows``)
    while a test forces ``module``'s ``SPILL_AT`` and ``SPILL_BYTES``; tables read back two rows
    a statement, so that reading in slices is exercised too."""

    def __init__(self, monkeypatch: Any, module: Any, purpose: str) -> None:
        from sesstool.store import spill

        self.monkeypatch, self.module = monkeypatch, module
        self.count = 0
        moves = self

        class Counted(spill.SpillFile):
            def __init__(self, why: str = "a scan's state", cache_kib: int = spill.CACHE_KIB) -> None:
                if why == purpose:
                    moves.count += 1
                super().__init__(why, cache_kib)

        monkeypatch.setattr(spill, "SpillFile", Counted)
        monkeypatch.setattr(spill.OrderedRows, "_SLICE", 2)

    def at(self, items: int, text: int = 1 << 62) -> None:
        self.monkeypatch.setattr(self.module, "SPILL_AT", items)
        self.monkeypatch.setattr(self.module, "SPILL_BYTES", text)
        self.count = 0


class Forced:
    """A spill threshold a differential test forces, and how often the spilled path ran since it
    was last set: each call of ``counted`` (a class and one of its methods: the step only the
    spilled path takes) is counted, ``at(n)`` sets ``threshold`` (a module and its constant) to
    ``n`` and the count to 0, and each of ``settings`` (a class or module, an attribute, a value)
    holds for the whole test (small pages, batches and slices, so that paging and reading back
    in pieces are exercised too)."""

    def __init__(
        self,
        monkeypatch: Any,
        counted: tuple[type, str],
        threshold: tuple[Any, str],
        settings: tuple[tuple[Any, str, Any], ...] = (),
    ) -> None:
        self.monkeypatch, self.threshold = monkeypatch, threshold
        self.count = 0
        owner, method = counted
        original = getattr(owner, method)

        def count(this: Any, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(this, *args, **kwargs)

        monkeypatch.setattr(owner, method, count)
        for where, name, value in settings:
            monkeypatch.setattr(where, name, value)

    def at(self, value: int) -> None:
        self.monkeypatch.setattr(*self.threshold, value)
        self.count = 0
