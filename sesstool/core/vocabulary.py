"""Event vocabulary per format version (spec §1.2, §4.1, §4.6).

An event type is *known* for a version, *retired* (a type that version refuses), or unknown
(refused unless ``ignorable: true``, §1.4). Adding an ordinary type never bumps the version, so
the plugin-owned additions first listed for v4 are accepted from v2 on; structural types
(``system/message``, ``developer/message``, chunks, PTC tags) are gated exactly — see
docs/format.md "Vocabulary per version".
"""

from __future__ import annotations

CURRENT_VERSION = 4
SUPPORTED_VERSIONS = range(0, CURRENT_VERSION + 1)

_CORE = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/result",
        "request/header",
        "request/context",
        "session/end-seed",
        "todo/write",
    }
)

_PLUGIN_V0 = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "sandbox/mode",
        "schedule/change",
        "session/title",
        "session/title-llm-request",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "web/deepseek-search-llm-request",
    }
)

# Ordinary (non-structural) plugin types first seen in the v4 inventory.
_PLUGIN_LATER = frozenset(
    {
        "deliverables/presented",
        "feedback/message-delete",
        "feedback/message-put",
        "model/selection",
        "session-log-deepseek/delivery-accepted",
        "subagent/catalog",
        "subagent/model-selection-policy",
        "workspace/changes",
    }
)

CODE_DISPATCH = frozenset({"tool/code-dispatch", "tool/code-dispatch-start"})
PTC_DISPATCH = frozenset({"tool/ptc-dispatch", "tool/ptc-dispatch-start"})
PACKED_TAGS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})

# v0 refuses these outright (§1.3 v0→v1 refusals, §6.1).
RETIRED_V0 = frozenset({"request/header-delta", "mode/set"})
# Legacy names a v0 reader normalises in memory (§1.3); still readable in v0 logs.
LEGACY_V0 = frozenset({"steering/message"})
LEGACY_PREFIXES_V0 = ("compact/",)

_V0 = _CORE | _PLUGIN_V0 | CODE_DISPATCH | {"assistant/chunk"} | LEGACY_V0
_V2 = _CORE | _PLUGIN_V0 | CODE_DISPATCH | _PLUGIN_LATER | {"assistant/attempt"}
_V3 = (_V2 - CODE_DISPATCH) | PTC_DISPATCH | {"system/message"}
_V4 = _V3 | {"developer/message", "image/offload", "slots/dispatch"}

# v1 is the output of the v0→v1 normalisation: the legacy names no longer occur.
KNOWN: dict[int, frozenset[str]] = {0: _V0, 1: _V0 - LEGACY_V0, 2: _V2, 3: _V3, 4: _V4}

_SURFACE_V0 = frozenset({"user/message", "assistant/message", "tool/result"})
SURFACE: dict[int, frozenset[str]] = {
    0: _SURFACE_V0,
    1: _SURFACE_V0,
    2: _SURFACE_V0,
    3: _SURFACE_V0 | {"system/message"},
    4: _SURFACE_V0 | {"system/message", "developer/message"},
}

# Every type some version knows: used to tell "not in this version" from "unknown".
ALL_KNOWN: frozenset[str] = frozenset().union(*KNOWN.values()) | PACKED_TAGS


def is_known(version: int, event_type: str) -> bool:
    if event_type in KNOWN[version]:
        return True
    return version == 0 and event_type.startswith(LEGACY_PREFIXES_V0)


def canonical_filename(version: int, zstd: bool) -> str:
    """§10.1: session.jsonl for v0, session.v<N>.jsonl for N ≥ 1, plus .zstd."""
    name = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    return name + ".zstd" if zstd else name
