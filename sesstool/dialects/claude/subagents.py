"""A session's subagent transcripts (``<session-id>/subagents/agent-*.jsonl``) as side files of
its main transcript (spec agent-formats §1.2): where they are, and how ``inspect`` sums each one
up — its verdict, size, tool calls and the calls it leaves without result (§0: resume leaves a
subagent's file as it is). Names only: the store ring walks the globs."""

from __future__ import annotations

from typing import Any

from sesstool.core.humanize import chosen, chosen_repr
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


def meta_name(path: str) -> str | None:
    """The sidecar of a subagent's file ``…/subagents/agent-<id>.jsonl[.zstd]``: the
    ``agent-<id>.meta.json`` beside it (§1.2, written by the CLI with the transcript); none for
    a main transcript."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if len(parts) < 2 or parts[-2] != "subagents" or not name.startswith("agent-"):
        return None
    for suffix in MAIN_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)] + ".meta.json"
    return None


# The members of agent-<id>.meta.json shown on inspect's row, in this order (docs/format.md
# "Subagent metadata"); the rest are in ``inspect --json``.
_META_SHOWN = (
    ("agentType", "{}"),
    ("description", "“{}”"),
    ("toolUseId", "started by call {}"),
    ("model", "model {}"),
)


_ABSENT = object()
_SHOWN_CHARS = 160


def meta_text(content: dict[str, Any]) -> str:
    """One line for a subagent's meta sidecar: type, description, the Agent call that started it,
    model and whether the CLI marked it finished (the file of a subagent killed while it ran has
    no mark: the lane's ``kill-subagent`` recording); a member of an unexpected type is shown by
    its ``repr``, each cut to ``_SHOWN_CHARS`` (``inspect --json`` has them whole)."""
    parts = []
    for key, form in _META_SHOWN:
        value = content.get(key)
        if value is not None and value != "":
            text = value if type(value) is str else repr(value)
            if len(text) > _SHOWN_CHARS:
                text = text[:_SHOWN_CHARS] + "…"
            parts.append(form.format(text))
    finished = content.get("finished", _ABSENT)
    if finished is True:
        parts.append("finished")
    elif finished is _ABSENT:
        parts.append("no finished mark")  # the CLI writes ``finished: true`` when the agent ends
    else:
        parts.append(f"finished {chosen_repr(finished)}")
    return " · ".join(parts)


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
    return f"{chosen(call.name)} {chosen(call.id)} (line {call.line})"


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
