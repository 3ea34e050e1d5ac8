"""The options every command takes, on the group and on each subcommand: ``--color``,
``-q/--quiet`` and ``--no-progress`` (issue 15 items 1 and 2). Light: imported at start-up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from sesstool.render.console import Consoles

F = TypeVar("F", bound=Callable[..., Any])

COLOR_HELP = (
    "Colour in human output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), always or never."
)
QUIET_HELP = "Say less: no progress bar (validate: only failing files and findings)."
NO_PROGRESS_HELP = "Draw no progress bar (drawn only on a terminal, for work over half a second)."


def _set_color(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        _consoles(ctx).mode = value  # type: ignore[assignment]  # a click.Choice of ColorMode


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        _consoles(ctx).quiet = True


def _set_no_progress(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        _consoles(ctx).progress = False


def talk_options(func: F) -> F:
    """``--color``, ``-q/--quiet`` and ``--no-progress`` on a subcommand as on the group
    (``sesstool -q validate`` = ``sesstool validate -q``); given here, they win over the group's."""
    func = click.option(
        "--no-progress", is_flag=True, expose_value=False, callback=_set_no_progress, help=NO_PROGRESS_HELP
    )(func)
    func = click.option(
        "-q", "--quiet", is_flag=True, expose_value=False, callback=_set_quiet, help=QUIET_HELP
    )(func)
    func = click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default=None,
        expose_value=False,
        callback=_set_color,
        help=COLOR_HELP + " [default: the group's, auto]",
    )(func)
    return func


def _consoles(ctx: click.Context) -> Consoles:
    obj = ctx.find_object(Consoles)
    assert obj is not None
    return obj
