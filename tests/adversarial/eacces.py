"""Reproduce, at the system-call boundary, what an unprivileged user meets under a directory
without search permission: EACCES for every path below it, and for listing or opening it."""

from __future__ import annotations

import builtins
import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest


def deny_below(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    root = os.path.abspath(directory)

    def denied(path: Any, itself: bool) -> bool:
        if isinstance(path, int) or path is None:
            return False
        text = os.path.abspath(os.fsdecode(os.fspath(path)))
        return text.startswith(root + os.sep) or (itself and text == root)

    def wrap(func: Any, itself: bool) -> Any:
        def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("dir_fd") is None and denied(path, itself):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return func(path, *args, **kwargs)

        return guarded

    for name, itself in (
        ("stat", False),
        ("lstat", False),
        ("open", True),
        ("listdir", True),
        ("scandir", True),
    ):
        monkeypatch.setattr(os, name, wrap(getattr(os, name), itself))
    monkeypatch.setattr(builtins, "open", wrap(builtins.open, True))
    monkeypatch.setattr(io, "open", wrap(io.open, True))
