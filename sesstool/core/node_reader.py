"""What the published Node v0 reader decides that the spec leaves open (read-path mutations,
docs/format.md "Read-path verdicts by differential mutation"): the rules the scanner applies
when its profile says ``node_v0_reader``."""

from __future__ import annotations

from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.jsonline import js_string
from sesstool.core.profile import Profile
from sesstool.core.rules import Finding, Severity

# the surface fold: the v0 reader never reaches it once it refused an unknown type
FOLD_RULES = frozenset({R.REPLACE_ENDPOINT, R.REPLACE_ORDER, R.REPLACE_UNCITED, R.REPLACE_NOT_EARLIER})


def unclosable_open_turn(profile: Profile | None, rel: Any) -> str | None:
    """Why the reader cannot balance the open turn, or None: its closers name the open turn's
    number (and the open step's), and a missing or malformed one makes a malformed or non-JSON
    closer, so the reader refuses the log."""
    if profile is None or not profile.node_v0_reader:
        return None
    if rel.open_turn_unnumbered:
        return "the open turn's turn/start has no positive data.turn: the v0 reader cannot close it"
    if rel.open_step is not None and rel.open_step_unnumbered:
        return "the open turn's step/start has no data.step: the v0 reader cannot close it"
    return None


def judged(profile: Profile | None, findings: list[Finding]) -> list[Finding]:
    """The findings the verdict weighs: once the reader refused an unknown type (while it loads),
    a replacement failing only because its target is that event is never judged."""
    if (
        profile is not None
        and profile.node_v0_reader
        and any(f.rule == R.UNKNOWN_EVENT_TYPE and f.severity is Severity.ERROR for f in findings)
    ):
        return [f for f in findings if f.rule not in FOLD_RULES]
    return findings


def type_name(obj: dict[str, Any], profile: Profile) -> str | None:
    """The name the reader gives a non-string ``type``: ``String(type)`` (``"undefined"`` when
    missing), an unknown type — unsupported, or kept opaque when ignorable — never damage; None
    when that name is a known type (no valid event of that type: ``envelope-type``) and for
    every other reader."""
    if not profile.node_v0_reader:
        return None
    name = js_string(obj["type"]) if "type" in obj else "undefined"
    return None if name in profile.all_known else name
