"""The console-script entry point: until the CLI has imported and installed its own signal
handling, a SIGINT ends the process quietly with status 130 (nothing has been written yet)."""

from __future__ import annotations

import os
import signal
from types import FrameType


def _interrupted_early(signum: int, frame: FrameType | None) -> None:
    os.write(2, b"sesstool: interrupted\n")
    os._exit(130)


def run() -> None:
    signal.signal(signal.SIGINT, _interrupted_early)
    from sesstool.cli.main import main  # click, rich, …: the slow part of start-up

    main()
