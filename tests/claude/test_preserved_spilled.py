"""derive's preserved uuids moved to the spill file (``dialects/claude/preserved.py``; issue 11
item 1) derive what they derive held in memory: every Claude fixture, raw and zstd (the
compaction fixture also as a zstd twin made here: the fixtures have none), and hostile
transcripts of many compactions (preserved entries in the file, and more than ``FIRST_SEEN``
not in it), derived with ``held.HELD_AT`` forced to 0, 1 and 5 (derive's index in memory, then
spilled too: one spill file) — print the same bytes in every
format (JSONL, JSON, Markdown, text, each with and without ``--redact``; the ``report`` page,
plain and redacted) as with everything in memory. Those with compactions must have moved their
uuids to the file (else the comparison proves nothing).

Edge cases (spec agent-formats §1.6 "Compaction", §1.7 C), in memory and spilled alike: a uuid
preserved by two compactions, a preserved uuid met twice in the file (the first line is the
one sent), a preserved reply also on the chain (its best-effort reason), and more than 64
preserved uuids not in the file (the first 64 named, then one reason that there were more)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sesstool.dialects.claude import derive as claude_derive
from sesstool.dialects.claude import held
from sesstool.dialects.claude.derive import Derivation
from sesstool.dialects.claude.held import Store
from sesstool.dialects.claude.preserved import MORE_MISSING, Preserved
from sesstool.engine.report import ReportRequest, run_report
from sesstool.render.report_html import render_html
from tests.adversarial.claude_hostile import SESSION, _entry
from tests.adversarial.test_claude_compactions import _scan
from tests.adversarial.test_claude_preserved import _compaction, missing, present
from tests.claude.derive_outputs import IN_MEMORY, LOGS, all_written, derivable
from tests.conftest import FIXTURES

COMPACT = FIXTURES / "claude" / "projects" / "compact" / "6646c3f2-5dbb-594c-a896-9e6de711f337.jsonl"


class _Moves:
    """Counts the ``Preserved`` that moved to the spill file."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = Preserved._move

        def counted(this: Preserved, file: Any) -> None:
            self.count += 1
            original(this, file)

        monkeypatch.setattr(Preserved, "_move", counted)
        monkeypatch.setattr(held, "_SLICE", 2)  # the compactions read back two rows a statement


def _pages(log: Path) -> list[bytes]:
    return [render_html(run_report(ReportRequest(str(log), redact=redact))) for redact in (False, True)]


