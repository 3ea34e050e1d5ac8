"""Claude Code transcript vocabulary: entry types, the CLI's own texts, the measured version.

Facts from spec agent-formats §0 (measured on Claude Code 2.1.332), §1.3 (entry types) and
§2.3 (what the CLI writes on interruption). The format is officially internal (§1.1): anything
not listed here is reported as information, never as corruption (§5 risk 1).
"""

from __future__ import annotations

MEASURED_VERSION = "2.1.332"

# §1.3: the uuid-bearing types that make up the parentUuid graph.
CHAIN_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})

# §1.3 metadata types, plus those 2.1.332 was seen writing (the lane's fixtures).
METADATA_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "tag",
        "ai-title",
        "agent-name",
        "agent-setting",
        "mode",
        "permission-mode",
        "pr-link",
        "bridge-session",
        "worktree-state",
        "last-prompt",
        "content-replacement",
        # observed in 2.1.332 transcripts (fixtures/claude):
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "atis-latch",
        "cost-state",
        "tools-used",
    }
)

# §0: the tool_result the CLI appends on resume for each call that has no result.
INTERRUPTED_TOOL_TEXT = (
    "[Tool call interrupted: the session ended before this call's result was recorded, so its "
    "outcome is unknown. Check whether it took effect before relying on it or running it again.]"
)
# §0: the assistant entry the CLI appends on resume when the chain ends on a user turn.
NO_RESPONSE_TEXT = "No response requested."
SYNTHETIC_MODEL = "<synthetic>"

# Envelope fields a closer copies from the entry before it (§4), in the CLI's key order.
ENVELOPE_TAIL = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch")

# User entries the CLI writes for local commands (/compact): they take no reply (§0, lane
# fixture `compact`), so a chain ending on them is not waiting for the model.
LOCAL_COMMAND_PREFIXES = ("<local-command-", "<command-name>", "<command-message>")

SYSTEM_REMINDER_OPEN = "<system-reminder>\n"
SYSTEM_REMINDER_CLOSE = "\n</system-reminder>"


def version_key(version: str) -> tuple[int, ...]:
    """``"2.1.332"`` → ``(2, 1, 332)``; anything unparsable sorts first."""
    parts: list[int] = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            return ()
        parts.append(int(digits))
    return tuple(parts)
