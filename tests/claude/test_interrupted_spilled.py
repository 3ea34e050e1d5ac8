"""derive's run of calls never answered, moved to the spill file (``dialects/claude/interrupted.py``;
issue 11 item 1), writes what it writes held in memory: every Claude fixture, raw and zstd,
derived with ``held.HELD_AT`` forced to 0 items — the pending tool ids spilled — prints the
same JSONL as with everything in memory; where the message of interrupted results was made as
it is walked (a run closed), at 0, 1 and 5 items every format prints the same bytes (JSONL,
JSON, Markdown, text, each with and without ``--redact``) and the same redaction counts. One
scan per fixture (in memory), each derivation read back from it (a few seconds in all).
Fixtures raw and zstd must have streamed (else the comparison proves nothing). ``report`` shows
the ends of a message longer than ``2 * REPORT_PARTS`` parts, spilled or not, the same page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.closer_list import Closers
from sesstool.dialects.claude import derive as claude_derive
from sesstool.dialects.claude import held
from sesstool.dialects.claude.vocabulary import INTERRUPTED_TOOL_TEXT
from sesstool.engine import report as report_engine
from tests.adversarial.claude_hostile import SESSION, call_run
from tests.claude.derive_outputs import IN_MEMORY, LOGS, all_written, derivable, suffixes_streamed, written
from tests.conftest import FIXTURES

_CLOSED = json.dumps(INTERRUPTED_TOOL_TEXT).encode()  # what an interrupted result says


class _Streamed:
    """Counts the derived messages whose content is made as it is walked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = claude_derive.message_doc

        def counted(message: Any) -> Any:
            self.count += isinstance(message.content, Closers)
            return original(message)

        monkeypatch.setattr(claude_derive, "message_doc", counted)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_run_writes_what_it_writes_in_memory(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSONL (every byte of every message) for every fixture spilled at 0; every format at 0, 1
    and 5 where a message was streamed (no other message is written any differently)."""
    streamed = _Streamed(monkeypatch)
    monkeypatch.setattr(held, "_SLICE", 2)  # read back two rows a statement
    with derivable(log) as scanned:
        if scanned is None:
            return  # derive refuses it, spilled or not
        monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
        expected = written(*scanned, "jsonl", False)
        assert streamed.count == 0
        monkeypatch.setattr(held, "HELD_AT", 0)
        assert written(*scanned, "jsonl", False) == expected
        if streamed.count == 0:
            added = [m for m in expected[0].splitlines() if _CLOSED in m and not m.endswith(b'"file"}')]
            assert added == [], "resume closed a run, in memory only"
            return
        monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
        every = all_written(*scanned)
        for items in (0, 1, 5):
            monkeypatch.setattr(held, "HELD_AT", items)
            assert all_written(*scanned) == every, items


def test_fixtures_close_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixtures whose derive closes calls, raw and zstd, stream their message at 0 items (the
    comparison above then covers every format)."""
    streamed = _Streamed(monkeypatch)
    monkeypatch.setattr(held, "HELD_AT", 0)
    closing = suffixes_streamed(
        LOGS, lambda: streamed.count, lambda report, readable: written(report, readable, "jsonl", False)
    )
    assert closing == {".jsonl", ".zstd"}


def test_report_shows_the_ends_of_a_long_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of 9 calls, 2 parts shown at each end: the page names the first two and the last
    two calls and how many lie between, spilled or in memory, the same bytes."""
    from sesstool.engine.report import ReportRequest, run_report
    from sesstool.render.report_html import render_html

    log = tmp_path / f"{SESSION}.jsonl"
    with log.open("wb") as out:
        for entry in call_run(9):
            out.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
    monkeypatch.setattr(report_engine, "REPORT_PARTS", 2)
    pages = []
    for items in (IN_MEMORY, 0, 5):
        monkeypatch.setattr(held, "HELD_AT", items)
        pages.append(render_html(run_report(ReportRequest(str(log), redact=items == 5))))
    page = render_html(run_report(ReportRequest(str(log), redact=True)))
    monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
    assert pages[0] == pages[1] and pages[2] == page
    shown = [f"tool-result · toolu_{i} · error".encode() in pages[0] for i in range(9)]
    assert shown == [True, True, False, False, False, False, False, True, True]
    assert b"5 part(s) not shown" in pages[0]
