"""What the spill differential tests compare (the fold's, the mini-agent calls', Codex's waiting
calls'): every byte the CLI prints and writes for one log, under whatever threshold the caller
has just set."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sesstool.core.closer_list import Closers
from tests.conftest import Sesstool

Outputs = list[tuple[int, bytes, bytes]]


def printed_and_written(
    sesstool: Sesstool,
    log: Path,
    views: tuple[tuple[str, ...], ...],
    where: Path,
    *,
    suffix: str,
    child: str = "child",
) -> Outputs:
    """Exit status and standard output of each of ``views`` on a fresh copy of ``log``, then
    those of ``repair`` and ``fork`` with the bytes each wrote (``repaired``/``child`` +
    ``suffix`` in the new directory ``where``, named ``<dir>`` in what they print). The copy is
    fresh each time because a repair takes its directory's lock."""
    source = where.parent / "source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir()
    copy = source / log.name
    shutil.copyfile(log, copy)
    seen = [(r.exit_code, r.stdout_bytes, b"") for r in (sesstool(*view, str(copy)) for view in views)]
    where.mkdir()
    for name, args in (
        ("repaired", ("repair", str(copy))),
        ("child", ("fork", str(copy), "--id", child, "--created-at", "5")),
    ):
        target = where / f"{name}{suffix}"
        result = sesstool(*args, "-o", str(target))
        written = target.read_bytes() if target.exists() else b""
        seen.append((result.exit_code, result.stdout_bytes.replace(str(where).encode(), b"<dir>"), written))
    return seen


def held(value: Any) -> Any:
    """A document with each array made as it is walked (``core.closer_list.Closers``: closers,
    waiting calls) as the list the in-memory code put there, to dump it whole."""
    if isinstance(value, Closers):
        return [held(item) for item in value]
    if isinstance(value, dict):
        return {key: held(item) for key, item in value.items()}
    return value
