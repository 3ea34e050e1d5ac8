"""Numbers and times as people read them (pure; shared by the dialects' rows and the views)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson

# What a one-line view shows of a tool call's arguments (inspect's dangling calls): enough to see
# the command, bounded whatever the log holds.
PREVIEW_CHARS = 160
# What a finding, a reason or a note quotes of a value a log chose (a uuid, a parent, a tool or
# call id, a tool name): whole up to this many characters (every id a CLI writes is shorter), else
# these first ones and the value's length, so that the findings kept (``--max-findings``) hold a
# bounded message each whatever the ids weigh (issue 11 item 1).
CHOSEN_CHARS = 128
# What a finding's message keeps at most: the messages quote values cut (above), so only a
# message that quotes one whole (a defect) reaches this; it is cut like a quoted value.
MESSAGE_CHARS = 2048


def fmt_time(ms: int | None) -> str:
    if ms is None:
        return "—"
    try:
        stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return stamp.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d} UTC"


def iso_time(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO 8601 UTC (``2026-12-01T13:50:56.247Z``), None when unknown or
    out of range: the form a listing's ``last_time`` uses for every dialect."""
    if ms is None:
        return None
    try:
        stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def fmt_duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes = seconds / 60
    if minutes < 120:
        return f"{minutes:.1f} min"
    return f"{minutes / 60:.1f} h"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def preview(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (not escaped: the view escapes)."""
    if text is None:
        return ""
    return text if len(text) <= limit else text[:limit] + "…"


def chosen(value: object) -> str:
    """``value`` (a value a log chose, ``str()`` of it) as a message quotes it: itself up to
    ``CHOSEN_CHARS`` characters; a longer one cut to its first ``CHOSEN_CHARS`` and said so,
    ``abc…[65,536 characters]`` (not escaped: the formats escape)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= CHOSEN_CHARS:
        return text
    return f"{text[:CHOSEN_CHARS]}…[{len(text):,} characters]"


def bounded_message(message: str) -> str:
    """``message`` cut to its first ``MESSAGE_CHARS`` characters and said to be cut."""
    if len(message) <= MESSAGE_CHARS:
        return message
    return f"{message[:MESSAGE_CHARS]}…[{len(message):,} characters]"


def chosen_repr(value: object) -> str:
    """``repr(value)`` as a message quotes it: a long string's first ``CHOSEN_CHARS`` characters
    quoted and said to be cut, ``'abc'…[65,536 characters]``; any other ``repr`` by ``chosen``."""
    if isinstance(value, str):
        return (
            repr(value)
            if len(value) <= CHOSEN_CHARS
            else f"{value[:CHOSEN_CHARS]!r}…[{len(value):,} characters]"
        )
    return chosen(repr(value))


def arguments_preview(arguments: Any) -> str | None:
    """A tool call's arguments as one bounded line: the raw JSON string as the log holds it, or
    compact JSON for an object; None when there are none. Cut at ``PREVIEW_CHARS`` + 1 so that a
    pending call holds a few hundred bytes whatever its arguments weigh."""
    if arguments is None:
        return None
    if isinstance(arguments, str):
        return arguments[: PREVIEW_CHARS + 1]
    try:
        return orjson.dumps(arguments).decode()[: PREVIEW_CHARS + 1]
    except TypeError:
        return None
