"""Issue 11 item 2 (time amplification), found in round three: a transcript whose entries each
name their own ``sessionId`` made the entry graph search its list of sessions twice per entry
(``in``, then ``index``): n² comparisons (10,000 entries, a 3.8 MB file: 1.26 s of CPU in
validate; 40,000, 15 MB: 17.8 s). A dict now numbers the sessions. Counted in operations, never
timed: the entries searched grow linearly with the file."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, SupportsIndex

import pytest

from sesstool.core.first_seen import FIRST_SEEN
from sesstool.dialects.claude.entry_graph import EntryGraph
from sesstool.engine.scan import scan_source
from tests.adversarial.claude_hostile import SESSION, _entry


class _Searched(list[str | None]):
    """The graph's list of sessions, counting the items every search or walk of it passes."""

    passed: ClassVar[list[int]] = [0]

    def __contains__(self, item: object) -> bool:
        _Searched.passed[0] += len(self)
        return super().__contains__(item)

    def index(self, item: str | None, *args: SupportsIndex) -> int:
        _Searched.passed[0] += len(self)
        return super().index(item, *args)

    def __iter__(self) -> Iterator[str | None]:
        _Searched.passed[0] += len(self)
        return super().__iter__()


def many_sessions(where: Path, entries: int) -> Path:
    """A chain of prompts and replies, each entry with a session id of its own."""
    path = where / f"sessions-{entries}" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    parent: str | None = None
    with open(path, "w") as f:
        for i in range(entries):
            entry: dict[str, Any]
            if i % 2:
                entry = _entry("assistant", i + 1, parent, [{"type": "text", "text": "ok"}], f"msg_{i}")
            else:
                entry = _entry("user", i + 1, parent, "go")
            entry["sessionId"] = str(uuid.UUID(int=(1 << 100) + i))
            parent = entry["uuid"]
            f.write(json.dumps(entry) + "\n")
    return path


def _passed(monkeypatch: pytest.MonkeyPatch, log: Path) -> tuple[int, int]:
    """(session-list items searched during the scan, the session ids the scan reports)."""
    _Searched.passed[0] = 0
    init = EntryGraph.__init__

    def counted(self: EntryGraph, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.sessions = _Searched(self.sessions)

    with monkeypatch.context() as patched:
        patched.setattr(EntryGraph, "__init__", counted)
        scan = scan_source(str(log)).scan
    facts = scan.facts.scan
    assert "sessions" in facts.more  # the list stops at FIRST_SEEN ids and says so (issue 11 item 1)
    return _Searched.passed[0], len(facts.sessions)


def test_many_session_ids_cost_searches_linear_in_the_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, small_sessions = _passed(monkeypatch, many_sessions(tmp_path, 500))
    large, large_sessions = _passed(monkeypatch, many_sessions(tmp_path, 2000))
    assert (small_sessions, large_sessions) == (FIRST_SEEN, FIRST_SEEN)
    assert large <= 4.5 * small + 10 and large <= 10 * 2000, (small, large)


def test_the_session_of_each_entry_is_unchanged() -> None:
    """Entries of sessions that come back after another keep their session's first number."""
    order = ["a", "b", "a", None, "b", None, "c"]
    graph = EntryGraph()
    for node, session in enumerate(order):
        graph.flags.append(0)
        graph.session(node, session)
    assert graph.sessions == ["a", "b", None, "c"]
    assert [graph.session_of(node) for node in range(len(order))] == order
    twin = graph.copy()
    for node, session in enumerate(["b", "d"], start=len(order)):
        twin.flags.append(0)
        twin.session(node, session)
    assert graph.sessions == ["a", "b", None, "c"] and twin.sessions == ["a", "b", None, "c", "d"]
    assert [twin.session_of(node) for node in range(len(order) + 2)] == [*order, "b", "d"]
