"""Claude Code transcripts (spec agent-formats §0–§4), measured against Claude Code 2.1.332."""

from sesstool.dialects.claude.dialect import DIALECT, ClaudeDialect

__all__ = ["DIALECT", "ClaudeDialect"]
