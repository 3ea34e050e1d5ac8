"""``report`` reads the derived messages back as ``derive`` does and keeps only the head and
tail it shows (issue 17): on every fixture of every dialect (dsh, mini, Claude Code, Codex; raw
and zstd), with the page's bounds and with bounds small enough to elide, the report's
conversation is the one cut from the messages a scan that holds them all derives, and so is
its count of messages left out. Standard input is read back from its private copy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sesstool.core.options import ScanOptions
from sesstool.engine.report import ReportLimits, ReportRequest, _messages, run_report
from sesstool.engine.scan import scan_source
from tests.conftest import FIXTURES

LOGS = sorted(
    p
    for root in ("dsh", "mini", "claude", "codex")
    for p in (FIXTURES / root).rglob("*")
    if p.is_file()
    and p.name.endswith((".jsonl", ".jsonl.zstd", ".jsonl.zst"))
    and "expected" not in p.parts
    and "lane" not in p.parts
)
SMALL = ReportLimits(messages_head=2, messages_tail=3)


def test_there_are_fixtures_of_every_dialect() -> None:
    assert {p.relative_to(FIXTURES).parts[0] for p in LOGS} == {"dsh", "mini", "claude", "codex"}
    assert sum(p.name.endswith((".zstd", ".zst")) for p in LOGS) > 40


@pytest.mark.parametrize("bounds", [ReportLimits(), SMALL], ids=["page", "small"])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_reports_conversation_is_cut_from_the_held_one(log: Path, bounds: ReportLimits) -> None:
    streamed = run_report(ReportRequest(str(log), bounds=bounds))
    held = scan_source(str(log), ScanOptions(collect_messages=True)).scan
    messages, total, cut, note = _messages(held, held.messages, bounds, None)
    assert (streamed.messages, streamed.messages_total, streamed.elision.characters) == (messages, total, cut)
    assert streamed.messages_note == note
    assert streamed.elision.messages == max(0, total - len(messages))


@pytest.mark.parametrize(
    "log",
    [p for p in LOGS if p.parent.name in ("tool-one", "crash-dangling-call", "kill-during-command")],
    ids=lambda p: str(p.relative_to(FIXTURES)),
)
def test_a_report_from_standard_input_is_the_files(log: Path, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "sesstool", "report"]
    from_file = subprocess.run([*argv, str(log)], capture_output=True, check=False)
    with log.open("rb") as given:
        from_stdin = subprocess.run([*argv, "-"], stdin=given, capture_output=True, check=False)
    assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
    conversation = from_file.stdout.split(b"id='conversation'", 1)[1].split(b"</section>", 1)[0]
    assert conversation in from_stdin.stdout and b"messages)</h2>" in conversation