def _same_spilled(log: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Asserts every format's bytes at 0, 1 and 5 items equal those in memory; the moves at 0."""
    moves = _Moves(monkeypatch)
    with derivable(log) as scanned:
        if scanned is None:
            return 0  # derive refuses it, spilled or not
        try:
            monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
            monkeypatch.setattr(claude_derive, "SPILL_AT", IN_MEMORY)
            every = all_written(*scanned), _pages(log)
            assert moves.count == 0
            moved = 0
            for items in (0, 1, 5):
                for index_at in (IN_MEMORY, items):  # the index in memory, then spilled too (one file)
                    monkeypatch.setattr(held, "HELD_AT", items)
                    monkeypatch.setattr(claude_derive, "SPILL_AT", index_at)
                    moves.count = 0
                    assert (all_written(*scanned), _pages(log)) == every, (items, index_at)
                    moved = moved or moves.count
            return moved
        finally:
            monkeypatch.setattr(held, "HELD_AT", IN_MEMORY)
            monkeypatch.setattr(claude_derive, "SPILL_AT", IN_MEMORY)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_spilled_preserved_uuids_derive_what_they_derive_in_memory(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = _same_spilled(log, monkeypatch)
    if log == COMPACT:
        assert moved  # the fixture with a compaction moved its preserved uuids


def _zstd_twin(log: Path, where: Path) -> Path:
    where.mkdir()
    twin = where / f"{log.name}.zstd"
    twin.write_bytes(zstandard.ZstdCompressor().compress(log.read_bytes()))
    return twin


def test_the_compaction_fixture_compressed_derives_the_same_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert COMPACT in LOGS and b"compactMetadata" in COMPACT.read_bytes()
    assert _same_spilled(_zstd_twin(COMPACT, tmp_path / "z"), monkeypatch)


def _write(path: Path, entries: Iterator[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        out.writelines(json.dumps(e, separators=(",", ":")) + "\n" for e in entries)
    return path


@pytest.mark.parametrize("case", ["present", "missing"])
@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
def test_hostile_preserved_uuids_spilled_derive_what_they_derive_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, compressed: bool
) -> None:
    """30 compactions of 10 uuids: 300 in the file, or 300 not in it (past the 64 named)."""
    made = (present if case == "present" else missing)(300, 10)
    log = _write(tmp_path / "raw" / f"{SESSION}.jsonl", made)
    if compressed:
        log = _zstd_twin(log, tmp_path / "zstd")
    assert _same_spilled(log, monkeypatch)


# ---- edge cases -------------------------------------------------------------------------------

A = str(uuid.UUID(int=0xA00))


def _derived(
    tmp_path: Path, entries: list[dict[str, Any]], items: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], tuple[str, ...], bool]:
    """(messages as (role, texts), best-effort reasons, whether the uuids spilled) at ``items``."""
    scan, by_line = _scan(_write(tmp_path / f"{items}" / f"{SESSION}.jsonl", iter(entries)))
    monkeypatch.setattr(held, "HELD_AT", items)
    derivation = Derivation(scan, by_line.get)
    messages = [(m.role, [b.get("text") for b in m.content]) for m in derivation.messages()]
    return messages, derivation.best_effort, derivation.index.preserved.spilled


def _both(
    tmp_path: Path, entries: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], tuple[str, ...]]:
    """The derivation in memory, asserted equal to the spilled one (which did spill)."""
    messages, reasons, spilled = _derived(tmp_path, entries, IN_MEMORY, monkeypatch)
    assert not spilled
    assert _derived(tmp_path, entries, 0, monkeypatch) == (messages, reasons, True)
    return messages, reasons


def _turn(at: int, parent: str | None, text: str) -> list[dict[str, Any]]:
    prompt = _entry("user", at, parent, text)
    reply = _entry("assistant", at + 1, prompt["uuid"], [{"type": "text", "text": f"re {text}"}], f"msg_{at}")
    return [prompt, reply]


def test_a_uuid_preserved_by_two_compactions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sent after each summary (the first compaction's, then the second's with a missing one)."""
    first = _turn(0xA00, None, "kept")
    assert first[0]["uuid"] == A
    gone = str(uuid.UUID(int=0xDEAD))
    b1, s1 = _compaction(1, first[1]["uuid"], [A])
    b2, s2 = _compaction(2, s1["uuid"], [A, gone])
    messages, reasons = _both(tmp_path, [*first, b1, s1, b2, s2], monkeypatch)
    texts = [t for _, ts in messages for t in ts]
    assert texts.count("kept") == 3  # on the chain, then after each summary
    assert texts.index("summary 1") < texts.index("summary 2")
    assert reasons == (f"compaction preserved {gone}, which is not in the file",)


def test_a_preserved_uuid_met_twice_sends_its_first_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An off-chain entry with the uuid (reattached: preserved), then the same uuid again on a
    later line (a duplicate, ``claude-duplicate-uuid``): the first line's entry is sent after the
    summary. (Which of two wanted lines wins whatever order they are noted in, the spilled
    index noting the chain's lines before the reattached ones: the test below.)"""
    first = _entry("user", 0xA00, None, "first")
    turn = _turn(0x100, None, "go")
    boundary, summary = _compaction(0, turn[1]["uuid"], [A])
    again = _entry("user", 0xA00, summary["uuid"], "second")
    messages, _ = _both(tmp_path, [first, *turn, boundary, summary, again], monkeypatch)
    after = [ts for _, ts in messages]
    assert after[after.index(["summary 0"]) + 2] == ["first"]


@pytest.mark.parametrize("items", [0, 1, 3, IN_MEMORY])
def test_the_first_line_noted_wins_in_any_order(items: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from sesstool.dialects.claude.compactions import Compaction

    monkeypatch.setattr(held, "HELD_AT", items)
    uuids = [str(uuid.UUID(int=i)) for i in range(6)]
    compactions = [Compaction(1, "b", None, None, None, False, tuple(uuids[:4]), None)]
    compactions.append(Compaction(2, "c", None, None, None, False, (uuids[3], uuids[4], "\udc80"), None))
    preserved = Preserved(compactions, Store("a test"))
    assert preserved.spilled == (items < 6)
    for uuid_, line in ((uuids[0], 9), (uuids[0], 3), (uuids[0], 5), (uuids[5], 1), ("\udc80", 7), (7, 2)):
        preserved.note(uuid_, line)
    assert [preserved.line(u) for u in uuids] == [3, None, None, None, None, None]
    assert preserved.line("\udc80") == 7 and "\udc80" in preserved
    assert uuids[4] in preserved and uuids[5] not in preserved and 7 not in preserved


def test_a_preserved_reply_on_the_chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its reason, once; the reply is sent once (with its turn), its prompt again after the
    summary."""
    turn = _turn(0x100, None, "go")
    boundary, summary = _compaction(0, turn[1]["uuid"], [turn[0]["uuid"], turn[1]["uuid"]])
    messages, reasons = _both(tmp_path, [*turn, boundary, summary], monkeypatch)
    texts = [t for _, ts in messages for t in ts]
    assert texts.count("go") == 2 and texts.count("re go") == 1
    assert reasons == ("a preserved message is also on the chain",)


@pytest.mark.parametrize("count", [64, 65, 200])
def test_more_than_64_missing_are_named_then_counted_as_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    """The first 64 distinct ones each named (in the order met, a repeat not again), then one
    reason that there were more; 64 exactly: as before, no such reason."""
    turn = _turn(0x100, None, "go")
    gone = [str(uuid.UUID(int=(1 << 100) + i)) for i in range(count)]
    b1, s1 = _compaction(1, turn[1]["uuid"], gone[:40])
    b2, s2 = _compaction(2, s1["uuid"], gone[30:])  # ten met twice
    _, reasons = _both(tmp_path, [*turn, b1, s1, b2, s2], monkeypatch)
    named = [f"compaction preserved {u}, which is not in the file" for u in gone[:64]]
    assert list(reasons) == (named if count <= 64 else [*named, MORE_MISSING])


@pytest.mark.parametrize(("items", "moved"), [(3, True), (10, True), (12, False)])
def test_compactions_move_past_held_at_preserved_uuids(
    items: int, moved: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three compactions of four uuids: fewer records than ``HELD_AT`` (3 is not past 3), but 12
    uuids in all: moved past 3 and 10, held at 12; the same records and look-ups either way."""
    from sesstool.dialects.claude.compactions import Compaction, Compactions

    monkeypatch.setattr(held, "HELD_AT", items)
    made = [
        Compaction(
            i,
            f"b{i}",
            None,
            None,
            None,
            False,
            tuple(str(uuid.UUID(int=i * 10 + k)) for k in range(4)),
            f"s{i}",
        )
        for i in range(3)
    ]
    compactions = Compactions(Store("a test"))
    for compaction in made:
        compactions.append(compaction)
    assert compactions._items.spilled == moved
    assert list(compactions) == made and compactions == tuple(made) and compactions[1] == made[1]
    assert list(compactions.anchored("s1")) == [made[1]]
    twin = compactions.copy()
    twin.append(made[0])
    assert len(twin) == 4 and len(compactions) == 3 and list(twin.anchored("s0")) == [made[0], made[0]]
