"""derive's reply of many members, walked and its blocks moved to the spill file
(``dialects/claude/reply.py``; issue 11 item 1), writes what it writes held in memory.

Every Claude fixture, raw and zstd, derived with ``held.HELD_AT`` forced to 0 and 5 blocks (the
reply's blocks spilled, its content made as it is walked), with the index in memory and spilled
(``derive.SPILL_AT`` 0, its lines read back two a statement), prints the same bytes in every
format (JSONL, JSON, Markdown, text, each with and without ``--redact``), the same redaction
counts and the same ``report`` page as with everything in memory. Hostile replies add what the
fixtures have few of (spec agent-formats §1.5, §1.6 "Parallel tool calls", §1.9): members on
side branches, members split by other entries, candidate lines whose id digest matches but
whose id does not, and a property over generated transcripts of interleaved replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.closer_list import Closers
from sesstool.dialects.claude import derive as claude_derive
from sesstool.dialects.claude import held, reply
from sesstool.engine.report import ReportRequest, run_report
from sesstool.engine.scan import ScanReport
from sesstool.render.report_html import render_html
from sesstool.store.plaintext import Readable
from tests.adversarial.claude_hostile import SESSION, _entry
from tests.claude.derive_outputs import IN_MEMORY, LOGS, all_written, derivable, suffixes_streamed, written
from tests.conftest import FIXTURES

# (held.HELD_AT, derive.SPILL_AT): blocks spilled with the index in memory and spilled; some of a
# reply's blocks in memory, some spilled
_SPILLED = ((0, IN_MEMORY), (0, 0), (5, IN_MEMORY))


def _streamed_replies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts (in the one item of the list) the assistant messages made as walked."""
    count = [0]
    original = claude_derive.message_doc

    def counted(message: Any) -> Any:
        count[0] += message.role == "assistant" and isinstance(message.content, Closers)
        return original(message)

    monkeypatch.setattr(claude_derive, "message_doc", counted)
    return count


def _in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
    monkeypatch.setattr(claude_derive, "SPILL_AT", IN_MEMORY)


def _same_spilled(log: Path, monkeypatch: pytest.MonkeyPatch, report: bool = True) -> int:
    """Asserts every format's bytes (and the report page) spilled at each of ``_SPILLED`` equal
    those in memory; the number of assistant messages streamed."""
    count = _streamed_replies(monkeypatch)
    monkeypatch.setattr(held, "_SLICE", 2)  # blocks read back two rows a statement
    monkeypatch.setattr(reply, "PAGE", 2)  # a spilled index's lines too
    with derivable(log) as scanned:
        if scanned is None:
            return 0  # derive refuses it, spilled or not
        try:
            _in_memory(monkeypatch)
            every = all_written(*scanned)
            pages = _pages(log) if report else []
            assert count[0] == 0
            for items, lines in _SPILLED:
                monkeypatch.setattr(held, "HELD_AT", items)
                monkeypatch.setattr(claude_derive, "SPILL_AT", lines)
                assert all_written(*scanned) == every, (items, lines)
                if report:
                    assert _pages(log) == pages, (items, lines)
            return count[0]
        finally:
            _in_memory(monkeypatch)


