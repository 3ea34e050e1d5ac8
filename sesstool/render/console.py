"""Two consoles (stdout = data, stderr = talk) and the colour policy.

Colour: ``--color`` wins, then NO_COLOR / FORCE_COLOR, then whether the stream is a terminal.
Every console is created with markup, emoji and highlighting off: log text is never interpreted.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Literal, TextIO

from rich.console import Console

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
    color = wants_color(mode, stream)
    return Console(
        file=stream,
        color_system="standard" if color else None,
        force_terminal=color,
        no_color=not color,
        markup=False,
        emoji=False,
        highlight=False,
        width=width or (None if stream.isatty() else 100),
        soft_wrap=True,   # one record per line in pipes; a terminal wraps long lines itself
        legacy_windows=False,
    )


@dataclass
class Consoles:
    out: Console
    err: Console
    interactive_err: bool

    @classmethod
    def create(cls, mode: ColorMode) -> Consoles:
        return cls(make_console(sys.stdout, mode), make_console(sys.stderr, mode),
                   sys.stderr.isatty())
