"""A progress bar for long scans, shown only on an interactive stderr."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sesstool.engine.scan import Progress as ProgressFn
from sesstool.render.console import Consoles


@contextmanager
def scan_progress(consoles: Consoles, label: str) -> Iterator[ProgressFn | None]:
    if not consoles.interactive_err:
        yield None
        return
    # imported here: rich.progress is only needed on an interactive terminal
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    # imported here: rich.progress is only needed on an interactive terminal

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=consoles.err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield update
