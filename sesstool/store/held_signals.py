"""Holding SIGINT/SIGTERM/SIGHUP while the publisher creates, links or removes a name and
records it (issue 15 item 4): store.publish's bookkeeping is never cut half way."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# The signals the CLI turns into exceptions (SIGINT, and SIGTERM/SIGHUP: cli/main.py).
_HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP while a name is created or removed and recorded, and during
    cleanup: a signal there would raise between the system call and the bookkeeping (a temp
    created but not yet known to be ours) or abort the cleanup half way and leave a ``.*.tmp``.
    A signal that arrives meanwhile is handed to the handler it was meant for right after, so
    it still ends the run (issue 15 item 4).

    Python runs signal handlers in the main thread only, so it is the handlers that are held
    (a thread's signal mask would not do: another thread may take the signal); off the main
    thread no handler can interrupt this code and nothing is held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    previous: dict[int, Any] = {}
    for sig in _HELD_SIGNALS:
        if signal.getsignal(sig) is not None:  # None: a handler not set from Python; leave it
            previous[sig] = signal.signal(sig, hold)
    try:
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        if caught:
            handler = previous[caught[0]]
            if callable(handler):
                handler(caught[0], None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), caught[0])
