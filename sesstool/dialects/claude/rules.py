"""The Claude Code transcript rules: stable ids, severities, the spec sections they rest on.

Physical defects (a torn last line, NUL runs, lines that do not decode) use the shared ids of
``core.rules`` (``torn-tail``, ``nul-bytes``, ``invalid-json``, …), reported with the same
addresses as for every dialect. The rules below are about entries and their graph.
"""

from __future__ import annotations

from sesstool.core.rules import Rule, rule_table

RULES: tuple[Rule, ...] = rule_table(
    "agent-formats",
    """
    claude-fragment                error    corrupt      §0, §1.8
        a broken line mid-file (a cut line the CLI appended after): the CLI skips it on resume
    claude-dangling-tool-use       warning  interrupted  §0, §1.8
        tool_use on the active chain without a result: resume appends an interrupted result
    claude-unanswered-turn         warning  interrupted  §0
        the active chain ends on a user turn without a reply: resume appends 'No response requested.'
    claude-orphan-tool-result      warning  none         §0, §1.8
        tool_result on the active chain whose tool_use is not there: resume drops it
    claude-parent-missing          warning  none         §1.8
        parentUuid names no entry in the file: history before it is unreachable
    claude-duplicate-uuid          warning  none         §1.4, §1.8
        an entry repeats the uuid of an earlier one
    claude-several-sessions        warning  none         §1.6, §1.8
        entries of more than one sessionId in one file
    claude-concurrent-writers      warning  none         §1.7 C, §1.8
        two branches of the conversation grew interleaved: two writers appended at once
    claude-entry-shape             warning  none         §1.4
        an entry lacks a field its type needs (type, uuid, message)
    claude-unknown-type            info     none         §1.3, §5
        entry type sesstool does not know (newer CLIs add types): kept, not interpreted
    claude-writer-version          info     none         §1.4, §5
        the Claude Code version(s) that wrote the file
    claude-subagent-dangling       info     none         §0
        a subagent transcript ends with a tool_use without result (the CLI leaves it so)
    """,
)
