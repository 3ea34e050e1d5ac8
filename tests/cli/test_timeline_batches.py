"""`inspect --timeline` prints its lines a batch at a time (``render.console.LineBatch``): the
output is byte for byte what the line-at-a-time printer it replaced wrote — for every log fixture
of every dialect (raw and zstd), with ``--turn`` / ``--last``, piped and on a terminal (colour or
not, several widths), across batch boundaries, with hostile and wide text. The old printer is kept
here, and only here, as the reference."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from sesstool.core.errors import SesstoolError
from sesstool.core.model import TimelineEntry
from sesstool.core.options import ScanOptions
from sesstool.engine.inspect import InspectReport, InspectRequest, run_inspect
from sesstool.engine.scan import scan_source
from sesstool.render import console as console_mod
from sesstool.render import inspect_view
from sesstool.render.console import ColorMode, make_console
from sesstool.render.escape import safe_line
from tests.adversarial.hostile_logs import V4_HEADER, v4_user
from tests.adversarial.test_terminal_safety import EVIL, crashed_log
from tests.conftest import FIXTURES


class _LinePrinter:
    """The printer before batching (one ``Console.print`` per line): the reference."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.current_turn: Any = object()
        self.current_step: Any = object()
        console.print(Text("timeline", style="bold"))

    def close(self) -> None:
        pass

    def append(self, e: TimelineEntry) -> None:
        console = self.console
        if e.kind == "turn/start":
            console.print(Text(f"turn {e.turn}  (seq {e.seq})", style="bold"))
            self.current_turn, self.current_step = e.turn, None
            return
        if e.kind == "turn/end":
            console.print(Text(f"  end of turn {e.turn}: {safe_line(e.summary)} (seq {e.seq})", style="dim"))
            self.current_turn, self.current_step = None, None
            return
        if e.turn != self.current_turn:
            label = f"turn {e.turn}" if e.turn is not None else "between turns"
            console.print(Text(label, style="bold"))
            self.current_turn, self.current_step = e.turn, None
        if e.step != self.current_step and e.step is not None:
            console.print(Text(f"  step {e.step}", style="bold"))
            self.current_step = e.step
        if e.line is not None:  # a Claude Code / Codex row (line-addressed), printed line by line too
            time = safe_line(e.time) if e.time is not None else "-"
            indent = "      " if e.agent is not None else "    "  # a subagent's row, merged (session 30)
            row = f"{indent}line {e.line:<6} {time:<24} {safe_line(e.kind):<34} {safe_line(e.summary)}"
            row += " (sidechain)" if e.sidechain else ""
            row += f" [{safe_line(e.agent)}]" if e.agent is not None else ""
            console.print(Text(row.rstrip()))
            return
        mark = " (replacement)" if e.shadowed else ""
        console.print(f"    seq {e.seq:<6} {safe_line(e.kind):<18} {safe_line(e.summary)}{mark}")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


# (name, environment, colour mode, a terminal?, width): piped as-is, NO_COLOR, FORCE_COLOR into a
# pipe; a colour terminal of several widths (narrower than a row, the usual, wider); a terminal
# with NO_COLOR and with --no-color
SCREENS: list[tuple[str, dict[str, str], ColorMode, bool, int | None]] = [
    ("pipe", {}, "auto", False, None),
    ("pipe-no-color", {"NO_COLOR": "1"}, "auto", False, None),
    ("pipe-force-color", {"FORCE_COLOR": "1"}, "auto", False, None),
    ("tty-24", {}, "always", True, 24),
    ("tty-61", {}, "always", True, 61),
    ("tty-100", {"FORCE_COLOR": "1"}, "auto", True, 100),
    ("tty-203", {}, "always", True, 203),
    ("tty-no-color-47", {"NO_COLOR": "1"}, "auto", True, 47),
    ("tty-never-80", {}, "never", True, 80),
]
VARIANTS = [(None, None), (1, None), (None, 3), (2, 2)]  # (--turn, --last)


