"""What the Claude ``derive`` spill tests share (issue 11 item 1): the fixtures, a scan kept for
derive's read-back, every format's bytes, and which fixtures took a streamed path. Each
``tests/claude/test_*_spilled.py`` compares what derive writes with a structure moved to the
spill file against what it writes with everything in memory."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from sesstool.core.options import ScanOptions
from sesstool.engine.derive import DeriveRequest, _derive, scan_to_read_back
from sesstool.engine.scan import ScanReport
from sesstool.render import derive_view
from sesstool.render.derive_markdown import render_markdown
from sesstool.store.plaintext import Readable
from sesstool.store.source import ReadLimits
from tests.conftest import FIXTURES

LOGS = sorted(
    p
    for p in (FIXTURES / "claude").rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts and "lane" not in p.parts
)
IN_MEMORY = 1 << 62  # a threshold nothing reaches
FORMATS = ("jsonl", "json", "markdown", "text")
Scanned = tuple[ScanReport, "Readable | None"]


@contextmanager
def derivable(log: Path) -> Iterator[Scanned | None]:
    """``log`` scanned for derive's read-back, released at the end; None when derive refuses
    it (corrupt or unsupported: refused spilled or not)."""
    options = ScanOptions(collect_messages=True, message_addresses=True)
    report, readable, release = scan_to_read_back(str(log), options, ReadLimits(), None)
    try:
        yield None if report.scan.verdict in ("corrupt", "unsupported") else (report, readable)
    finally:
        release()


def written(report: ScanReport, readable: Readable | None, fmt: str, redact: bool) -> tuple[bytes, Any]:
    """What ``derive --format FMT [--redact]`` prints for the scan, and the redaction counts."""
    derived = _derive(DeriveRequest(report.source.display, redact=redact), report, readable)
    if fmt in ("json", "jsonl"):
        binary = io.BytesIO()
        (derive_view.render_json if fmt == "json" else derive_view.render_jsonl)(derived, binary)
        return binary.getvalue(), derived.redactions
    text = io.StringIO()
    if fmt == "markdown":
        render_markdown(derived, text)
    else:
        derive_view.render_text(derived, Console(file=text, width=100, color_system=None))
    return text.getvalue().encode("utf-8", "surrogatepass"), derived.redactions


def all_written(report: ScanReport, readable: Readable | None) -> list[tuple[bytes, Any]]:
    """Every format, plain and ``--redact``."""
    return [written(report, readable, fmt, redact) for fmt in FORMATS for redact in (False, True)]


def suffixes_streamed(
    logs: Iterable[Path], count: Callable[[], int], write: Callable[[ScanReport, Readable | None], object]
) -> set[str]:
    """The suffixes (``.jsonl``, ``.zstd``) of the ``logs`` whose derive, ``write``n, raised
    ``count()``: the fixtures that took the streamed path a spill test means to cover."""
    streaming = set()
    for log in logs:
        before = count()
        with derivable(log) as scanned:
            if scanned is not None:
                write(*scanned)
        if count() > before:
            streaming.add(log.suffix)
    return streaming
