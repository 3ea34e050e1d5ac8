"""Issue 11 item 2 (time amplification), found in round three: a transcript whose entries are
many replies to one entry — a fan of branches, each a reply with its own message id — made the
branch check count, for every child, the children of its parent in the same reply group: n²
group lookups (8,000 replies: 29 s of CPU for a 1.6 MB file). The groups are now counted once
per parent. Counted in operations, never timed: the lookups grow linearly with the fan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sesstool.dialects.claude.entry_graph import EntryGraph
from sesstool.engine.scan import scan_source
from tests.adversarial.claude_hostile import SESSION, _entry


def fan(where: Path, replies: int) -> Path:
    """A prompt, then ``replies`` assistant replies (distinct message ids) all hanging off it."""
    path = where / f"fan-{replies}" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    root = _entry("user", 1, None, "go")
    with open(path, "w") as f:
        f.write(json.dumps(root) + "\n")
        for i in range(replies):
            reply = _entry(
                "assistant", (i << 8) + 7, root["uuid"], [{"type": "text", "text": f"r {i}"}], f"msg_{i}"
            )
            f.write(json.dumps(reply) + "\n")
    return path


def _lookups(monkeypatch: pytest.MonkeyPatch, log: Path) -> tuple[int, int]:
    """(group lookups during the scan, branches it counted)."""
    seen = [0]
    group = EntryGraph.group

    def counted(self: EntryGraph, node: int) -> int:
        seen[0] += 1
        return group(self, node)

    with monkeypatch.context() as patched:
        patched.setattr(EntryGraph, "group", counted)
        scan = scan_source(str(log)).scan
    return seen[0], scan.facts.scan.branches


def test_a_fan_of_replies_costs_lookups_linear_in_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, small_branches = _lookups(monkeypatch, fan(tmp_path, 500))
    large, large_branches = _lookups(monkeypatch, fan(tmp_path, 2000))
    assert (small_branches, large_branches) == (499, 1999)  # every reply but one is a branch
    assert large <= 4.5 * small and large <= 10 * 2000, (small, large)


def test_replies_of_one_streamed_reply_are_not_branches(tmp_path: Path) -> None:
    """The counting is the same: blocks of one reply (one message id) under one parent are one
    child, and each other reply is a branch."""
    path = tmp_path / f"{SESSION}.jsonl"
    root = _entry("user", 1, None, "go")
    lines = [root]
    for i in range(3):  # three blocks of one reply, each hanging off the prompt
        lines.append(
            _entry("assistant", 16 + i, root["uuid"], [{"type": "text", "text": f"b{i}"}], "msg_same")
        )
    for i in range(2):  # two other replies
        lines.append(
            _entry("assistant", 32 + i, root["uuid"], [{"type": "text", "text": f"o{i}"}], f"msg_{i}")
        )
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    assert scan_source(str(path)).scan.facts.scan.branches == 1
