"""The Claude Code transcript rules: stable ids, severities, the spec sections they rest on.

Physical defects (a torn last line, NUL runs, lines that do not decode) use the shared ids of
``core.rules`` (``torn-tail``, ``nul-bytes``, ``invalid-json``, …), reported with the same
addresses as for every dialect. The rules below are about entries and their graph.
"""

from __future__ import annotations

from sesstool.core.rules import Rule, Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

RULES: tuple[Rule, ...] = (
    Rule(
        "claude-fragment",
        E,
        "agent-formats §0, §1.8",
        "a broken line mid-file (a cut line the CLI appended after): the CLI skips it on resume",
    ),
    Rule(
        "claude-dangling-tool-use",
        W,
        "agent-formats §0, §1.8",
        "tool_use on the active chain without a result: resume appends an interrupted result",
        "interrupted",
    ),
    Rule(
        "claude-unanswered-turn",
        W,
        "agent-formats §0",
        "the active chain ends on a user turn without a reply: resume appends 'No response requested.'",
        "interrupted",
    ),
    Rule(
        "claude-orphan-tool-result",
        W,
        "agent-formats §0, §1.8",
        "tool_result on the active chain whose tool_use is not there: resume drops it",
        "none",
    ),
    Rule(
        "claude-parent-missing",
        W,
        "agent-formats §1.8",
        "parentUuid names no entry in the file: history before it is unreachable",
        "none",
    ),
    Rule(
        "claude-duplicate-uuid",
        W,
        "agent-formats §1.4, §1.8",
        "an entry repeats the uuid of an earlier one",
        "none",
    ),
    Rule(
        "claude-several-sessions",
        W,
        "agent-formats §1.6, §1.8",
        "entries of more than one sessionId in one file",
        "none",
    ),
    Rule(
        "claude-concurrent-writers",
        W,
        "agent-formats §1.7 C, §1.8",
        "two branches of the conversation grew interleaved: two writers appended at once",
        "none",
    ),
    Rule(
        "claude-entry-shape",
        W,
        "agent-formats §1.4",
        "an entry lacks a field its type needs (type, uuid, message)",
        "none",
    ),
    Rule(
        "claude-unknown-type",
        N,
        "agent-formats §1.3, §5",
        "entry type sesstool does not know (newer CLIs add types): kept, not interpreted",
        "none",
    ),
    Rule(
        "claude-writer-version",
        N,
        "agent-formats §1.4, §5",
        "the Claude Code version(s) that wrote the file",
        "none",
    ),
    Rule(
        "claude-subagent-dangling",
        N,
        "agent-formats §0",
        "a subagent transcript ends with a tool_use without result (the CLI leaves it so)",
        "none",
    ),
)
