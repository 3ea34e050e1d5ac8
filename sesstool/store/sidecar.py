"""A log's sidecar: a small JSON document beside it that describes it (Claude Code: a subagent's
``agent-<id>.meta.json``, spec agent-formats §1.2, docs/format.md "Subagent metadata"). Which
name is a log's sidecar is the dialect's decision (``Dialect.sidecar_name``); reading it is here.

A sidecar is evidence, never trusted: it is opened without following a link and without waiting
on a FIFO, read only when it is a regular file of at most ``MAX_SIDECAR_BYTES``, and decoded as
one JSON object. Anything else is an ``error`` that says why, never an exception: a damaged
sidecar must not stop the log it describes from being read.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sesstool.core.jsonline import LineError, loads

MAX_SIDECAR_BYTES = 64 * 1024

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True, slots=True)
class Sidecar:
    """``content`` (the object as written) when it could be read, else ``error`` (why not)."""

    path: str
    content: dict[str, Any] | None
    error: str | None


def read_sidecar(path: Path, limit: int = MAX_SIDECAR_BYTES) -> Sidecar | None:
    """The sidecar at ``path``; None when there is no file of that name."""
    name = str(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            return Sidecar(name, None, "a symbolic link (not followed)")
        return Sidecar(name, None, err.strerror or str(err))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Sidecar(name, None, "not a regular file")
        if info.st_size > limit:
            return Sidecar(name, None, f"{info.st_size} bytes, over the limit of {limit}")
        data = os.read(fd, limit + 1)
    except OSError as err:
        return Sidecar(name, None, err.strerror or str(err))
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew after fstat
        return Sidecar(name, None, f"more than {limit} bytes")
    try:
        content = loads(data)
    except LineError as err:
        return Sidecar(name, None, f"not JSON: {err.message}")
    if type(content) is not dict:
        return Sidecar(name, None, f"not a JSON object (a {type(content).__name__})")
    return Sidecar(name, content, None)
