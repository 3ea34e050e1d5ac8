"""The human ``inspect`` screen: verdict first, then file, session, counts, open state, repair."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import Any

from rich.console import Console
from rich.text import Text

from sesstool.core.humanize import plural as _plural
from sesstool.core.model import ScanResult, TimelineEntry
from sesstool.core.rules import Severity
from sesstool.dialects import registry
from sesstool.dialects.base import Dialect, Row
from sesstool.engine.inspect import InspectReport
from sesstool.render.console import LineBatch, print_hanging
from sesstool.render.escape import safe_line
from sesstool.store.sidecar import Sidecar

VERDICT_STYLE = {
    "clean": "bold green",
    "interrupted": "bold yellow",
    "torn": "bold yellow",
    "corrupt": "bold red",
    "unsupported": "bold magenta",
}
SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
MAX_FINDINGS_SHOWN = 12


class _Rows:
    """Aligned ``key  value`` rows; values are already escaped log text."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def add_row(self, key: str, value: str | Text) -> None:
        head = Text(f"{key:<11} ", style="bold")
        print_hanging(self.console, head, value if isinstance(value, Text) else Text(value), len(head))


def render_inspect(rep: InspectReport, console: Console) -> None:
    sr = rep.scan
    s = sr.scan
    grid = _Rows(console)
    verdict = Text(s.verdict.upper(), style=VERDICT_STYLE[s.verdict])
    verdict.append(" — " + safe_line(s.verdict_reason), style="")
    if s.verdict_address is not None and s.verdict in ("corrupt", "unsupported", "torn"):
        verdict.append(f" ({safe_line(s.verdict_address.describe())})")
    grid.add_row("verdict", verdict)
    grid.add_row("file", _file_line(rep))
    if sr.live:
        grid.add_row(
            "live",
            Text(
                "the file changed while it was read: this report covers the "
                "stable prefix that existed when it was opened",
                "yellow",
            ),
        )
    for row in sr.dialect.inspect_rows(s):
        grid.add_row(row.label, Text(safe_line(row.text), row.style or ""))
    if rep.sidecar is not None:
        _render_sidecar(rep.sidecar, sr.dialect, grid)
    _render_companions(rep, grid)
    _render_findings(s, console)
    _render_repair(rep, console)
    if rep.replay_timeline is not None:  # --turn / --last narrow it (engine.inspect)
        console.print()
        printer = TimelinePrinter(console)
        try:
            rep.replay_timeline(printer.append)
        finally:  # what was printed before a failure is printed as before
            printer.close()
    elif s.timeline is not None:
        console.print()
        render_timeline(s.timeline, console)


def _render_companions(rep: InspectReport, grid: _Rows) -> None:
    """One row per side file read with the log (a Claude session's subagent transcripts), in
    path order, as the side file's dialect sums it up; one that could not be read says why."""
    label = rep.scan.dialect.companion_label
    for side in rep.companions:
        name = PurePath(side.path).name
        if side.reader is None:
            grid.add_row(label, Text(safe_line(f"{name}: not read ({side.error})"), "red"))
            continue
        rows = side.rows or (Row(label, f"{name}: {side.verdict}"),)
        for row in rows:
            grid.add_row(row.label, Text(safe_line(row.text), row.style or ""))
        if side.sidecar is not None:
            _render_sidecar(side.sidecar, registry.by_name(side.reader), grid)


def _render_sidecar(sidecar: Sidecar, dialect: Dialect, grid: _Rows) -> None:
    """The document that describes a log (a subagent's meta file), summed up by its dialect; one
    that could not be read says why."""
    name = PurePath(sidecar.path).name
    if sidecar.content is None:
        grid.add_row(dialect.sidecar_label, Text(safe_line(f"{name}: not read ({sidecar.error})"), "yellow"))
        return
    grid.add_row(dialect.sidecar_label, Text(safe_line(f"{name}: {dialect.sidecar_text(sidecar.content)}")))


def _file_line(rep: InspectReport) -> Text:
    src, rd = rep.scan.source, rep.scan.read
    kind = "zstd" if src.encoding == "zstd" else "raw JSONL"
    size = f"{src.size} bytes" if src.size is not None else "standard input"
    parts = [f"{safe_line(src.display)}", f"{kind}, {size}", _plural(rd.lines, "line")]
    if src.encoding == "zstd":
        parts.append(f"{_plural(rd.frames, 'complete frame')} → {rd.plaintext_bytes} bytes decoded")
    if rd.torn_frame is not None:
        tf = rd.torn_frame
        parts.append(f"torn frame {tf.index} at file byte {tf.file_offset} ({tf.lines} line(s) recovered)")
    if rd.partial_line is not None:
        parts.append(f"{rd.partial_line.length} torn byte(s) after the last newline")
    return Text(" · ".join(parts))


