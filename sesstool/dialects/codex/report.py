"""What ``inspect`` shows of a Codex rollout: its rows on the screen and its JSON members."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, replace
from typing import Any

from sesstool.core.closer_list import Closers
from sesstool.core.first_seen import more_note
from sesstool.core.humanize import chosen, plural, preview
from sesstool.dialects.codex.model import CodexFacts
from sesstool.dialects.codex.vocabulary import USAGE_KEYS


def _counts(pairs: tuple[tuple[str, int], ...]) -> str:
    return " · ".join(f"{name} {count}" for name, count in pairs) or "none"


def inspect_lines(f: CodexFacts) -> Iterator[tuple[str, str, str | None]]:
    """(label, raw text, style) rows, made as they are printed (a row per unfinished turn and
    per waiting call: issue 11 item 1); the renderer escapes the text."""
    writer = f"Codex {f.cli_version or '?'}"
    if f.originator:
        writer += f" ({f.originator})"
    rows: list[tuple[str, str, str | None]] = [
        (
            "thread",
            f"{f.thread_id or '?'} · written by {writer} · history_mode {f.history_mode or '?'}",
            None,
        ),
        ("model", f"{f.model or '?'} via provider {f.model_provider or '?'}", None),
        ("cwd", f.cwd or "?", None),
    ]
    if f.forked_from_id:
        rows.append(("forked", f"from thread {chosen(f.forked_from_id)}", None))
    lines = f"{plural(f.lines, 'line')} · {f.blank_lines} blank"
    if f.skipped_lines:
        lines += f" · {f.skipped_lines} Codex skips on load"
    rows.append(("lines", lines, "red" if f.skipped_lines else None))
    rows.append(("by type", _counts(f.by_type) + more_note("by_type", f.more), None))
    rows.append(("items", _counts(f.by_item) + more_note("by_item", f.more), None))
    turns = (
        f"{f.turns_started} started · {f.turns_completed} completed · {f.turns_aborted} aborted · "
        f"{len(f.open_turns)} unfinished"
    )
    rows.append(("turns", turns, "yellow" if f.open_turns else None))
    yield from rows
    for turn in f.open_turns:
        yield ("", f"unfinished turn {chosen(turn.turn_id)} (line {turn.line})", "yellow")
    calls = (
        f"{f.calls} calls · {f.answered} answered · {len(f.dangling)} dangling · "
        f"{f.orphan_outputs} outputs without a call"
    )
    yield ("tool calls", calls, "yellow" if f.dangling else None)
    rows = []
    for call in f.dangling:
        name = f" {chosen(call.name)}" if call.name else ""
        said = f"pending {chosen(call.call_id)} {call.kind}{name} (line {call.line})"
        yield (
            "",
            f"{said}: {preview(call.arguments)}",
            "yellow",
        )
    if f.usage is not None:
        u = f.usage
        rows.append(
            (
                "usage",
                f"input {u.input_tokens} (cached {u.cache_read_tokens}) · output {u.output_tokens} "
                f"(reasoning {u.reasoning_tokens}) · total {u.total_tokens} tokens",
                None,
            )
        )
    else:
        rows.append(("usage", "no token_count event", None))
    rows.append(
        ("history", f"{plural(f.compactions, 'compaction')} · {plural(f.rollbacks, 'rollback')}", None)
    )
    rows.append(("time", f"{f.first_time or '?'} → {f.last_time or '?'}", None))
    yield from rows


def inspect_document(f: CodexFacts) -> dict[str, Any]:
    doc = asdict(replace(f, history=None, dangling=(), open_turns=()))
    del doc["history"]  # derive's addresses, not a fact of the rollout
    # read back as they are written (render.json_stream): never all held (issue 11 item 1)
    doc["open_turns"] = Closers.of(f.open_turns).mapped(asdict)
    doc["dangling"] = Closers.of(f.dangling).mapped(asdict)
    doc["by_type"] = dict(f.by_type)
    doc["by_item"] = dict(f.by_item)
    del doc["more"]
    if f.more:  # only when a list stopped at FIRST_SEEN types (docs/format.md, "Memory")
        doc["more"] = list(f.more)
    doc["usage"] = f.usage.document(USAGE_KEYS) if f.usage is not None else None
    return doc
