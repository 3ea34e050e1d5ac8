"""derive's span of user entries, moved to the spill file (``dialects/claude/user_span.py``;
issue 11 item 1), writes what it writes held in memory: every Claude fixture, raw and zstd,
derived with ``held.HELD_AT`` forced to 0 and 5 items (the hostile log's also 1) — the
attachment texts, the user blocks, the system texts and the found results spilled, the message
made as it is walked — prints the same bytes in every format (JSONL, JSON, Markdown, text,
each with and without ``--redact``) and the same redaction counts as with everything in
memory. A hostile span adds what the fixtures have few of: the results of parallel calls
written in another order than the calls, attachments of both roles, texts of several entries,
a run closed by resume after them (spec agent-formats §0, §1.7 C, §1.9). One scan per log
(in memory), each derivation read back from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.closer_list import Closers
from sesstool.dialects.claude import derive as claude_derive
from sesstool.dialects.claude import held
from tests.adversarial.claude_hostile import SESSION, WHEN, _entry
from tests.claude.derive_outputs import IN_MEMORY, LOGS, all_written, derivable, suffixes_streamed
from tests.conftest import FIXTURES


def _streamed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts (in the one item of the list) the messages whose content is made as walked."""
    count = [0]
    original = claude_derive.message_doc

    def counted(message: Any) -> Any:
        count[0] += isinstance(message.content, Closers)
        return original(message)

    monkeypatch.setattr(claude_derive, "message_doc", counted)
    return count


def _same_spilled(log: Path, monkeypatch: pytest.MonkeyPatch, thresholds: tuple[int, ...] = (0, 1, 5)) -> int:
    """Asserts every format's bytes at each of ``thresholds`` items equal those in memory; the
    number of messages streamed."""
    count = _streamed(monkeypatch)
    monkeypatch.setattr(held, "_SLICE", 2)  # read back two rows a statement
    with derivable(log) as scanned:
        if scanned is None:
            return 0  # derive refuses it, spilled or not
        try:
            monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
            every = all_written(*scanned)
            assert count[0] == 0
            streamed = 0
            for items in thresholds:
                monkeypatch.setattr(held, "HELD_AT", items)
                assert all_written(*scanned) == every, items
                streamed = streamed or count[0]
            return streamed
        finally:
            monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_span_writes_what_it_writes_in_memory(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 0 (all spilled) and 5 (spilled and in memory side by side; 1 is the hostile log's)."""
    _same_spilled(log, monkeypatch, (0, 5))


def test_fixtures_stream_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures' user messages, raw and zstd, are made as walked at 0 items (the comparison
    above then covers the streamed path)."""
    count = _streamed(monkeypatch)
    monkeypatch.setattr(held, "HELD_AT", 0)
    assert suffixes_streamed(LOGS, lambda: count[0], all_written) == {".jsonl", ".zstd"}


def _attachment(ident: int, parent: str, role: str, text: str) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "attachment": {"type": "note"},
        "type": "attachment",
        "uuid": f"00000000-0000-4000-8000-{ident:012d}",
        "timestamp": WHEN,
        "rendered": [{"content": text}],
        "renderedRole": role,
        "sessionId": SESSION,
        "version": "2.1.332",
    }


def _hostile(path: Path) -> Path:
    """A reply of 7 parallel calls; their results written last call first, two in one entry,
    among texts and attachments of both roles; then a reply of 3 calls resume closes, and an
    attachment."""
    calls = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "true"}}
        for i in range(7)
    ]
    entries: list[dict[str, Any]] = [_entry("assistant", 1, None, calls, "msg_0")]
    parent = entries[0]["uuid"]
    for i in (6, 5, 3, 4, 2, 1, 0):
        blocks: list[Any] = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"ok_{i}"}]
        if i == 3:
            blocks.append({"type": "tool_result", "tool_use_id": "toolu_4", "content": "first of 4"})
        blocks += [{"type": "text", "text": f"go_{i}"}, {"type": "text", "text": f"and_{i}"}]
        entry = _entry("user", (i << 8) + 2, parent, blocks if i % 2 else f"plain_{i}")
        role = "system" if i % 3 == 0 else "user"
        text = f"<system-reminder>note_{i}</system-reminder>" if role == "system" else f"note_{i}"
        attachment = _attachment((i << 8) + 3, entry["uuid"], role, text)
        parent = attachment["uuid"]
        entries += [entry, attachment]
    more = [{"type": "tool_use", "id": f"toolu_late_{i}", "name": "Bash", "input": {}} for i in range(3)]
    entries.append(_entry("assistant", 9, parent, more, "msg_1"))
    entries.append(_attachment(10, entries[-1]["uuid"], "user", "last"))  # a message of origin mixed
    with path.open("w") as out:
        out.writelines(json.dumps(e) + "\n" for e in entries)
    return path


def test_a_hostile_span_spilled_writes_what_it_writes_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _hostile(tmp_path / f"{SESSION}.jsonl")
    assert _same_spilled(log, monkeypatch) >= 2
