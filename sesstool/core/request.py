"""The current request envelope (spec §5 item 8): what a resumed request would carry besides
the message history. Pure: built from the latest request/header and request/context."""

from __future__ import annotations

from typing import Any

from sesstool.core.model import RequestEnvelope


def canonical_header(header: Any) -> Any:
    """§5.8: empty ``system``/``tools`` dropped; ``adapterDefaults`` kept only when a marker is
    true. Anything that is not an object is returned as it is (validation reports it)."""
    if not isinstance(header, dict):
        return header
    out = dict(header)
    if out.get("system") == "":
        del out["system"]
    if out.get("tools") == []:
        del out["tools"]
    defaults = out.get("adapterDefaults")
    if isinstance(defaults, dict):
        kept = {k: v for k, v in defaults.items() if v is True}
        if kept:
            out["adapterDefaults"] = kept
        else:
            del out["adapterDefaults"]
    return out


def envelope_document(env: RequestEnvelope, system_messages: list[Any]) -> dict[str, Any]:
    """The envelope as data. v3+ keep the system prompt in system/message surface nodes, which
    are passed in (the text of the current head); v0–v2 carry it in the header."""
    data = env.header if isinstance(env.header, dict) else {}
    header = canonical_header(data.get("header")) if data else None
    doc: dict[str, Any] = {
        "header": header,
        "header_seq": env.header_seq,
        "header_reason": data.get("reason") if data else None,
        "context": env.context,
        "context_seq": env.context_seq,
    }
    if system_messages:
        doc["system_messages"] = system_messages
    return doc
