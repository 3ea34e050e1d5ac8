"""Walk a dialect's root layout (``Dialect.layout.patterns``): the logs a root directory holds."""

from __future__ import annotations

from pathlib import Path


def root_logs(root: Path, patterns: tuple[str, ...]) -> list[Path]:
    """Every file under ``root`` matching one of ``patterns`` (relative globs), sorted, no links
    followed out of the root."""
    found: set[Path] = set()
    for pattern in patterns:
        for path in root.glob(pattern):
            if path.is_file() and not path.is_symlink():
                found.add(path)
    return sorted(found)


def is_session_directory(directory: Path) -> bool:
    """A directory holding canonical generations is one session, not a root."""
    from sesstool.store.generations import generations

    return bool(generations(directory))