def _pages(log: Path) -> list[Any]:
    """The report page, plain and ``--redact``."""
    return [render_html(run_report(ReportRequest(str(log), redact=redact))) for redact in (False, True)]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_spilled_reply_writes_what_it_writes_in_memory(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_spilled(log, monkeypatch)


def test_fixtures_stream_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures' replies, raw and zstd, are made as walked at 0 blocks (the comparison above
    then covers the streamed path); some have members on more than one line."""
    count = _streamed_replies(monkeypatch)
    monkeypatch.setattr(held, "HELD_AT", 0)
    several = 0

    def write(report: ScanReport, readable: Readable | None) -> None:
        nonlocal several
        lines = written(report, readable, "jsonl", False)[0].splitlines()
        several += any(_blocks(m) > 1 for m in lines if b'"assistant"' in m)

    streaming = suffixes_streamed(LOGS, lambda: count[0], write)
    assert streaming == {".jsonl", ".zstd"} and several > 4


def _blocks(line: bytes) -> int:
    doc = json.loads(line)
    return len(doc["content"]) if doc.get("role") == "assistant" else 0


def _text(i: int, parent: str | None, text: str, msg: str) -> dict[str, Any]:
    return _entry("assistant", i, parent, [{"type": "text", "text": text}], msg)


def _write(path: Path, entries: list[dict[str, Any]]) -> Path:
    with path.open("w") as out:
        out.writelines(json.dumps(e) + "\n" for e in entries)
    return path


def _messages(log: Path) -> list[dict[str, Any]]:
    with derivable(log) as scanned:
        assert scanned is not None
        return [json.loads(m) for m in written(*scanned, "jsonl", False)[0].splitlines()]


def _side_branches(tmp_path: Path) -> Path:
    """Parallel calls (§1.6): A1 calls, A2 (child of A1) calls, A3 a text member on a side branch
    (another child of A1), each result a child of its call, the next reply after the last."""
    call = [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {}} for i in (1, 2)]
    a1 = _entry("assistant", 1, None, [call[0]], "msg_A")
    a2 = _entry("assistant", 2, a1["uuid"], [call[1]], "msg_A")
    a3 = _text(3, a1["uuid"], "aside", "msg_A")
    r1 = _entry("user", 4, a1["uuid"], [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "one"}])
    r2 = _entry("user", 5, a2["uuid"], [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "two"}])
    b = _text(6, r2["uuid"], "done", "msg_B")
    return _write(tmp_path / f"{SESSION}.jsonl", [a1, a2, a3, r1, r2, b])


def test_members_on_side_branches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _side_branches(tmp_path)
    messages = _messages(log)
    assert [b.get("id", b.get("text")) for b in messages[0]["content"]] == ["toolu_1", "toolu_2", "aside"]
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant"]
    assert _same_spilled(log, monkeypatch) >= 2 * len(_SPILLED)


def _split(tmp_path: Path) -> Path:
    """One reply whose members are split by a prompt and another reply; its later members come
    with the first (§1.9), the later lines skipped."""
    a1 = _text(1, None, "a1", "msg_A")
    u1 = _entry("user", 2, a1["uuid"], "between")
    b1 = _text(3, u1["uuid"], "b1", "msg_B")
    a2 = _text(4, b1["uuid"], "a2", "msg_A")
    u2 = _entry("user", 5, a2["uuid"], "after")
    a3 = _text(6, u2["uuid"], "a3", "msg_A")
    return _write(tmp_path / f"{SESSION}.jsonl", [a1, u1, b1, a2, u2, a3])


def test_a_reply_split_by_other_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _split(tmp_path)
    shown = [(m["role"], [b["text"] for b in m["content"]]) for m in _messages(log)]
    assert shown == [
        ("assistant", ["a1", "a2", "a3"]),
        ("user", ["between"]),
        ("assistant", ["b1"]),
        ("user", ["after"]),
    ]
    assert _same_spilled(log, monkeypatch) >= len(_SPILLED)


def test_a_shared_digest_is_not_a_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every id given the same digest: the index in memory offers every reply's lines for each
    reply; only those whose id is the reply's are its members (compared in full)."""
    log = _split(tmp_path)
    expected = _all_of(log, monkeypatch)
    monkeypatch.setattr(claude_derive, "_key", lambda text: 5 << 32)
    assert _all_of(log, monkeypatch) == expected
    monkeypatch.setattr(held, "HELD_AT", 0)
    assert _all_of(log, monkeypatch) == expected


def _all_of(log: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, Any]]:
    with derivable(log) as scanned:
        assert scanned is not None
        return all_written(*scanned)


# a generated transcript: each entry an assistant member of one of three replies (on the chain
# or a side branch off the entry before) or a user prompt; "text" or "calls" members
_ENTRY = st.tuples(
    st.sampled_from(["msg_a", "msg_b", "msg_c", "user"]),
    st.booleans(),  # on a side branch
    st.integers(min_value=0, max_value=3),  # blocks
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_ENTRY, min_size=1, max_size=14))
def test_generated_replies_spilled_write_what_they_write_in_memory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, drawn: list[Any]
) -> None:
    log = tmp_path_factory.mktemp("replies") / f"{SESSION}.jsonl"
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    for n, (kind, aside, blocks) in enumerate(drawn):
        if kind == "user":
            entry = _entry("user", n + 1, parent, f"go_{n}")
        else:
            content = [
                {"type": "tool_use", "id": f"toolu_{n}_{k}", "name": "Bash", "input": {}} if k % 2 else
                {"type": "text", "text": f"{kind}_{n}_{k}"}
                for k in range(blocks)
            ]  # fmt: skip
            entry = _entry("assistant", n + 1, parent, content, kind)
        entries.append(entry)
        if not aside or parent is None:
            parent = entry["uuid"]
    with monkeypatch.context() as patched:
        _same_spilled(_write(log, entries), patched, report=False)
