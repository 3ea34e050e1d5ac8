"""The report timelines of the Codex and Claude Code dialects, fed the same reader batches as
their scanners: every call the scanner calls dangling is drawn open, and no other; turns open
exactly when the scanner says a turn was left open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sesstool.core.timeline import CollectedTimeline, SpanCollector
from sesstool.dialects.claude.timeline import ClaudeTimeline
from sesstool.dialects.claude.transcript import TranscriptScanner
from sesstool.dialects.codex.scanner import CodexScanner
from sesstool.dialects.codex.timeline import CodexTimeline
from sesstool.store.readers import make_reader
from sesstool.store.source import ReadLimits, open_source
from tests.conftest import FIXTURES

CODEX = sorted((FIXTURES / "codex").glob("*/*.jsonl*"))
CLAUDE = sorted(p for p in (FIXTURES / "claude" / "projects").glob("*/*.jsonl"))


def _feed(path: Path, collector: SpanCollector, scanner: Any) -> tuple[CollectedTimeline, Any]:
    with open_source(str(path)) as (stream, info):
        reader = make_reader(stream, info.encoding, ReadLimits())
        claude = isinstance(scanner, TranscriptScanner)
        for item in reader.batches():
            if type(item) is tuple:
                collector.feed_lines(*item)
            if claude and type(item) is tuple:
                scanner.feed_lines(item[0], item[1], item[2])
            elif not claude:
                scanner.feed(item)
        summary = reader.summary
    scan = scanner.finish() if claude else scanner.finish(summary)
    return collector.finish(interrupted=scan.verdict != "clean"), scan


@pytest.mark.parametrize("log", CODEX, ids=[str(p.relative_to(FIXTURES)) for p in CODEX])
def test_codex_timeline_agrees_with_the_scanner(log: Path) -> None:
    timeline, scan = _feed(log, CodexTimeline(), CodexScanner(str(log)))
    assert len(CODEX) >= 20
    drawn = {i.first_line for i in timeline.items if i.kind == "tool" and i.status == "dangling"}
    assert drawn == {c.line for c in scan.facts.dangling}
    open_turns = [i for i in timeline.items if i.kind == "turn" and i.end is None]
    assert len(open_turns) == len(scan.facts.open_turns)
    assert all(i.end is None or i.end >= i.start for i in timeline.items)


@pytest.mark.parametrize("log", CLAUDE, ids=[str(p.relative_to(FIXTURES)) for p in CLAUDE])
def test_claude_timeline_agrees_with_the_scanner(log: Path) -> None:
    timeline, scan = _feed(log, ClaudeTimeline(), TranscriptScanner(str(log)))
    assert len(CLAUDE) >= 15
    drawn = {i.first_line for i in timeline.items if i.kind == "tool" and i.status == "dangling"}
    assert drawn == {c.line for c in scan.dangling}
    turns = [i for i in timeline.items if i.kind == "turn"]
    assert turns, "every recorded session has a prompt"
    assert (turns[-1].end is None) == (scan.verdict != "clean")
