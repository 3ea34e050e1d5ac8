"""What the mock model says: a script keyed by the user's prompt (spec agent-formats §0).

Every lane prompt starts with ``lane:``. The mock finds the newest user message holding such a
prompt, counts the assistant messages after it (the step), and replies with that step of the
prompt's script; past the end of a script it says ``Done.``. Tool-use ids are derived from the
prompt and the step, so they are the same in every run (uuids and timestamps are not: the CLI
makes those).
"""

from __future__ import annotations

import re
from typing import Any

from tests.claude_lane.mock_api import Reply, stalled, text, tool_calls

Json = dict[str, Any]

SLOW = "echo working && sleep 30 && echo finished"
COMPACTION_ASK = "Your task is to create a detailed summary of the conversation so far"
SUMMARY = "<summary>\nThe user asked the assistant to run `echo one`; it printed `one`.\n</summary>"


def bash(tool_id: str, command: str, description: str) -> tuple[str, str, Json]:
    return (tool_id, "Bash", {"command": command, "description": description})


def agent(tool_id: str, prompt: str) -> tuple[str, str, Json]:
    return (
        tool_id,
        "Agent",
        {
            "description": "Lane subagent",
            "prompt": prompt,
            "subagent_type": "general-purpose",
            "run_in_background": False,
        },
    )


SCRIPTS: dict[str, list[Reply]] = {
    "lane: say hello": [text("Hello from the mock model.")],
    "lane: run one tool": [
        tool_calls(bash("toolu_lane_one_0", "echo one", "Print one"), lead="Running it."),
        text("It printed one."),
    ],
    "lane: run two tools": [
        tool_calls(
            bash("toolu_lane_two_a", "echo alpha", "Print alpha"),
            bash("toolu_lane_two_b", "echo beta", "Print beta"),
        ),
        text("Both ran."),
    ],
    "lane: run a slow tool": [
        tool_calls(bash("toolu_lane_slow_0", SLOW, "Work slowly")),
        text("The slow tool finished."),
    ],
    "lane: run a medium tool": [
        tool_calls(bash("toolu_lane_medium_0", "echo start && sleep 4 && echo done", "Work a while")),
        text("The medium tool finished."),
    ],
    "lane: run a fast and a slow tool": [
        tool_calls(
            bash("toolu_lane_mix_fast", "echo fast", "Print fast"),
            bash("toolu_lane_mix_slow", SLOW, "Work slowly"),
        ),
        text("Both finished."),
    ],
    "lane: stream slowly": [stalled("This reply is cut off halfway through its text.")],
    "lane: delegate": [
        tool_calls(agent("toolu_lane_agent_0", "lane: subagent task")),
        text("The subagent reported back."),
    ],
    "lane: subagent task": [
        tool_calls(bash("toolu_lane_sub_0", "echo from-subagent", "Print from-subagent")),
        text("Subagent done: printed from-subagent."),
    ],
    "lane: delegate slow": [
        tool_calls(agent("toolu_lane_agent_slow", "lane: subagent slow task")),
        text("The subagent reported back."),
    ],
    "lane: subagent slow task": [
        tool_calls(bash("toolu_lane_subslow_0", SLOW, "Work slowly")),
        text("Subagent done."),
    ],
    "lane: continue": [text("Continuing after the resume.")],
    "lane: continue again": [text("Continuing once more.")],
}

_PROMPT = re.compile(r"^lane: [^\n]*")


def _texts(message: Json) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return []


def prompt_of(body: Json) -> tuple[str | None, int]:
    """The newest ``lane:`` prompt in the request and how many assistant messages follow it."""
    messages = body.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        for value in _texts(message):
            found = _PROMPT.match(value.strip())
            if found:
                step = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
                return found.group(0), step
    return None, 0


def is_compaction(body: Json) -> bool:
    """The compaction request asks for a summary of the conversation in <summary> tags."""
    messages = body.get("messages") or []
    if not messages:
        return False
    return any(COMPACTION_ASK in t for t in _texts(messages[-1]))


def respond(body: Json) -> Reply:
    if is_compaction(body):
        return text(SUMMARY)
    prompt, step = prompt_of(body)
    script = SCRIPTS.get(prompt or "")
    if script is None or step >= len(script):
        return text("Done.")
    return script[step]
