"""A session's subagent transcripts (``<session-id>/subagents/agent-*.jsonl``) as side files of
its main transcript (spec agent-formats §1.2): where they are, and how ``inspect`` sums each one
up — its verdict, size, tool calls and the calls it leaves without result (§0: resume leaves a
subagent's file as it is). Names only: the store ring walks the globs."""

from __future__ import annotations

from typing import Any

from sesstool.core.model import ScanResult
from sesstool.dialects.base import Row
from sesstool.dialects.claude.scan_facts import ToolCall, TranscriptScan

MAIN_SUFFIXES = (".jsonl.zstd", ".jsonl.zst", ".jsonl")


def patterns(path: str) -> tuple[str, ...]:
    """Globs (relative to the transcript's directory) of the subagent files of the main
    transcript at ``path``; none for a subagent's own file (a subagent has no side files)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if len(parts) >= 2 and parts[-2] == "subagents":
        return ()
    for suffix in MAIN_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            session = _escape(name[: -len(suffix)])
            return tuple(f"{session}/subagents/agent-*{s}" for s in reversed(MAIN_SUFFIXES))
    return ()


def _escape(name: str) -> str:
    """A file name as a glob that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def rows(companions: tuple[tuple[str, TranscriptScan, ScanResult], ...], label: str) -> tuple[Row, ...]:
    """One ``agent file`` row per subagent file: verdict, lines, calls, the calls left open."""
    found: list[Row] = []
    for name, t, scan in companions:
        text = (
            f"{name}: {scan.verdict} · {t.lines} lines, {t.entries} in the graph · "
            f"{t.tool_uses} tool call(s), {t.answered} answered"
        )
        if t.left_open:
            text += f", {len(t.left_open)} left without result: " + ", ".join(_call(c) for c in t.left_open)
        calm = scan.verdict == "clean" and not t.left_open
        found.append(Row(label, text, None if calm else "yellow"))
    return tuple(found)


def call_doc(c: ToolCall) -> dict[str, Any]:
    """A tool call in ``inspect --json``: id, name, input (cut), line, the entry carrying it."""
    return {"id": c.id, "name": c.name, "input": c.input, "line": c.line, "entry": c.entry}


def _call(call: ToolCall) -> str:
    return f"{call.name} {call.id} (line {call.line})"


def body(t: TranscriptScan, subagent: bool) -> dict[str, Any]:
    """A subagent file's members of ``inspect --json``'s ``companions`` list."""
    return {
        "claude": {
            "session_id": t.session_id,
            "subagent_file": subagent,
            "lines": t.lines,
            "entries": t.entries,
            "tool_calls": {
                "made": t.tool_uses,
                "answered": t.answered,
                "left_open": [call_doc(c) for c in t.left_open],
            },
            "time": {"first": t.first_time, "last": t.last_time},
        },
    }
