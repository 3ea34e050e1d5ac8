"""fleet output: the totals of a run (human or JSON) and its progress bar (files and bytes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.documents import SCHEMA_VERSION
from sesstool.fleet.entry import FleetReport
from sesstool.render.console import Consoles
from sesstool.render.escape import safe_line


def fleet_doc(rep: FleetReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": f"fleet {rep.command}",
        "ok": rep.ok,
        "interrupted": rep.interrupted,
        "files": rep.files,
        "processed": rep.processed,
        "carried_over": rep.carried,
        "failed": rep.failed,
        "by_status": dict(rep.by_status),
        "by_verdict": dict(rep.by_verdict),
        "bytes": rep.bytes,
        "seconds": rep.seconds,
        "summary": str(rep.summary) if rep.summary else None,
        "parquet": str(rep.parquet) if rep.parquet else None,
    }


def render_fleet(rep: FleetReport, out: Console) -> None:
    def line(label: str, text: str) -> None:
        out.print(Text(f"{label:<11} ") + Text(safe_line(text)))

    state = (
        "interrupted" if rep.interrupted else ("all succeeded" if rep.ok else f"{rep.failed} not succeeded")
    )
    line("fleet", f"{rep.command}: {rep.files} file(s), {state}")
    line("processed", f"{rep.processed} now, {rep.carried} carried over from --resume")
    line("status", " · ".join(f"{k} {v}" for k, v in rep.by_status) or "-")
    line("verdicts", " · ".join(f"{k} {v}" for k, v in rep.by_verdict) or "-")
    line("bytes", f"{rep.bytes} in {rep.seconds:.2f} s")
    if rep.summary is not None:
        line("summary", str(rep.summary))
    if rep.parquet is not None:
        line("parquet", str(rep.parquet))


@contextmanager
def fleet_progress(consoles: Consoles) -> Iterator[Callable[[int, int], Callable[[int, int], None] | None]]:
    """A factory: given the planned (files, bytes), a callback (files done, bytes done) that
    drives two bars — or None when no bar may be drawn (stderr not a terminal, -q, --no-progress)."""
    if not consoles.show_progress:
        yield lambda files, size: None
        return
    from rich.filesize import decimal
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}", markup=False),  # the consoles interpret no markup
        BarColumn(),
        TextColumn("{task.fields[detail]}", markup=False),
        TimeRemainingColumn(),
        console=consoles.err,
        transient=True,
    ) as bar:

        def start(files: int, size: int) -> Callable[[int, int], None]:
            ft = bar.add_task("files", total=files, detail=f"0/{files}")
            bt = bar.add_task("bytes", total=size, detail=f"0/{decimal(size)}")

            def update(done_files: int, done_bytes: int) -> None:
                bar.update(ft, completed=done_files, detail=f"{done_files}/{files}")
                bar.update(bt, completed=done_bytes, detail=f"{decimal(done_bytes)}/{decimal(size)}")

            return update

        yield start
