"""Codex rollout file names and the Codex home layout (agent-formats §3.1).

``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<YYYY-MM-DDThh-mm-ss>-<thread uuid>.jsonl`` (``.zst``
once the compression worker rewrote it); archived threads lie flat under
``archived_sessions/``. Pure: the store ring walks the directories.
"""

from __future__ import annotations

import re
import uuid

from sesstool.store.generations import log_name, log_stem

ROLLOUT_NAME = re.compile(
    r"rollout-(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-(?P<id>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl(?P<zst>\.zst)?"
)
HOME_PATTERNS = (
    "sessions/*/*/*/rollout-*.jsonl",
    "sessions/*/*/*/rollout-*.jsonl.zst",
    "archived_sessions/rollout-*.jsonl",
    "archived_sessions/rollout-*.jsonl.zst",
)
SUFFIXES = (".jsonl", ".jsonl.zst")


def parse_name(name: str) -> tuple[str, str, bool] | None:
    """(timestamp part, thread id, compressed) of a rollout file name, None if it is not one."""
    match = ROLLOUT_NAME.fullmatch(name)
    if match is None:
        return None
    return match.group("stamp"), match.group("id"), match.group("zst") is not None


def stem(name: str) -> str:
    return log_stem(name, ".zst")


def repaired_name(name: str, zstd: bool) -> str:
    """``rollout-…-<id>.repaired.jsonl[.zst]`` beside the source: not a name Codex lists, so a
    repair never shadows the thread it repairs (move it in place deliberately)."""
    return log_name(f"{stem(name)}.repaired", zstd, ".zst")


def fork_name(source_name: str, child_id: str, zstd: bool) -> str:
    """The child's rollout name: the source's timestamp part with the child's thread id (so
    Codex lists and resumes it as its own thread); ``<child id>.jsonl`` for other names."""
    parsed = parse_name(source_name)
    suffix = ".jsonl" + (".zst" if zstd else "")
    if parsed is None:
        return child_id + suffix
    return f"rollout-{parsed[0]}-{child_id}{suffix}"


def new_thread_id(now_ms: int, random_bits: int) -> str:
    """A UUIDv7 like the ids Codex gives threads (48-bit ms time, version 7, variant 10)."""
    value = (now_ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= (random_bits >> 62 & 0xFFF) << 64
    value |= 0b10 << 62
    value |= random_bits & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))
