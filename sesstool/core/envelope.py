"""The envelope rules (§3, §1.4) as pure judgements: what an event's top-level keys and an
unhandled event type mean under a profile. The scanner reports what these return."""

from __future__ import annotations

from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.humanize import chosen, chosen_repr
from sesstool.core.profile import Profile

ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})
Problem = tuple[str, str]  # (rule id, message)
# The keys of a surface event carrying both kinds of surface metadata (§3, §5).
SURFACE_ENVELOPE = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"})


def plain_surface(obj: dict[str, Any], t: Any, surface: frozenset[str]) -> bool:
    """Exactly the keys of a surface event, on a surface-eligible type: ``envelope_problems``
    has nothing to say about it (the hot loop skips it; issue 14)."""
    return obj.keys() == SURFACE_ENVELOPE and type(t) is str and t in surface


def count_only(obj: Any, seq: int, t: str, data: Any) -> None:
    """The scanner's handler of a known log-only type (§1.4) once it has seen one: the hot loop
    counts it, and there is nothing else to do (no rule applies to its payload)."""


def envelope_problems(obj: dict[str, Any], keys: Any, t: Any, profile: Profile | None) -> list[Problem]:
    """Keys beyond type/seq/time/data: what does not belong (§3)."""
    problems: list[Problem] = []
    if not keys <= ENVELOPE_KEYS:
        problems.append(
            (R.ENVELOPE_KEY, f"event has keys that do not belong: {chosen(sorted(keys - ENVELOPE_KEYS))}")
        )
    if "data" not in keys:
        problems.append((R.ENVELOPE_DATA, "event has no data"))
    ignorable = obj.get("ignorable")
    if ignorable is not None and ignorable is not True:
        problems.append(
            (R.ENVELOPE_IGNORABLE, f"ignorable must be absent or true, got {chosen_repr(ignorable)}")
        )
    if (
        profile is not None
        and ("surfaceOp" in keys or "sourceEventSeqs" in keys)
        and isinstance(t, str)
        and t not in profile.surface
        and t not in profile.surface_meta_exempt
        and profile.known(t)
    ):
        problems.append(
            (R.SURFACE_META_ON_LOG_ONLY, f"{t} is not a surface event but carries surface metadata")
        )
    return problems


def refusal(profile: Profile, t: str, seq: int, session_id: str | None) -> Problem:
    """An event type the log's version neither handles nor knows, not marked ignorable (§1.4).
    The type and the session id are the log's choice, of any length: quoted cut
    (``humanize.chosen``), as every dialect quotes what a log chose."""
    if t in profile.retired:
        return (
            R.RETIRED_EVENT_TYPE,
            f'retired event type "{t}" is refused by v0 readers and by the v0→v1 migration',
        )
    if t in profile.all_known:
        return (R.VERSION_EVENT_TYPE, f'event type "{t}" does not exist in format v{profile.version}')
    return (
        R.UNKNOWN_EVENT_TYPE,
        f'session "{chosen(session_id)}" contains event type "{chosen(t)}" (seq {seq}) unknown '
        "to this harness and not marked ignorable; refusing to interpret the log",
    )
