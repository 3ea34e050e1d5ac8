"""Header record per version (spec §2): decode, validate, and the logical lineage it implies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.humanize import chosen_repr
from sesstool.core.jsonline import loads
from sesstool.core.vocabulary import CURRENT_VERSION

MAX_SAFE = 2**53 - 1

_OPTIONAL_V0 = frozenset({"cwd", "parentSession", "seedLength", "origin", "agentPreset"})
_REQUIRED_V0 = frozenset({"type", "version", "id", "createdAt", "delegationDepth"})
_OPTIONAL_V2 = frozenset({"cwd", "parentSession", "origin", "agentPreset"})
_REQUIRED_V2 = frozenset({"type", "version", "id", "createdAt", "isSeeded", "delegationDepth"})
_RETIRED = ("sandboxMode", "approvalPolicy")


@dataclass(frozen=True, slots=True)
class Header:
    """The header as decoded: ``line`` is the record's bytes as the log has them, and ``raw``
    the whole record (unknown keys included) decoded from them each time it is asked for. A
    scan keeps the bytes, not the decoded objects (issue 11 item 1: a hostile header of one
    wide array of short strings is about 15 times its bytes decoded, and the scan is kept to
    the end of every command)."""

    version: int
    line: bytes
    _: KW_ONLY  # what a dialect's header says, where it says it
    id: str | None = None
    created_at: int | None = None
    cwd: str | None = None
    parent_session: str | None = None
    seed_length: int | None = None
    is_seeded: bool | None = None
    origin: str | None = None
    delegation_depth: int | None = None
    agent_preset: str | None = None

    @property
    def raw(self) -> dict[str, Any]:
        record = loads(self.line)  # it decoded to an object when the scan read it
        assert isinstance(record, dict)
        return record

    @property
    def seeded(self) -> bool:
        """Logical isSeeded (§2.1): v0/v1 derive it from seedLength presence."""
        if self.version >= 2:
            return bool(self.is_seeded)
        return self.seed_length is not None


def is_safe_nonneg(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE


def is_safe_int(value: object) -> bool:
    return type(value) is int and -MAX_SAFE <= value <= MAX_SAFE


Problem = tuple[str, str]  # (rule id, message)


def probe_version(record: object) -> int | None:
    """§1.4: the version, read before any version-specific validation (None if unusable)."""
    if isinstance(record, dict) and record.get("type") == "session":
        version = record.get("version")
        if type(version) is int and version >= 0:
            return version
    return None


def _version_refusal(record: object) -> list[Problem] | None:
    """Why a first record is not a header this version of sesstool reads (§1.4), or None."""
    if not isinstance(record, dict):
        return [(R.HEADER_INVALID, "first record is not a JSON object")]
    if record.get("type") != "session":
        return [
            (R.HEADER_INVALID, f'first record has type {chosen_repr(record.get("type"))}, expected "session"')
        ]
    version = record.get("version")
    if type(version) is int and version < 0:
        sid = record.get("id")
        return [
            (
                R.HEADER_OLDER_VERSION,
                f'session "{sid}" uses log format v{version}, older than the supported v0: no '
                "upgrade path exists for it",
            )
        ]
    if type(version) is not int:
        return [(R.HEADER_INVALID, f"header version {chosen_repr(version)} is not a non-negative integer")]
    if version > CURRENT_VERSION:
        sid = record.get("id")
        return [
            (
                R.HEADER_NEWER_VERSION,
                f'session "{sid}" uses log format v{version}, but sesstool reads only '
                f"v0–v{CURRENT_VERSION}: the log was written by a newer harness",
            )
        ]
    return None


def _seed_keys(
    record: dict[str, Any], version: int, field: Callable[..., Any], problems: list[Problem]
) -> tuple[int | None, bool | None]:
    """(seedLength, isSeeded) by version (§2.2), and the key-set problems of the version."""
    keys = record.keys()
    if version <= 1:
        seed_length = field("seedLength", is_safe_nonneg, "a non-negative safe integer")
        if "isSeeded" in record:
            problems.append(
                (R.HEADER_UNKNOWN_KEY, f"isSeeded does not exist in a v{version} header (seedLength says it)")
            )
        extra = keys - _REQUIRED_V0 - _OPTIONAL_V0 - {"isSeeded", *_RETIRED}
        if extra:
            # v0 readers tolerate and drop unknown keys; the v1 codec refuses them (§2.2).
            problems.append(
                (
                    R.HEADER_UNKNOWN_KEY,
                    f"header has unexpected keys {sorted(extra)}"
                    + (" (a v0 reader drops them)" if version == 0 else ""),
                )
            )
        return seed_length, None
    is_seeded = field("isSeeded", lambda v: type(v) is bool, "a boolean", True)
    if "seedLength" in record:
        problems.append((R.HEADER_UNKNOWN_KEY, f"seedLength is forbidden in a v{version} header (isSeeded)"))
    extra = keys - _REQUIRED_V2 - _OPTIONAL_V2 - {"seedLength", *_RETIRED}
    if extra:
        problems.append((R.HEADER_UNKNOWN_KEY, f"header has unexpected keys {sorted(extra)}"))
    return None, is_seeded


def decode_header(record: object, line: bytes) -> tuple[Header | None, list[Problem]]:
    """Validate a header record (``line``: its bytes). Returns (header or None if unusable,
    problems).

    A version newer than CURRENT_VERSION yields only the ``header-newer-version`` problem:
    like the harness, nothing version-specific is checked (§1.4).
    """
    refused = _version_refusal(record)
    if refused is not None:
        return None, refused
    assert isinstance(record, dict)
    version: int = record["version"]
    problems: list[Problem] = []

    def field(name: str, ok: Callable[[Any], bool], want: str, required: bool = False) -> Any:
        if name not in record:
            if required:
                problems.append((R.HEADER_FIELD, f"header lacks required {name} ({want})"))
            return None
        value = record[name]
        if not ok(value):
            problems.append((R.HEADER_FIELD, f"header {name} must be {want}, got {chosen_repr(value)}"))
            return None
        return value

    sid = field("id", lambda v: isinstance(v, str) and v != "", "a non-empty string", True)
    created = field("createdAt", is_safe_nonneg, "a non-negative safe integer", True)
    cwd = field("cwd", lambda v: isinstance(v, str), "a string")
    if isinstance(cwd, str) and not cwd.startswith("/"):
        problems.append((R.HEADER_FIELD, f'header cwd must be an absolute path, got "{cwd}"'))
    parent = field("parentSession", lambda v: isinstance(v, str), "a string")
    origin = field("origin", lambda v: v == "subagent", 'absent or "subagent"')
    depth = field("delegationDepth", is_safe_nonneg, "a non-negative safe integer", True)
    preset = field("agentPreset", lambda v: isinstance(v, str), "a string")
    for retired in _RETIRED:
        if retired in record:
            problems.append(
                (R.HEADER_RETIRED_KEY, f"session header uses retired policy baseline field {retired}")
            )
    seed_length, is_seeded = _seed_keys(record, version, field, problems)
    header = Header(
        version=version,
        id=sid,
        created_at=created,
        cwd=cwd,
        parent_session=parent,
        seed_length=seed_length,
        is_seeded=is_seeded,
        origin=origin,
        delegation_depth=depth,
        agent_preset=preset,
        line=line,
    )
    return header, problems


def unknown_header_key_severity_is_info(version: int) -> bool:
    """v0 readers drop unknown header keys silently: report, but not as an error."""
    return version == 0
