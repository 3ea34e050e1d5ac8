"""derive streamed by entries (issue 11 item 1) is the in-memory derive: every Claude Code and
Codex fixture, raw and zstd (standard input: tests/adversarial/test_streamed_derive.py), derives
the messages and best-effort notes a scan that holds every entry derives. The id digests that
find a reply's members, a call's result or output are only a shortcut: with every digest made
equal (each lookup then compares every candidate) the messages are the same."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import InputError, UnsupportedError
from sesstool.core.options import ScanOptions
from sesstool.dialects.claude import derive as claude_derive
from sesstool.dialects.codex import history as codex_history
from sesstool.engine.derive import DeriveRequest, run_derive
from sesstool.engine.scan import scan_source
from tests.conftest import FIXTURES

LOGS = sorted(
    p
    for root in ("claude", "codex")
    for p in (FIXTURES / root).rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd", ".zst") and "expected" not in p.parts and "lane" not in p.parts
)


def _held(log: Path) -> tuple[Sequence[Any], tuple[str, ...], str]:
    report = scan_source(str(log), ScanOptions(collect_messages=True))
    assert report.scan.messages is not None
    return report.scan.messages, report.dialect.derive_notes(report.scan), report.scan.verdict


def _streamed(log: Path) -> tuple[list[Any], tuple[str, ...]]:
    report = run_derive(DeriveRequest(str(log)))
    return list(report.messages), report.notes


def test_there_are_fixtures_to_compare() -> None:
    names = {p.parent.name for p in LOGS}
    assert len(LOGS) > 60 and {"concurrent-writers", "compact", "auto-compaction", "rollback"} <= names


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_streamed_derive_is_the_in_memory_derive(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held, notes, verdict = _held(log)
    if verdict in ("corrupt", "unsupported"):
        with pytest.raises((InputError, UnsupportedError)):
            run_derive(DeriveRequest(str(log)))
        return
    assert _streamed(log) == (list(held), notes)


SHARED_IDS = ("concurrent-writers", "compact", "tool-parallel", "parallel-calls", "orphan-output", "rollback")


@pytest.mark.parametrize(
    "log", [p for p in LOGS if p.parent.name in SHARED_IDS], ids=lambda p: str(p.relative_to(FIXTURES))
)
def test_equal_digests_change_nothing(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held, notes, _ = _held(log)
    monkeypatch.setattr(claude_derive, "_key", lambda text: 5 << 32)
    monkeypatch.setattr(codex_history, "_call_key", lambda value: 5)
    assert _streamed(log) == (list(held), notes)


def test_only_the_json_document_keeps_the_system_messages() -> None:
    """A Claude session has a system message per turn: the JSON document's request envelope
    cites them after the messages; every other format leaves them as they are written (held,
    they cost about a quarter of the log's size: 23 MB of derive's 64 MB at 100 MiB)."""
    log = next(p for p in LOGS if p.parent.name == "tool-one" and p.suffix == ".jsonl")
    streamed = run_derive(DeriveRequest(str(log)))
    messages = list(streamed.messages)
    assert any(m["role"] == "system" for m in messages) and streamed.messages.system_count == 0
    assert list(streamed.messages.systems()) == []
    cited = run_derive(DeriveRequest(str(log)))
    cited.messages.keep_system = True
    handed = [m for m in cited.messages if m["role"] == "system"]
    assert cited.messages.system_count == len(handed) > 0
    assert list(cited.messages.systems()) == handed  # kept in a spool, given back once
    assert list(cited.messages.systems()) == []
