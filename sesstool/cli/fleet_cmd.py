"""`sesstool fleet validate|inspect|migrate|repair URL…`: one command over many logs, on Dask.

Needs the optional extra (`pip install 'sesstool[fleet]'`); without it every fleet command
exits 2 with the install line (docs/fleet.md).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from sesstool.cli.options import (
    LOG_PATH,
    as_encoding,
    consoles,
    examples,
    fixture_option,
    format_options,
    limit_options,
    limits_from,
)
from sesstool.cli.talk import talk_options
from sesstool.core.errors import ExitStatus, UsageError
from sesstool.core.rules import Severity
from sesstool.core.vocabulary import CURRENT_VERSION

F = TypeVar("F", bound=Callable[..., Any])

EXTRA_MODULES = ("dask", "distributed", "fsspec", "pyarrow")


def missing_extra() -> list[str]:
    return [name for name in EXTRA_MODULES if importlib.util.find_spec(name) is None]


@click.group(
    "fleet",
    epilog=examples(
        "sesstool fleet validate ./logs/ --summary rows.jsonl",
        "sesstool fleet repair s3://bucket/sessions/ --summary rows.jsonl --parquet rows.parquet",
        "sesstool fleet migrate --to 4 ./logs/ --summary rows.jsonl --scheduler tcp://10.0.0.5:8786",
    ),
)
def fleet_cmd() -> None:
    """Run validate, inspect, migrate or repair over many logs — local paths or fsspec URLs
    (s3://bucket/prefix/, …) — on Dask: an embedded LocalCluster, or --scheduler ADDRESS.

    One summary row per file (JSONL, optionally Parquet). Exit 0 when every file succeeded,
    1 when one did not (see the rows), 2 usage or the [fleet] extra missing, 6 the object store
    cannot refuse overwrites, 130 interrupted (the summary keeps the finished rows).
    """
    missing = missing_extra()
    if missing:
        raise UsageError(
            f"sesstool fleet needs the fleet extra ({', '.join(missing)} not installed): "
            "pip install 'sesstool[fleet]'"
        )


def _storage_option(value: str) -> tuple[str, object]:
    key, sep, raw = value.partition("=")
    if not sep or not key:
        raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="--storage-option")
    try:
        parsed: object = orjson.loads(raw)
    except orjson.JSONDecodeError:
        parsed = raw  # a plain string
    return key, parsed


def fleet_options(func: F) -> F:
    """Options every fleet command shares: inputs, cluster, summary, resume."""
    decorators = [
        click.argument("urls", nargs=-1, required=True, type=LOG_PATH),
        click.option(
            "--summary",
            required=True,
            help="New JSONL file for the rows (never overwritten); - for standard output.",
        ),
        click.option("--parquet", type=click.Path(dir_okay=False), help="Also write the rows as Parquet."),
        click.option(
            "--resume",
            type=click.Path(dir_okay=False, exists=True),
            help="An earlier summary: files with a row there are skipped (crashed rows are retried) "
            "and its rows are carried into the new summary.",
        ),
        click.option("--scheduler", help="Address of an existing Dask scheduler (default: a LocalCluster)."),
        click.option("--workers", type=click.IntRange(1), help="LocalCluster workers (default: CPU count)."),
        click.option(
            "--threads", type=click.IntRange(1), default=1, show_default=True, help="Threads per worker."
        ),
        click.option("--batch", type=click.IntRange(1), help="Files per Dask task (default: automatic)."),
        click.option(
            "--storage-option",
            "storage_options",
            multiple=True,
            help="fsspec option KEY=VALUE (VALUE as JSON when it parses), e.g. endpoint_url=http://…",
        ),
        click.option(
            "--scratch",
            type=click.Path(file_okay=False),
            help="Directory for local copies of "
            "remote sources (write commands only; default: the system temp).",
        ),
        format_options(
            "text", "json", help="text: the totals for people; json: the totals as one JSON document."
        ),
        limit_options,
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def _run(ctx: click.Context, command: str, kwargs: dict[str, Any], **settings: Any) -> None:
    # imported on call: the fleet modules need the extra
    from sesstool.fleet.entry import FleetOutput, run_fleet
    from sesstool.fleet.run import FleetRequest
    from sesstool.fleet.work import FleetSettings
    from sesstool.render.fleet_view import fleet_doc, fleet_progress, render_fleet

    summary = kwargs.pop("summary")
    parquet = kwargs.pop("parquet")
    if summary == "-" and parquet:
        raise UsageError("--parquet is written from the summary file: give --summary PATH")
    fleet_settings = FleetSettings(
        command,
        limits_from(kwargs),
        storage_options=tuple(_storage_option(v) for v in kwargs.pop("storage_options")),
        scratch=kwargs.pop("scratch"),
        **settings,
    )
    request = FleetRequest(
        tuple(kwargs.pop("urls")),
        fleet_settings,
        scheduler=kwargs.pop("scheduler"),
        workers=kwargs.pop("workers"),
        threads_per_worker=kwargs.pop("threads"),
        batch=kwargs.pop("batch"),
    )
    resume = kwargs.pop("resume")
    output = FleetOutput(
        None if summary == "-" else Path(summary), Path(parquet) if parquet else None,
        Path(resume) if resume else None,
    )  # fmt: skip
    as_json = kwargs.pop("fmt") == "json"
    cons = consoles(ctx)

    def emit(row: dict[str, Any]) -> None:
        sys.stdout.buffer.write(orjson.dumps(row) + b"\n")
        sys.stdout.flush()

    with fleet_progress(cons) as start:
        report = run_fleet(request, output, emit, lambda p: start(len(p.items), p.total_bytes))
    if summary == "-" or as_json:
        stream = sys.stderr if summary == "-" else sys.stdout
        stream.buffer.write(orjson.dumps(fleet_doc(report), option=orjson.OPT_INDENT_2) + b"\n")
        stream.flush()
    else:
        render_fleet(report, cons.out)
    if report.interrupted:
        ctx.exit(ExitStatus.INTERRUPTED)
    if not report.ok:
        ctx.exit(ExitStatus.FINDINGS)


@fleet_cmd.command(
    "validate",
    epilog=examples(
        "sesstool fleet validate ./logs/ --summary rows.jsonl",
        "sesstool fleet validate s3://bucket/logs/ --summary rows.jsonl --fail-on warning",
    ),
)
@fleet_options
@talk_options
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default="error",
    show_default=True,
    help="A file whose findings reach this severity is a failed row.",
)
@fixture_option
@click.pass_context
def fleet_validate(ctx: click.Context, /, fail_on: str, fixture: bool, **kwargs: Any) -> None:
    """`sesstool validate` on every log: a row per file with its verdict and rule ids."""
    _run(ctx, "validate", kwargs, fail_on=Severity.parse(fail_on), fixture=fixture)


@fleet_cmd.command(
    "inspect",
    epilog=examples(
        "sesstool fleet inspect ./logs/ --summary rows.jsonl --parquet rows.parquet",
        "sesstool fleet inspect s3://bucket/logs/ --summary rows.jsonl",
    ),
)
@fleet_options
@talk_options
@fixture_option
@click.pass_context
def fleet_inspect(ctx: click.Context, /, fixture: bool, **kwargs: Any) -> None:
    """`sesstool inspect` on every log: a row per file (verdict, version, counts)."""
    _run(ctx, "inspect", kwargs, fixture=fixture)


@fleet_cmd.command(
    "migrate",
    epilog=examples(
        "sesstool fleet migrate ./logs/ --summary rows.jsonl",
        "sesstool fleet migrate --to 2 --repair s3://bucket/logs/ --summary rows.jsonl",
    ),
)
@fleet_options
@talk_options
@click.option("--to", type=click.IntRange(0, CURRENT_VERSION), default=None, help="Target format version.")
@click.option("--repair", "repair_first", is_flag=True, help="Balance interrupted logs before migrating.")
@click.option("--encoding", type=click.Choice(["raw", "zstd"]), default=None, help="Output encoding.")
@click.pass_context
def fleet_migrate(
    ctx: click.Context, /, to: int | None, repair_first: bool, encoding: str | None, **kwargs: Any
) -> None:
    """`sesstool migrate` on every log: each new generation beside its source, as a new file or
    a new object (conditional create; never an overwrite), verified before it is reported."""
    _run(ctx, "migrate", kwargs, to=to, repair_first=repair_first, encoding=as_encoding(encoding))


@fleet_cmd.command(
    "repair",
    epilog=examples(
        "sesstool fleet repair ./logs/ --summary rows.jsonl",
        "sesstool fleet repair s3://bucket/logs/ --summary rows.jsonl --resume rows.jsonl",
    ),
)
@fleet_options
@talk_options
@click.option("--encoding", type=click.Choice(["raw", "zstd"]), default=None, help="Output encoding.")
@click.pass_context
def fleet_repair(ctx: click.Context, /, encoding: str | None, **kwargs: Any) -> None:
    """`sesstool repair` on every log: `<stem>.repaired.jsonl[.zstd]` beside each interrupted or
    torn source (new file or new object only)."""
    _run(ctx, "repair", kwargs, encoding=as_encoding(encoding))
