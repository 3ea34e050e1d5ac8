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
