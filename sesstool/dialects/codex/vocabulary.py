"""The Codex CLI rollout vocabulary (agent-formats §3.2–§3.3) and the codex rule ids.

A rollout line is ``{timestamp, ordinal?, type, payload}`` (+ ``metadata`` on response items).
What Codex 0.171 knows is listed here; anything else is reported as information, never as
corruption (agent-formats §5.1: the set keeps growing and older readers tolerate ``other``).
"""

from __future__ import annotations

import re
from typing import Any

from sesstool.core.rules import Rule, rule_table

# The RolloutItem variants 0.171 writes or reads (agent-formats §3.3; observed in the lane).
ROLLOUT_ITEM_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "turn_context",
        "event_msg",
        "compacted",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "token_usage_record",
        "world_state",
        "retained_context",
        "security_risk_score",
        "realtime_item",
    }
)

# Codex serialises RolloutLine with its timestamp first: where a line written by it begins.
LINE_START = b'{"timestamp":'

# ResponseItem variants (codex-rs/protocol models.rs, agent-formats §3.3).
CALL_TYPES = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
}
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "local_shell_call",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "tool_search_call",
        "tool_search_output",
        "additional_tools",
        "agent_message",
        "image_generation_call",
    }
)
# Recorded but stripped on load as legacy (codex-rs/rollout recorder.rs).
DROPPED_ON_LOAD = frozenset({"ghost_snapshot"})
# Payload keys Codex keeps in the rollout but never sends to the model (observed: 0.171 strips
# them from every input item of a request).
LOCAL_ONLY_KEYS = ("internal_chat_message_metadata_passthrough",)

HISTORY_MODES = frozenset({"paginated", "legacy"})  # 0.171: "expected `legacy` or `paginated`"
TURN_END_EVENTS = frozenset({"task_complete", "turn_aborted"})

KNOWN_CLI_VERSION = (0, 171, 0)
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def cli_version(text: object) -> tuple[int, int, int] | None:
    """``"0.171.0"`` -> (0, 171, 0); None when it is not a version."""
    if not isinstance(text, str):
        return None
    match = _VERSION.match(text)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


# the rollout's token_count total_token_usage keys, as core.model.Usage fields (in JSON order)
USAGE_KEYS = {
    "input_tokens": "input_tokens",
    "cache_read_tokens": "cached_input_tokens",
    "output_tokens": "output_tokens",
    "reasoning_tokens": "reasoning_output_tokens",
    "total_tokens": "total_tokens",
}

RULES: tuple[Rule, ...] = rule_table(
    "agent-formats",
    """
    codex-empty-file               error    corrupt      §3.4
        rollout has no non-empty line: Codex refuses it (0.171: "… is empty")
    codex-missing-session-meta     error    corrupt      §3.4, §0
        rollout does not start with session_meta: Codex refuses to resume it
    codex-session-meta-invalid     error    corrupt      §3.4, §3.5
        session_meta cannot be decoded (no id or cwd): Codex cannot parse the thread id
    codex-unknown-history-mode     error    unsupported  §3.4
        session_meta history_mode unknown to Codex 0.171: a hard load error
    codex-torn-tail                warning  torn         §0, §4
        last line has no newline: a torn write (Codex skips it; a repair drops it)
    codex-undecodable-line         error    corrupt      §3.4, §3.5
        line is not a rollout line: Codex skips it on load and its content is lost to resume
    codex-interleaved-line         error    corrupt      §3.5 (#24425)
        a partial line and a complete one written into one line: Codex skips both
    codex-nul-run                  error    corrupt      §3.4
        run of NUL bytes where a line should be: Codex skips it on load
    codex-call-without-output      warning  interrupted  §3.4, §4
        tool call without output: Codex sends a synthetic "aborted" output on every resume
    codex-output-without-call      warning  none         §3.4
        tool output whose call is not in the rollout: Codex drops it from the prompt
    codex-unfinished-turn          warning  interrupted  §3.4, §4
        task_started without task_complete or turn_aborted: the turn was interrupted
    codex-unknown-item-type        info     none         §3.3, §5
        line or response item of a type Codex 0.171 does not know (tolerated)
    codex-newer-cli-version        info     none         §3.5, §5
        written by a newer Codex than 0.171 (read as 0.171 reads it)
    codex-legacy-rollout           info     unsupported  §3.3 (legacy layout, before openai/codex PR #1600)
        a pre-envelope rollout (bare session meta, bare response items, record_type state lines): Codex
        0.171 decodes none of its lines and refuses it; sesstool reads it as such
    codex-session-meta-repeated    warning  none         §3.3; observed with 0.171
        a later session_meta line: the first stays canonical, but Codex 0.171 drops the history before
        it on resume
    """,
)


# the members of the first session_meta's payload a scan reports (``CodexFacts``)
META_FACTS = (
    "id",
    "forked_from_id",
    "cli_version",
    "originator",
    "source",
    "model_provider",
    "cwd",
    "history_mode",
)


def is_legacy_meta(obj: Any) -> bool:
    """The first line of a pre-envelope rollout: a bare ``SessionMeta {id, timestamp,
    instructions?}`` (openai/codex ``codex-rs/core/src/rollout.rs`` before PR #1600)."""
    return (
        isinstance(obj, dict)
        and "type" not in obj
        and "payload" not in obj
        and isinstance(obj.get("id"), str)
        and isinstance(obj.get("timestamp"), str)
    )


def is_rollout_line(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("type"), str)
        and isinstance(obj.get("timestamp"), str)
        and "payload" in obj
    )
