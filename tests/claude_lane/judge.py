"""How the lane compares what sesstool says with what the real CLI did (spec agent-formats §0).

Pure helpers shared by the offline fixture tests and the live lane.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]


def plain(messages: Any) -> list[Json]:
    """Derived messages as the request carries them: role and content only."""
    return [{"role": m["role"], "content": list(m["content"])} for m in messages]


def _contains_run(haystack: list[Json], needle: list[Json]) -> bool:
    if not needle:
        return True
    for start in range(len(haystack) - len(needle) + 1):
        window = haystack[start : start + len(needle)]
        if window[:-1] == needle[:-1] and _extends(window[-1], needle[-1]):
            return True
    return False


def _extends(block: Json, derived: Json) -> bool:
    """``block`` is ``derived``, or derived's text followed by the newline a merge adds."""
    if block == derived:
        return True
    if block.get("type") == "text" and derived.get("type") == "text":
        return block == {**derived, "text": f"{derived['text']}\n"}
    return False


def resume_mismatch(derived: list[Json], request: list[Json], prompt: str) -> str | None:
    """None when ``derived`` is what the CLI sent on resume, before its new prompt.

    Every message up to the last derived assistant message must be equal. The user/system
    messages after it (a turn still open in the file) may be extended by the new turn: the
    CLI merges the new prompt (and its attachments) into them, so the derived user blocks must
    appear as one run in the request's message and a derived system text must begin the
    request's. The new prompt must follow.
    """
    last = max((i for i, m in enumerate(derived) if m["role"] == "assistant"), default=-1)
    head, tail = derived[: last + 1], derived[last + 1 :]
    if request[: len(head)] != head:
        for i, (a, b) in enumerate(zip(request, head, strict=False)):
            if a != b:
                return f"message {i} differs:\n  derived {b}\n  request {a}"
        return f"the request has {len(request)} messages, derived {len(head)} before the open turn"
    rest = request[len(head) :]
    for offset, message in enumerate(tail):
        if offset >= len(rest) or rest[offset]["role"] != message["role"]:
            return f"open-turn message {offset} ({message['role']}) has no counterpart in {rest}"
        got = rest[offset]
        if message["role"] == "system" and message["content"]:
            text = message["content"][0]["text"]
            have = got["content"][0]["text"] if got["content"] else ""
            if not have.startswith(text):
                return f"system text differs:\n  derived {text!r}\n  request {have!r}"
        elif message["role"] == "system":
            if got["content"]:
                return f"derived an empty system message, the request has {got['content']}"
        elif not _contains_run(got["content"], message["content"]):
            return f"open user message not found:\n  derived {message['content']}\n  request {got['content']}"
    texts = [
        b.get("text") for m in rest for b in m["content"] if m["role"] == "user" and b.get("type") == "text"
    ]
    if prompt not in texts:
        return f"the new prompt {prompt!r} is not in what follows the derived messages"
    return None


# Fields whose values are fresh identifiers or clocks on every run (spec agent-formats §4:
# "ignoring uuid and timestamp values"); uuid links are compared by position instead.
VOLATILE = ("timestamp", "promptId")
LINKS = ("uuid", "parentUuid", "sourceToolAssistantUUID")


def appended_by_cli(before: bytes, after: bytes, prompt: str) -> list[Json]:
    """The graph entries the CLI appended on resume before writing the new prompt."""
    import json

    assert after.startswith(before), "the CLI rewrote the prefix"
    found: list[Json] = []
    for raw in after[len(before) :].split(b"\n"):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue  # the torn line the CLI left mid-file (its fragment ends the old bytes)
        if "uuid" not in entry or entry.get("type") not in ("user", "assistant"):
            continue
        content = (entry.get("message") or {}).get("content")
        if entry.get("type") == "user" and content == prompt:
            break
        found.append(entry)
    return found


def shape(entries: list[Json], known: dict[str, str]) -> list[Json]:
    """Entries with volatile values blanked and uuids named by role: ``known`` maps uuids of
    the source file to themselves; new uuids become ``new#N`` in order of appearance."""
    names = dict(known)

    def name(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value not in names:
            names[value] = f"new#{sum(1 for v in names.values() if v.startswith('new#'))}"
        return names[value]

    shaped = []
    for entry in entries:
        copy = {k: ("<volatile>" if k in VOLATILE else v) for k, v in entry.items()}
        for key in LINKS:
            if key in copy:
                copy[key] = name(copy[key])
        message = copy.get("message")
        if isinstance(message, dict) and "id" in message and entry.get("type") == "assistant":
            copy["message"] = {**message, "id": "<volatile>"}
        shaped.append(copy)
    return shaped
