"""Claude Code transcripts of many branches (issue 11 item 1, fourth round): many prompts each
with two replies that are not blocks of one streamed reply (every other pair interleaved), or
one prompt with a fan of replies. The memory tests (test_claude_branches.py) measure them at N
and 4N; the spill differential (tests/claude/test_branches_spilled.py) scans small ones."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import zstandard

from tests.adversarial.claude_hostile import _entry


def _reply(ident: int, parent: str, text: str) -> dict[str, Any]:
    return _entry("assistant", ident, parent, [{"type": "text", "text": text}], f"msg_{ident}")


def branching(n: int) -> Iterator[dict[str, Any]]:
    """``n`` prompts, each with two replies (one right after it, one recorded as its child);
    every other first reply has a prompt of its own written after the second reply (the two
    branches interleaved: a finding), and the next prompt hangs off the second reply."""
    parent: str | None = None
    for i in range(n):
        prompt = _entry("user", (i << 8) + 1, parent, "go")
        first, second = _reply((i << 8) + 2, prompt["uuid"], "a"), _reply((i << 8) + 3, prompt["uuid"], "b")
        yield from (prompt, first, second)
        if i % 2:
            yield _entry("user", (i << 8) + 4, first["uuid"], "more")
        parent = second["uuid"]


def fan(n: int) -> Iterator[dict[str, Any]]:
    """A prompt, then ``n`` replies (each its own message id) all hanging off it."""
    root = _entry("user", 1, None, "go")
    yield root
    for i in range(n):
        yield _reply((i << 8) + 7, root["uuid"], f"r {i}")


PATTERNS: dict[str, Callable[[int], Iterator[dict[str, Any]]]] = {"branching": branching, "fan": fan}


def write(path: Path, pattern: str, n: int, zstd: bool = False) -> Path:
    """``n`` units of ``pattern`` at ``path``, one zstd frame when ``zstd``."""
    with path.open("wb") as raw, zstandard.ZstdCompressor().stream_writer(raw) if zstd else raw as out:
        for entry in PATTERNS[pattern](n):
            out.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
    return path
