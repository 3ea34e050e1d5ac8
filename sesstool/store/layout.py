"""The dsh root layout (spec §2.2): ``<root>/--<project>--/<encoded-id>/<generation>``.

Session ids become directory names through ``encode_session_id``: every UTF-16 code unit in
``[A-Za-z0-9._-]`` is kept, every other unit is written ``~XXXX`` (uppercase hex), and the two
names a file system gives a meaning (``.``, ``..``) are encoded whole. An id can therefore never
name a parent directory, an absolute path, a NUL or a newline: whatever a log or ``--id`` says,
the result is exactly one plain path component.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from sesstool.store.generations import parse_generation_name

_LITERAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_ENCODED_ID = re.compile(r"(?:[A-Za-z0-9._-]|~[0-9A-F]{4})+")
NO_CWD_DIR = "_no-cwd"


def encode_session_id(session_id: str) -> str:
    """The directory name of a session id (§2.2). Raises ValueError for the empty id.

    Works on UTF-16 code units, as the harness does: a character outside the BMP becomes two
    ``~XXXX`` units (its surrogate pair), and a lone surrogate (valid in a log written by Node)
    becomes one.
    """
    if session_id == "":
        raise ValueError("an empty session id has no directory name (§2.2)")
    if session_id == ".":
        return "~002E"
    if session_id == "..":
        return "~002E~002E"
    units = session_id.encode("utf-16-be", "surrogatepass")
    out: list[str] = []
    for i in range(0, len(units), 2):
        unit = (units[i] << 8) | units[i + 1]
        ch = chr(unit)
        out.append(ch if ch in _LITERAL else f"~{unit:04X}")
    return "".join(out)


def is_encoded_session_id(name: str) -> bool:
    """Could ``name`` be what ``encode_session_id`` produced (one safe path component)?"""
    return name not in (".", "..") and _ENCODED_ID.fullmatch(name) is not None


def is_project_dir_name(name: str) -> bool:
    """``--<slug>--`` (a normalised cwd, never empty) or ``_no-cwd`` (§2.2)."""
    return name == NO_CWD_DIR or (len(name) > 4 and name.startswith("--") and name.endswith("--"))


def dsh_session_dir(path: Path) -> tuple[Path, Path] | None:
    """``(root, project_dir)`` when ``path`` is a generation file laid out as
    ``<root>/--<project>--/<encoded-id>/<generation>``; None for any other path.

    Only the shape is checked here: whether the session directory belongs to the log's header
    id is the caller's question (``encode_session_id(header id) == path.parent.name``).
    """
    # Keep the caller's (relative) form when it already shows the two parent directories.
    full = path if len(path.parts) >= 3 and ".." not in path.parts else Path(os.path.abspath(path))
    if parse_generation_name(full.name) is None:
        return None
    session_dir = full.parent
    project_dir = session_dir.parent
    if not is_encoded_session_id(session_dir.name) or not is_project_dir_name(project_dir.name):
        return None
    if project_dir.parent == project_dir:  # a project directory must sit inside a root
        return None
    return project_dir.parent, project_dir