def _render_findings(s: ScanResult, console: Console) -> None:
    if not s.findings:
        console.print(Text("findings    none", style="green"))
        return
    counts = {sev: s.count(sev) for sev in Severity}
    head = Text("findings    ", style="bold")
    head.append(
        f"{_plural(counts[Severity.ERROR], 'error')} · "
        f"{_plural(counts[Severity.WARNING], 'warning')} · {counts[Severity.INFO]} info"
    )
    console.print(head)
    ordered = sorted(s.findings, key=lambda f: -f.severity)
    for f in ordered[:MAX_FINDINGS_SHOWN]:
        line = Text()
        line.append(f"{f.severity.label:<7}", SEVERITY_STYLE[f.severity])
        line.append(f" {f.rule}", "bold")
        line.append(f"  {safe_line(f.address.describe())}: {safe_line(f.message)}")
        print_hanging(console, Text("  "), line, 4)
    hidden = len(ordered) - MAX_FINDINGS_SHOWN + s.findings_dropped
    if hidden > 0:
        console.print(f"  … and {hidden} more (sesstool validate lists them all)")


def _render_repair(rep: InspectReport, console: Console) -> None:
    s = rep.scan.scan
    if s.verdict in ("corrupt", "unsupported"):
        console.print(Text(f"repair      refused: the log is {s.verdict}", style="red"))
        return
    tail = s.tail
    label = "repair     "

    def row(text: str, style: str = "") -> None:
        print_hanging(console, Text(f"{label} ", style=style), Text(text, style=style), len(label) + 1)

    if rep.reframe:
        row(
            "would write the one-frame zstd log in the harness's framing "
            "(the header line alone in the first frame, then the body)"
        )
        if not rep.closers and tail.kind == "none":
            return
        label = " " * len(label)
    if not rep.closers:
        if tail.kind != "none":
            row(f"would drop the {tail.dropped_bytes}-byte uncommitted tail; every turn is closed")
        else:
            row("nothing to do: the log is balanced", "green")
        return
    drop = ""
    if tail.kind != "none" and tail.dropped_bytes:
        drop = f" after dropping the {tail.dropped_bytes}-byte torn tail"
    row(f"would append {_plural(len(rep.closers), 'closer')}{drop}:", "bold")
    for c in rep.closers:
        print_hanging(console, Text("  "), Text(safe_line(rep.scan.dialect.describe_closer(c))), 12)


def render_timeline(entries: Iterable[TimelineEntry], console: Console) -> None:
    printer = TimelinePrinter(console)
    try:
        for e in entries:
            printer.append(e)
    finally:
        printer.close()


class TimelinePrinter:
    """Prints timeline entries as they arrive (turn → step → entry), holding only the current
    turn and step: a timeline of any length is never kept (issue 11 item 1c). Lines are printed
    a bounded batch at a time (``LineBatch``: the same bytes); ``close`` prints the last batch."""

    def __init__(self, console: Console) -> None:
        self.batch = LineBatch(console)
        self.current_turn: Any = object()
        self.current_step: Any = object()
        console.print(Text("timeline", style="bold"))

    def close(self) -> None:
        self.batch.flush()

    def append(self, e: TimelineEntry) -> None:
        add = self.batch.add
        if e.kind == "turn/start":
            add(Text(f"turn {e.turn}  (seq {e.seq})", style="bold"))
            self.current_turn, self.current_step = e.turn, None
            return
        if e.kind == "turn/end":
            add(Text(f"  end of turn {e.turn}: {safe_line(e.summary)} (seq {e.seq})", style="dim"))
            self.current_turn, self.current_step = None, None
            return
        if e.turn != self.current_turn:
            label = f"turn {e.turn}" if e.turn is not None else "between turns"
            add(Text(label, style="bold"))
            self.current_turn, self.current_step = e.turn, None
        if e.step != self.current_step and e.step is not None:
            add(Text(f"  step {e.step}", style="bold"))
            self.current_step = e.step
        if e.line is not None:  # a line-addressed dialect's row (Claude Code, Codex): line and time
            mark = " (sidechain)" if e.sidechain else ""
            indent = "    "
            if e.agent is not None:  # a subagent's row, merged by time: indented, its file named
                indent, mark = "      ", f"{mark} [{safe_line(e.agent)}]"
            time = safe_line(e.time) if e.time is not None else "-"
            row = f"{indent}line {e.line:<6} {time:<24} {safe_line(e.kind):<34} {safe_line(e.summary)}{mark}"
            add(Text(row.rstrip()))
            return
        mark = " (replacement)" if e.shadowed else ""
        add(Text(f"    seq {e.seq:<6} {safe_line(e.kind):<18} {safe_line(e.summary)}{mark}"))