def _logs(dialect: str) -> list[Path]:
    root = FIXTURES / dialect
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".zst", ".zstd")))


def _screens(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[str, Callable[[], tuple[Console, io.StringIO]]]]:
    for name, env, mode, tty, width in SCREENS:
        for var in ("NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(var, raising=False)
        for var, value in env.items():
            monkeypatch.setenv(var, value)

        def make(
            mode: ColorMode = mode, tty: bool = tty, width: int | None = width
        ) -> tuple[Console, io.StringIO]:
            stream = _Tty() if tty else io.StringIO()
            return make_console(stream, mode, width), stream

        yield name, make


def _both(
    monkeypatch: pytest.MonkeyPatch,
    draw: Callable[[Console], None],
    make: Callable[[], tuple[Console, io.StringIO]],
) -> tuple[str, list[str]]:
    """The reference output, and the batched output with the default batch and with tiny ones."""
    with monkeypatch.context() as m:
        m.setattr(inspect_view, "TimelinePrinter", _LinePrinter)
        console, out = make()
        draw(console)
        reference = out.getvalue()
    outputs = []
    for defaults in [console_mod.LineBatch.__init__.__defaults__, (1, 1 << 16), (3, 1 << 16), (1000, 40)]:
        with monkeypatch.context() as m:
            m.setattr(console_mod.LineBatch.__init__, "__defaults__", defaults)
            console, out = make()
            draw(console)
            outputs.append(out.getvalue())
    return reference, outputs


def _entries(rep: InspectReport) -> list[TimelineEntry]:
    entries: list[TimelineEntry] = []
    assert rep.replay_timeline is not None
    rep.replay_timeline(entries.append)
    return entries


def _compare(
    monkeypatch: pytest.MonkeyPatch,
    rep: InspectReport,
    where: object,
    entries: list[TimelineEntry],
    timelines: bool = True,
) -> None:
    """``rep`` drawn by both printers on every screen; its timeline (``entries``) is read once
    (the printers are compared, not the second pass) and replayed from a list to each of them.
    ``timelines`` False: the screens of the timeline section alone are left out (the same
    entries were drawn on them before: a zstd fixture's timeline is its raw twin's)."""

    def replay(sink: Callable[[TimelineEntry], None]) -> None:
        for entry in entries:
            sink(entry)

    rep = dataclasses.replace(rep, replay_timeline=replay)
    for screen, make in _screens(monkeypatch):
        # the whole screen on two of them; the timeline section alone (the rest of the screen is
        # printed by the same code in both) on all of them
        whole = screen in ("pipe", "tty-61")
        if not whole and not timelines:
            continue
        draw = (lambda c: inspect_view.render_inspect(rep, c)) if whole else (lambda c: _timeline(rep, c))
        reference, outputs = _both(monkeypatch, draw, make)
        assert "timeline" in reference, (where, screen)
        for out in outputs:
            assert out == reference, (where, screen)


def _timeline(rep: InspectReport, console: Console) -> None:
    """The timeline section of ``render_inspect``, printed by whichever printer is installed."""
    printer = inspect_view.TimelinePrinter(console)
    assert rep.replay_timeline is not None
    try:
        rep.replay_timeline(printer.append)
    finally:
        printer.close()


@pytest.mark.parametrize("dialect", ["dsh", "mini", "codex", "claude"])
def test_every_fixture_prints_the_same_bytes(monkeypatch: pytest.MonkeyPatch, dialect: str) -> None:
    compared = {"raw": 0, "zstd": 0}
    logs = _logs(dialect)
    timelines: list[list[TimelineEntry]] = []  # drawn on every screen, by any log of the dialect
    for log in logs:
        # --turn / --last narrow only the replayed timeline (engine.inspect: the scan, closers,
        # companions and sidecar of a log are the same in every variant), so a variant whose
        # entries equal an earlier variant's draws the same screens from the same input: those
        # are drawn once (a log with one turn or a few entries narrows to the whole timeline)
        drawn: list[list[TimelineEntry]] = []
        for turn, last in VARIANTS:
            request = InspectRequest(str(log), timeline=True, timeline_turn=turn, timeline_last=last)
            try:
                rep = run_inspect(request)
            except SesstoolError:
                assert turn is not None, log  # every fixture is inspected; a --turn may be refused
                continue
            entries = _entries(rep)
            if entries not in drawn:
                drawn.append(entries)
                new = entries not in timelines
                _compare(monkeypatch, rep, (log, turn, last), entries, timelines=new)
                if new:
                    timelines.append(entries)
            compared["zstd" if log.name.endswith(("zst", "zstd")) else "raw"] += 1
        held = scan_source(str(log), ScanOptions(collect_timeline=True)).scan.timeline
        if held is not None:  # the held timeline (render_timeline) too
            _compare_held(monkeypatch, held, log)
    # every dialect has raw and zstd fixtures
    assert compared["raw"] > 0 and compared["zstd"] > 0, compared


def _compare_held(monkeypatch: pytest.MonkeyPatch, held: tuple[TimelineEntry, ...], log: Path) -> None:
    def draw(console: Console) -> None:
        inspect_view.render_timeline(held, console)

    for screen, make in _screens(monkeypatch):
        reference, outputs = _both(monkeypatch, draw, make)
        assert all(out == reference for out in outputs), (log, screen)


def _long_log(path: Path, messages: int) -> Path:
    texts = [
        "plain message {}",
        "wide 漢字かな交じり文 {} ｆｕｌｌｗｉｄｔｈ 🙂🙂 " * 3,
        EVIL + " {} ::error file=a.py::x ##[warning] \u2028\u2029\t\r\n",
        "word " * 60 + "{}",
        "x" * 700 + "{}",
    ]
    with open(path, "wb") as f:
        f.write(V4_HEADER)
        for seq in range(messages):
            f.write(v4_user(seq, texts[seq % len(texts)].replace("{}", str(seq))))
    return path


def test_a_long_hostile_wide_timeline_prints_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Thousands of lines (many default batches, and batches closed by characters), wide
    characters, hostile strings escaped through ``safe_line``, and the crashed hostile v0 log."""
    for log in (_long_log(tmp_path / "long.v4.jsonl", 3000), crashed_log(tmp_path)):
        for turn, last in [(None, None), (None, 1000), (1, 2)]:
            rep = run_inspect(InspectRequest(str(log), timeline=True, timeline_turn=turn, timeline_last=last))
            _compare(monkeypatch, rep, (log.name, turn, last), _entries(rep))


def test_lines_printed_before_a_failure_are_printed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A replay that fails midway leaves the lines it printed, as the line printer did."""
    log = _long_log(tmp_path / "long.v4.jsonl", 700)
    rep = run_inspect(InspectRequest(str(log), timeline=True))

    def failing(sink: Callable[[TimelineEntry], None]) -> None:
        seen = 0

        def take(entry: TimelineEntry) -> None:
            nonlocal seen
            seen += 1
            if seen == 500:
                raise RuntimeError("stop")
            sink(entry)

        assert rep.replay_timeline is not None
        rep.replay_timeline(take)

    broken = InspectReport(rep.scan, rep.closers, rep.repairable, failing)
    for screen, make in _screens(monkeypatch):
        results = []
        for printer in (_LinePrinter, inspect_view.TimelinePrinter):
            with monkeypatch.context() as m:
                m.setattr(inspect_view, "TimelinePrinter", printer)
                console, out = make()
                with pytest.raises(RuntimeError):
                    inspect_view.render_inspect(broken, console)
                results.append(out.getvalue())
        assert results[0] == results[1] and "seq 498" in results[0], screen
