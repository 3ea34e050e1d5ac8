"""Progress on an interactive stderr: one bar per phase (scan, write, verify), named, drawn only
for a phase that has run longer than half a second, narrow enough for a 60-column terminal.

Hidden off a terminal, with ``-q`` and with ``--no-progress``; ``--color never`` / ``NO_COLOR``
only take the colour away. The bars are transient: they are erased when the command ends, so
the screen keeps only the command's own output (docs/format.md "Progress").
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sesstool.engine.scan import Progress as ProgressFn
from sesstool.render.console import Consoles

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

# Work that ends sooner draws nothing at all (no flash on a 5 kB file).
SHOW_AFTER_SECONDS = 0.5
_LABEL_WIDTH = 6  # "verify", the longest phase name
_BAR_WIDTH = 16


class _Phases:
    """Receives ``(phase, done, total)`` from the engine; a new phase name completes the bar of
    the one before and starts its own, which appears once the phase has lasted long enough."""

    def __init__(self, consoles: Consoles) -> None:
        self._consoles = consoles
        self._bars: Progress | None = None
        self._phase: str | None = None
        self._task: TaskID | None = None
        self._started = 0.0
        self._shown = False
        self._state: tuple[int, int | None] = (0, None)

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if phase != self._phase:
            self._finish_phase()
            self._phase, self._task, self._started, self._shown = phase, None, now, False
        self._state = (done, total)
        if not self._shown and now - self._started >= SHOW_AFTER_SECONDS:
            self._show()
        if self._shown and self._bars is not None and self._task is not None:
            self._bars.update(self._task, completed=done, total=total)

    def _show(self) -> None:
        bars = self._bars if self._bars is not None else self._start()
        done, total = self._state
        self._task = bars.add_task(self._phase or "", total=total, completed=done)
        self._shown = True

    def _start(self) -> Progress:
        # imported here: rich.progress is only needed when a bar is drawn
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bars = Progress(
            TextColumn(f"{{task.description:<{_LABEL_WIDTH}}}", markup=False),
            BarColumn(bar_width=_BAR_WIDTH),
            TaskProgressColumn("{task.percentage:>3.0f}%", text_format_no_percentage="", markup=False),
            DownloadColumn(),
            TimeRemainingColumn(compact=True),
            console=self._consoles.err,
            transient=True,
            expand=False,
        )
        self._bars.start()
        return self._bars

    def _finish_phase(self) -> None:
        """The phase that ends shows as complete while the next one runs."""
        if self._shown and self._bars is not None and self._task is not None:
            done, total = self._state
            self._bars.update(self._task, completed=total or done, total=total or done)

    def close(self) -> None:
        if self._bars is not None:
            self._bars.stop()


@contextmanager
def scan_progress(consoles: Consoles) -> Iterator[ProgressFn | None]:
    """The engine's progress callback, or None when no bar may be drawn."""
    if not consoles.show_progress:
        yield None
        return
    phases = _Phases(consoles)
    try:
        yield phases
    finally:
        phases.close()
