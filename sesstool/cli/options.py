"""Shared options as decorators, and the context object every command receives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from sesstool.core.jsonline import ORJSON_MAX_DEPTH
from sesstool.core.physical import Encoding
from sesstool.dialects import registry
from sesstool.render.console import Consoles
from sesstool.store.lines import DEFAULT_MAX_LINE
from sesstool.store.source import DEFAULT_MAX_DECOMPRESSED, DEFAULT_MAX_WINDOW, ReadLimits

F = TypeVar("F", bound=Callable[..., Any])

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


class ByteSize(click.ParamType):  # type: ignore[type-arg]
    """A byte count: 65536, 64K, 64M, 2G."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("IB").removesuffix("B")
        unit = text[-1:] if text[-1:] in _UNITS and text[-1:] else ""
        number = text[:-1] if unit else text
        try:
            size = int(number) * _UNITS[unit]
        except ValueError:
            self.fail(f"{value!r} is not a size like 65536, 64K, 64M or 2G", param, ctx)
        if size <= 0:
            self.fail("size must be positive", param, ctx)
        return size


def human_size(size: int) -> str:
    """The shortest spelling ByteSize reads back as ``size``: 67108864 → 64M."""
    for unit in ("T", "G", "M", "K"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)


class DialectChoice(click.Choice):  # type: ignore[type-arg]
    """``auto`` or a registered dialect's name, read from the registry when used (a dialect added
    to ``dialects.registry.DIALECTS`` is accepted without touching the CLI)."""

    def __init__(self) -> None:
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return (registry.AUTO, *registry.names())

    @choices.setter
    def choices(self, value: Any) -> None:
        pass


def examples(*lines: str) -> str:
    """A command's ``--help`` epilog: its example command lines, kept unwrapped (tests run each
    through the command's own parser)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def limit_options(func: F) -> F:
    """Read settings: the budgets of DESIGN §7 (line, decompressed bytes, zstd window, nesting) and
    the dialect."""
    func = click.option(
        "--max-line-bytes",
        type=ByteSize(),
        default=human_size(DEFAULT_MAX_LINE),  # shown plainly in --help: [default: 64M]
        show_default=True,
        help="Longest record accepted.",
    )(func)
    func = click.option(
        "--max-decompressed",
        type=ByteSize(),
        default=human_size(DEFAULT_MAX_DECOMPRESSED),  # shown plainly in --help: [default: 64G]
        show_default=True,
        help="Refuse zstd input that expands past this many bytes.",
    )(func)
    func = click.option(
        "--max-window",
        type=ByteSize(),
        default=human_size(DEFAULT_MAX_WINDOW),  # shown plainly in --help: [default: 32M]
        show_default=True,
        help="Largest zstd window accepted.",
    )(func)
    func = click.option(
        "--max-depth",
        type=click.IntRange(1, ORJSON_MAX_DEPTH),
        default=ORJSON_MAX_DEPTH,
        show_default=True,
        help="Deepest JSON nesting accepted in a record (the decoder's own limit is 1024).",
    )(func)
    func = click.option(
        "--dialect",
        type=DialectChoice(),
        default="auto",
        show_default=True,
        help="Log dialect (auto: detected from the first line).",
    )(func)
    return func


def limits_from(kwargs: dict[str, Any]) -> ReadLimits:
    return ReadLimits(
        max_line=kwargs.pop("max_line_bytes"),
        max_decompressed=kwargs.pop("max_decompressed"),
        max_window=kwargs.pop("max_window"),
        max_depth=kwargs.pop("max_depth"),
        dialect=kwargs.pop("dialect"),
    )


def write_options(default_output: str, dry_run_shows: str = "the plan") -> Callable[[F], F]:
    """``-o/--output``, ``--encoding``, ``--dry-run`` and ``--json``: shared by every command that
    publishes a file (DESIGN §3 "Where write commands put their output")."""

    def decorate(func: F) -> F:
        func = click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON document.")(
            func
        )
        func = click.option("--dry-run", is_flag=True, help=f"Print {dry_run_shows}; write nothing.")(func)
        func = click.option(
            "--encoding",
            type=click.Choice(["raw", "zstd"]),
            default=None,
            help="Output encoding (default: the source's).",
        )(func)
        func = click.option(
            "-o",
            "--output",
            type=click.Path(),
            default=None,
            callback=_output_path,
            help=f"Output file (must not exist), or an existing directory to write the default "
            f"name into. Default: {default_output}.",
        )(func)
        return func

    return decorate


def _output_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-o ''`` is not "the default name" and ``-o -`` is not a file named ``-``: both are usage
    errors (docs/format.md "Output paths")."""
    if value is None:
        return None
    if value == "":
        raise click.BadParameter("must name a file (an empty path is not the default name)")
    if value == "-":
        raise click.BadParameter(
            "'-' (standard output) is not a publication target: a write command publishes a "
            "file atomically; name it (./- for a file called '-')"
        )
    return value


def as_encoding(value: str | None) -> Encoding | None:
    return "zstd" if value == "zstd" else "raw" if value == "raw" else None


def verbose_option(func: F) -> F:
    """``-v``: also the routine notes (e.g. a plain file has no session.lock protocol)."""
    return click.option(
        "-v", "--verbose", is_flag=True, help="Also print routine notes (e.g. that no session lock applies)."
    )(func)


def fixture_option(func: F) -> F:
    return click.option(
        "--fixture",
        is_flag=True,
        help="Test-fixture mode: seq/time may be omitted (implied by position) and the header is optional.",
    )(func)


def consoles(ctx: click.Context) -> Consoles:
    obj = ctx.find_object(Consoles)
    assert obj is not None
    return obj
