"""Subprocess helper for the publish crash matrix (RELIABILITY.md point 10, test plan item 2).

Usage: ``_crash_publish.py POINT SOURCE TARGET``; wraps one ``os`` function so the process
``os._exit(77)``s at POINT, then copies SOURCE to TARGET through ``publish``.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sesstool.core.errors import WriteRefusedError
from sesstool.store.publish import FileIdentity, Sink, publish

CRASH_EXIT = 77
CHUNK = 64 * 1024

# (name of the os function, which of its calls, "before" or "after" the real call)
POINTS: dict[str, tuple[str, int, str]] = {
    "before-first-write": ("write", 1, "before"),
    "after-first-write": ("write", 1, "after"),
    "before-file-fsync": ("fsync-file", 1, "before"),
    "after-file-fsync": ("fsync-file", 1, "after"),
    "before-link": ("link", 1, "before"),
    "after-link": ("link", 1, "after"),
    "before-dir-fsync": ("fsync-dir", 1, "before"),
    "after-dir-fsync": ("fsync-dir", 1, "after"),
    "before-unlink": ("unlink", 1, "before"),
    "after-unlink": ("unlink", 1, "after"),
    "before-last-dir-fsync": ("fsync-dir", 2, "before"),
    "after-last-dir-fsync": ("fsync-dir", 2, "after"),
}


def _install(point: str) -> None:
    kind, nth, when = POINTS[point]
    calls = {"n": 0}

    def crash_around(real: Callable[..., Any], matches: Callable[..., bool]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not matches(*args):
                return real(*args, **kwargs)
            calls["n"] += 1
            hit = calls["n"] == nth
            if hit and when == "before":
                os._exit(CRASH_EXIT)
            result = real(*args, **kwargs)
            if hit:
                os._exit(CRASH_EXIT)
            return result

        return wrapper

    if kind == "fsync-file" or kind == "fsync-dir":
        want_dir = kind == "fsync-dir"

        def is_kind(fd: int) -> bool:
            return stat.S_ISDIR(os.fstat(fd).st_mode) == want_dir

        os.fsync = crash_around(os.fsync, is_kind)
    else:
        name = kind
        setattr(os, name, crash_around(getattr(os, name), lambda *_: True))


def main(argv: list[str]) -> int:
    point, source, target = argv[1], Path(argv[2]), Path(argv[3])
    identity = FileIdentity.of_path(source)
    expected = source.read_bytes()

    def produce(sink: Sink) -> None:
        with source.open("rb") as f:
            while chunk := f.read(CHUNK):
                sink.write(chunk)

    def verify(tmp: Path) -> None:
        if tmp.read_bytes() != expected:
            raise ValueError("staged bytes differ from the source")

    if point != "none":
        _install(point)
    try:
        result = publish(target, produce, verify=verify, source=source, source_identity=identity)
    except WriteRefusedError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return int(exc.exit_status)
    print(result.sha256)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
