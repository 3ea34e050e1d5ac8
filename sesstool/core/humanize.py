"""Numbers and times as people read them (pure; shared by the dialects' rows and the views)."""

from __future__ import annotations

import datetime as dt


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
