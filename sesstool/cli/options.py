"""Shared options as decorators, and the context object every command receives."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click
from click.core import ParameterSource
from click.shell_completion import CompletionItem

from sesstool.cli.talk import talk_options
from sesstool.core.jsonline import ORJSON_MAX_DEPTH
from sesstool.core.physical import Encoding
from sesstool.dialects import registry
from sesstool.render.console import Consoles
from sesstool.store.lines import DEFAULT_MAX_LINE
from sesstool.store.paths import is_directory
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


class LogPath(click.ParamType):  # type: ignore[type-arg]
    """A log, session directory or root as given: the shell completes file names (issue 15
    item 3), nothing is checked here — the engine says what is wrong with a path, with its own
    exit status — and ``-`` (standard input) or a URL passes through unchanged."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        return [CompletionItem(incomplete, type="file")]


LOG_PATH = LogPath()


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


def format_options(
    *formats: str, default: str = "text", help: str = "", no_json: str | None = None
) -> Callable[[F], F]:
    """``--format`` with the formats that make sense for the command and ``--json``, the alias of
    ``--format json`` (issue 15 item 2); the command receives the chosen format as ``fmt``. A
    command without a JSON output names, in ``no_json``, where that JSON is instead."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            as_json = kwargs.pop("as_json", False)
            fmt = kwargs.pop("fmt")
            given = click.get_current_context().get_parameter_source("fmt") is not ParameterSource.DEFAULT
            if as_json and no_json is not None:
                raise click.UsageError(f"--json: {no_json}")
            if as_json and given and fmt != "json":
                raise click.UsageError(f"--json means --format json; it contradicts --format {fmt}")
            kwargs["fmt"] = "json" if as_json else fmt
            return func(*args, **kwargs)

        alias = "Same as --format json." if no_json is None else f"Not available: {no_json}."
        decorated = click.option("--json", "as_json", is_flag=True, help=alias)(command)
        decorated = click.option(
            "--format",
            "fmt",
            type=click.Choice(formats),
            default=default,
            show_default=True,
            help=help or "Output format.",
        )(decorated)
        return cast(F, decorated)

    return decorate


def write_options(default_output: str, dry_run_shows: str = "the plan") -> Callable[[F], F]:
    """Every option of a command that publishes a file (DESIGN §3 "Where write commands put
    their output"): ``-o/--output``, ``--encoding``, ``--dry-run``, ``--format text|json``
    (``--json``), then the read limits and the talk options (``--color``, ``-q``,
    ``--no-progress``)."""

    def decorate(func: F) -> F:
        func = limit_options(talk_options(func))
        func = format_options("text", "json", help="text: a summary for people; json: one JSON document.")(
            func
        )
        func = click.option("--dry-run", is_flag=True, help=f"Print {dry_run_shows}; write nothing.")(func)
        func = click.option(
            "--encoding",
            type=click.Choice(["raw", "zstd"]),
            default=None,
            help="Output encoding (default: what -o's suffix says, .zst/.zstd or .jsonl, else the source's).",
        )(func)
        func = click.option(
            "-o",
            "--output",
            type=click.Path(),
            default=None,
            callback=_output_path,
            help=f"Output file (must not exist, or already hold exactly what this run writes), or "
            f"an existing directory to write the default name into. Default: {default_output}. "
            "Neither -o nor PATH may be '-': a write command publishes a file beside a source "
            "file it checks is cold and unchanged.",
        )(func)
        return func

    return decorate


def _output_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-o ''`` is not "the default name", ``-o -`` is not a file named ``-``, and ``-o DIR/``
    names a directory, never a file called ``DIR``: each is a usage error unless it names what
    it means (docs/format.md "Output paths")."""
    if value is None:
        return None
    if value == "":
        raise click.BadParameter("must name a file (an empty path is not the default name)")
    if value == "-":
        raise click.BadParameter(
            "'-' (standard output) is not a publication target: a write command publishes a "
            "file atomically; name it (./- for a file called '-')"
        )
    _no_missing_directory(value)
    return value


def _no_missing_directory(value: str) -> None:
    if value.endswith(("/", os.sep)) and not is_directory(value):
        raise click.BadParameter(
            f"{value!r} names a directory, and there is none: create it first, or name a file"
        )


def page_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``report -o``: ``-`` is standard output (the default, never a file named ``-``: ./- is
    one), ``''`` and ``DIR/`` are usage errors (docs/format.md "Output paths")."""
    if value is None or value == "-":
        return None
    if value == "":
        raise click.BadParameter("must name a file (an empty path is not standard output)")
    _no_missing_directory(value)
    return value


def suffix_encoding(output: str | None) -> Encoding | None:
    """The encoding an output name promises: ``.zst``/``.zstd`` zstd, ``.jsonl`` raw (any case);
    None for any other name (the source's encoding then, or ``--encoding``)."""
    if output is None or is_directory(output):
        return None  # -o DIR: the default name inside it keeps the source's encoding
    name = output.lower()
    if name.endswith((".zst", ".zstd")):
        return "zstd"
    return "raw" if name.endswith(".jsonl") else None


def as_encoding(value: str | None, output: str | None = None) -> Encoding | None:
    """The output encoding: ``--encoding``, else what ``-o``'s suffix says, else None (the
    source's). ``--encoding`` contradicting the suffix is a usage error (exit 2): a file named
    ``.zstd`` always holds zstd and a ``.jsonl`` always plain JSONL (docs/format.md)."""
    given: Encoding | None = "zstd" if value == "zstd" else "raw" if value == "raw" else None
    implied = suffix_encoding(output)
    if given is not None and implied is not None and given != implied:
        raise click.UsageError(
            f"--encoding {given} contradicts the output name {output!r} ({implied}); "
            "rename the output or drop --encoding"
        )
    return given or implied


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


R = TypeVar("R")


def run_write(
    ctx: click.Context,
    fmt: str,
    run: Callable[[Any, Any], R],
    request: Any,
    doc: Callable[[R], Any],
    show: Callable[[R, Any], None],
) -> None:
    """A write command's one run: ``run(request, progress)`` under the progress bars, then the
    report as one JSON document (``--format json``) or ``show(report, console)`` for people."""
    # imported on call: other commands stay fast to start
    import sys

    from sesstool.render.json_stream import pretty_pieces
    from sesstool.render.progress import scan_progress

    cons = consoles(ctx)
    with scan_progress(cons) as progress:
        report = run(request, progress)
    if fmt == "json":
        for piece in pretty_pieces(doc(report)):  # closers streamed into place (issue 11 item 1)
            sys.stdout.buffer.write(piece)
        sys.stdout.buffer.write(b"\n")
    else:
        show(report, cons.out)
