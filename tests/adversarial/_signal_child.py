"""Run the CLI in a child and deliver a signal to it at a chosen point (issue 11, item 9):

``python _signal_child.py import:MODULE SIGNAL ARGS...``  — when the CLI first imports MODULE;
``python _signal_child.py fsync SIGNAL ARGS...``   — at the publisher's first fsync of the temp;
``python _signal_child.py fsync+unlink SIGNAL ARGS...`` — that, and the same signal again at the
first unlink (in the middle of the cleanup the first signal started).

Deterministic: the child signals itself at that exact point; no timing is involved.
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
from typing import Any


def main() -> None:
    point, name, *args = sys.argv[1:]
    sig = getattr(signal, name)
    sys.argv = ["sesstool", *args]
    if point.startswith("import:"):
        prefix = point.removeprefix("import:")
        real_import = builtins.__import__
        fired: list[str] = []

        def hook(module: str, *rest: Any, **kw: Any) -> Any:
            if module.startswith(prefix) and not fired:
                fired.append(module)
                os.kill(os.getpid(), sig)
            return real_import(module, *rest, **kw)

        builtins.__import__ = hook  # type: ignore[assignment]
        from sesstool.cli.entry import run

        run()
    else:
        real_fsync = os.fsync
        fired_fsync: list[int] = []

        def fsync(fd: Any) -> None:
            if not fired_fsync:
                fired_fsync.append(fd)
                os.kill(os.getpid(), sig)
            real_fsync(fd)

        os.fsync = fsync
        if point == "fsync+unlink":
            real_unlink = os.unlink
            fired_unlink: list[Any] = []

            def unlink(path: Any, *rest: Any, **kw: Any) -> None:
                if fired_fsync and not fired_unlink:
                    fired_unlink.append(path)
                    os.kill(os.getpid(), sig)
                real_unlink(path, *rest, **kw)

            os.unlink = unlink
        from sesstool.cli.entry import run

        run()


if __name__ == "__main__":
    main()
