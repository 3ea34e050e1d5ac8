"""Canonical generation names and discovery in a session directory (spec §10.1, §10.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sesstool.core.errors import InputError, UsageError, WriteRefusedError

_CANONICAL = re.compile(r"session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?")


@dataclass(frozen=True, slots=True)
class Generation:
    path: Path
    version: int
    zstd: bool


def parse_generation_name(name: str) -> tuple[int, bool] | None:
    """(version, zstd) for a canonical name; None for anything else (.v0, V2, temps, …)."""
    m = _CANONICAL.fullmatch(name)
    if m is None:
        return None
    return (int(m.group(1)) if m.group(1) else 0), m.group(2) is not None


def generations(directory: Path) -> list[Generation]:
    """Canonical generations in ``directory``, oldest first. Temporaries never count (§10.1)."""
    found: list[Generation] = []
    for entry in directory.iterdir():
        parsed = parse_generation_name(entry.name)
        if parsed is not None and entry.is_file():
            found.append(Generation(entry, parsed[0], parsed[1]))
    found.sort(key=lambda g: g.version)
    return found


def highest_generation(directory: Path) -> Generation:
    """§10.2 selection: the numerically highest canonical generation; single encoding (§9.2)."""
    found = generations(directory)
    if not found:
        raise InputError(
            f"{directory}: no session generation (session.jsonl, session.vN.jsonl[.zstd]) in this directory"
        )
    encodings = {g.zstd for g in found}
    if len(encodings) > 1:
        raise InputError(
            f"{directory}: holds both .jsonl and .jsonl.zstd generations; a session "
            "root is single-encoding (§9.2)"
        )
    return found[-1]


def canonical_name(version: int, zstd: bool) -> str:
    name = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    return name + ".zstd" if zstd else name


def log_stem(name: str, zstd_suffix: str = ".zstd") -> str:
    """A log file name without its ``.jsonl`` or ``.jsonl<zstd_suffix>`` suffix (others
    unchanged); Codex compresses to ``.jsonl.zst``."""
    for suffix in (".jsonl" + zstd_suffix, ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def log_name(stem: str, zstd: bool, zstd_suffix: str = ".zstd") -> str:
    """``<stem>.jsonl`` or ``<stem>.jsonl<zstd_suffix>``."""
    return stem + ".jsonl" + (zstd_suffix if zstd else "")


def check_publication_name(target: Path, version: int, zstd: bool) -> None:
    """Refuse a target that would make its directory unreadable or mislabelled (issue 11 item 10).

    A canonical name must say what the file is (§10.1: its version and its encoding), and a new
    canonical generation must not give a session directory a second encoding (§9.2: a directory
    holding both reads as unsupported). Names that are not canonical generations are free.
    Raises UsageError (exit 2) for a contradicting name, WriteRefusedError (exit 6) for a second
    encoding.
    """
    parsed = parse_generation_name(target.name)
    if parsed is None:
        return
    named_version, named_zstd = parsed
    if (named_version, named_zstd) != (version, zstd):
        raise UsageError(
            f"{target.name} names a format v{named_version} {'zstd' if named_zstd else 'raw'} "
            f"generation, but this file is v{version} {'zstd' if zstd else 'raw'}: a canonical name "
            f"must say what the file is (§10.1); use {canonical_name(version, zstd)} or a "
            "non-canonical name"
        )
    try:
        existing = {g.zstd for g in generations(target.parent)}
    except FileNotFoundError:
        return
    refuse_second_encoding(str(target.parent), target.name, zstd, existing)


def refuse_second_encoding(directory: str, name: str, zstd: bool, existing: set[bool]) -> None:
    """Raise WriteRefusedError (exit 6) when publishing the generation ``name`` (``zstd`` or
    raw) into ``directory``, whose generations have the encodings ``existing``, would give the
    session directory a second encoding (§9.2) — a local directory or an object prefix alike."""
    if existing and existing != {zstd}:
        raise WriteRefusedError(
            f"{directory} holds {'zstd' if not zstd else 'raw'} generations: publishing "
            f"{name} would give it two encodings, which no reader accepts (§9.2); "
            "write it elsewhere with -o, or keep the source's encoding"
        )
