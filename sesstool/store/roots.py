"""Logs under a root directory laid out as a dialect says (``Dialect.layout``): a Codex home's
``sessions/YYYY/MM/DD/rollout-*``, a dsh root's ``--<project>--/<id>/session*``."""

from __future__ import annotations

from pathlib import Path

from sesstool.store.generations import generations


def is_session_directory(directory: Path) -> bool:
    """A directory holding canonical generations is one session, not a root."""
    return bool(generations(directory))


def root_logs(directory: Path, patterns: tuple[str, ...]) -> list[Path]:
    """Files under ``directory`` matching any of ``patterns`` (sorted, each once)."""
    found = {p for pattern in patterns for p in directory.glob(pattern) if p.is_file()}
    return sorted(found)
