"""The Claude Code transcript rule ids (``rules.py`` holds their table): ``CR.FRAGMENT``, never a bare id."""

from __future__ import annotations

FRAGMENT = "claude-fragment"
DANGLING_TOOL_USE = "claude-dangling-tool-use"
UNANSWERED_TURN = "claude-unanswered-turn"
ORPHAN_TOOL_RESULT = "claude-orphan-tool-result"
PARENT_MISSING = "claude-parent-missing"
DUPLICATE_UUID = "claude-duplicate-uuid"
SEVERAL_SESSIONS = "claude-several-sessions"
CONCURRENT_WRITERS = "claude-concurrent-writers"
ENTRY_SHAPE = "claude-entry-shape"
UNKNOWN_TYPE = "claude-unknown-type"
WRITER_VERSION = "claude-writer-version"
SUBAGENT_DANGLING = "claude-subagent-dangling"
