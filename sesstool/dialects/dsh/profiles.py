"""The dsh header codec (§2) and one scanner profile per format version v0–v4 (§1.2, §3–§6)."""

from __future__ import annotations

from functools import cache, partial
from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.header import MAX_SAFE, Header, decode_header
from sesstool.core.jsonline import negative_zero_keys
from sesstool.core.profile import EndState, Handler, HeaderProblem, Profile, ReplaceRules
from sesstool.core.rules import Severity
from sesstool.core.vocabulary import ALL_KNOWN, PACKED_TAGS, RETIRED_V0, SURFACE, is_known
from sesstool.dialects.dsh import handlers as h

HEADER_TYPE = "session"


def read_header(
    obj: Any, raw: bytes, filename_version: int | None
) -> tuple[Header | None, list[HeaderProblem], bool]:
    """Decode the first record as a §2 header: its problems, and whether its version is one
    sesstool cannot read (newer or older: unsupported, §1.4)."""
    header, found = decode_header(obj, raw)
    problems: list[HeaderProblem] = []
    for rule, message in found:
        sev = (
            Severity.INFO
            if rule == R.HEADER_UNKNOWN_KEY and header is not None and header.version == 0
            else None
        )
        problems.append((rule, message, sev))
    for key in sorted(negative_zero_keys(raw) & {"createdAt", "delegationDepth", "seedLength"}):
        problems.append((R.HEADER_FIELD, f"header {key} is -0 (not a non-negative integer)", None))
    if header is None:
        unsupported = any(rule in (R.HEADER_NEWER_VERSION, R.HEADER_OLDER_VERSION) for rule, _ in found)
        return None, problems, unsupported
    if filename_version is not None and filename_version != header.version:
        problems.append(
            (
                R.HEADER_FILENAME_VERSION,
                f"file name identifies v{filename_version}, but its header identifies v{header.version}",
                None,
            )
        )
    return header, problems, False


def end_checks(end: EndState) -> None:
    """§2.2 / §4.4: the header's seed claims against the end-seed markers the log holds."""
    header, events, markers = end.header, end.events, end.markers
    version = header.version
    where = end.where
    if version <= 1 and header.seed_length is not None:
        sl = header.seed_length
        if sl > events:
            end.report(
                R.HEADER_SEED_LENGTH,
                f"Session inheritedEventCount {sl} exceeds its event count {events}",
                where,
                # the v0 reader does not check it (rc.8 packages); later codecs refuse
                Severity.WARNING if version == 0 else None,
            )
        elif not any(s in (sl, sl - 1) for s, _ in markers):
            end.report(
                R.SEED_LENGTH_MARKER, f"no session/end-seed at seq {sl} where the inherited seed ends", where
            )
    if version >= 2 and header.is_seeded is not None:
        tagged = any(t for _, t in markers)
        if header.is_seeded and not tagged:
            end.report(R.HEADER_IS_SEEDED, "seeded session lacks an inherited end-seed marker", where)
        elif not header.is_seeded and tagged:
            end.report(R.HEADER_IS_SEEDED, "unseeded session contains an inherited end-seed marker", where)


def _time_ms(time: Any) -> int | None:
    return time if type(time) is int and -MAX_SAFE <= time <= MAX_SAFE else None


def _handlers(version: int) -> dict[str, Handler]:
    table: dict[str, Handler] = {
        "turn/start": h.turn_start,
        "turn/end": h.turn_end,
        "step/start": h.step_start,
        "step/end": h.step_end,
        "tool/call": h.tool_call,
        "request/header": h.request_record,
        "request/context": h.request_record,
        "session/end-seed": h.end_seed,
    }
    if version >= 2:
        table["assistant/attempt"] = h.in_step
    if version >= 4:
        table["image/offload"] = h.image_offload
    if version <= 1:
        table["assistant/chunk"] = h.in_step
        table["todo/write"] = h.in_turn
    if version == 0:
        table["steering/message"] = h.steering
    for t in SURFACE[version]:
        table[t] = h.surface_event
    return table


@cache
def profile(version: int) -> Profile:
    """The scanner profile of dsh format ``version`` (0–4)."""
    old_keys = version <= 2
    return Profile(
        version=version,
        handlers=_handlers(version),
        surface=SURFACE[version],
        known=partial(is_known, version),
        replace=ReplaceRules(
            start_key="start" if old_keys else "startSeq",
            end_key="end" if old_keys else "endSeq",
            earlier=version >= 3,
            cite=True,
            tool_fingerprint=partial(_fingerprint, version),
            protected_head=version >= 3,
        ),
        time_ms=_time_ms,
        time_problem="is not a safe integer (epoch ms)",
        pairing="step",
        all_known=ALL_KNOWN,
        retired=RETIRED_V0 if version == 0 else frozenset(),
        seqless=PACKED_TAGS,
        packed_rows=version <= 1,
        inline_chunks=version <= 1,
        surface_meta_exempt=frozenset({"steering/message"}) if version == 0 else frozenset(),
        ignorable_surface_meta=version >= 4,
        resumes_on=frozenset({"agent/inbox/spliced"}),
        strict_relations=version >= 4,
        negative_zero_seq=version >= 4,
        node_v0_reader=version == 0,
        end_checks=end_checks,
    )


def _fingerprint(version: int, data: dict[str, Any]) -> int | None:
    return h.tool_fingerprint(data, version)
