"""Two consoles (stdout = data, stderr = talk) and the colour policy.

Colour: ``--color`` wins, then NO_COLOR / FORCE_COLOR, then whether the stream is a terminal.
Every console is created with markup, emoji and highlighting off: log text is never interpreted.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

ColorMode = Literal["auto", "always", "never"]


def wants_color(mode: ColorMode, stream: TextIO) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty()


def make_console(stream: TextIO, mode: ColorMode, width: int | None = None) -> Console:
    from rich.console import Console  # imported on first use: JSON output never needs rich

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit 1 ("findings" for validate); the exit boundary decides instead
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    color = wants_color(mode, stream)
    return _Console(
        file=stream,
        color_system="standard" if color else None,
        # colour forces terminal behaviour (FORCE_COLOR into a pipe); no colour must not turn a
        # terminal into a non-terminal: that would hide the progress bar too (issue 15 item 1)
        force_terminal=True if color else None,
        no_color=not color,
        markup=False,
        emoji=False,
        highlight=False,
        width=width or (None if stream.isatty() else 100),
        # one record per line in pipes (grep-able); on a terminal, wrapped to its width with
        # hanging indents (print_hanging)
        soft_wrap=not stream.isatty(),
        legacy_windows=False,
    )


def print_hanging(console: Console, head: Text, body: Text, indent: int) -> None:
    """``head`` then ``body`` on one line; on a terminal (no soft wrap) ``body`` is wrapped to
    the width with its continuation lines indented by ``indent`` columns, so that a long
    finding or row stays readable in its column."""
    from rich.text import Text

    if console.soft_wrap or console.width <= indent + 20:
        console.print(Text.assemble(head, body))
        return
    lines = body.wrap(console, console.width - indent)
    for i, line in enumerate(lines):
        line.rstrip()
        console.print(Text.assemble(head if i == 0 else Text(" " * indent), line))


class LineBatch:
    """Lines for one console printed a batch at a time: one ``Console.print`` per batch instead
    of one per line, the same bytes (session 27: ``inspect --timeline`` spent most of its CPU in
    rich's per-call work: terminal size, render options, a write and a flush per line).

    ``console.print(a, b, sep="\\n")`` joins ``a`` and ``b`` into one text with a newline
    between them; rich wraps, crops and styles every line of a text on its own, so a batch is
    printed exactly as its lines one by one (``tests/cli/test_timeline_batches.py`` compares them
    with the line-at-a-time printer; a terminal resized mid-stream is measured once a batch, not
    once a line). Each line must be one line (escaped through
    ``safe_line``: no newline in it). At most ``max_lines`` lines or ``max_chars`` characters
    are held: a stream of any length is written as it comes. ``flush`` at the end (and before
    anything else is printed to the console)."""

    def __init__(self, console: Console, max_lines: int = 256, max_chars: int = 1 << 16) -> None:
        self.console = console
        self.max_lines = max_lines
        self.max_chars = max_chars
        self._lines: list[Text] = []
        self._chars = 0

    def add(self, line: Text) -> None:
        self._lines.append(line)
        self._chars += len(line)
        if len(self._lines) >= self.max_lines or self._chars >= self.max_chars:
            self.flush()

    def flush(self) -> None:
        if self._lines:
            lines, self._lines, self._chars = self._lines, [], 0
            self.console.print(*lines, sep="\n")


class Consoles:
    """stdout and stderr consoles, created on first use (rich is not imported for JSON output),
    and how much to say: ``quiet`` (``-q``) and ``progress`` (``--no-progress`` clears it)."""

    def __init__(self, mode: ColorMode, quiet: bool = False, progress: bool = True) -> None:
        self.mode = mode
        self.quiet = quiet
        self.progress = progress
        self._out: Console | None = None
        self._err: Console | None = None

    @classmethod
    def create(cls, mode: ColorMode, quiet: bool = False, progress: bool = True) -> Consoles:
        return cls(mode, quiet, progress)

    @property
    def out(self) -> Console:
        if self._out is None:
            self._out = make_console(sys.stdout, self.mode)
        return self._out

    @property
    def err(self) -> Console:
        if self._err is None:
            self._err = make_console(sys.stderr, self.mode)
        return self._err

    @property
    def interactive_err(self) -> bool:
        return sys.stderr.isatty()

    @property
    def show_progress(self) -> bool:
        """Progress bars go to an interactive stderr only, and never with -q or --no-progress."""
        return self.progress and not self.quiet and self.interactive_err
