"""`sesstool migrate PATH`: upgrade to a newer format version as a new generation (spec §1.3)."""

from __future__ import annotations

from functools import partial
from typing import Any

import click

from sesstool.cli.options import (
    LOG_PATH,
    as_encoding,
    examples,
    limits_from,
    run_write,
    verbose_option,
    write_options,
)
from sesstool.core.vocabulary import CURRENT_VERSION


@click.command(
    "migrate",
    epilog=examples(
        "sesstool migrate session.jsonl                   # to the newest version",
        "sesstool migrate --to 2 --dry-run session.jsonl.zstd",
        "sesstool migrate --repair crashed.jsonl",
    ),
)
@click.argument("path", type=LOG_PATH)
@click.option(
    "--to",
    "to",
    type=click.IntRange(0, CURRENT_VERSION),
    default=None,
    help="Target format version (default: the newest for the log's dialect: 4, or 1 for mini-agent logs).",
)
@click.option(
    "--repair",
    "repair_first",
    is_flag=True,
    help="Balance an interrupted log (spec §7 closers) before migrating it.",
)
@write_options(
    "the canonical generation name (session.vN.jsonl[.zstd]) beside the source",
    "the plan",
)
@verbose_option
@click.pass_context
def migrate_cmd(
    ctx: click.Context,
    /,
    path: str,
    to: int,
    output: str | None,
    encoding: str | None,
    repair_first: bool,
    dry_run: bool,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Upgrade a session log through v0→v1→…→v4 into a new generation; the old one is kept.

    Exit 0 (also when already up to date), 3 corrupt, 4 unsupported or a step refuses (named),
    5 live, 6 the target exists or fails verification.
    """
    from sesstool.engine.migrate import MigrateRequest, run_migrate
    from sesstool.render.migrate_view import migrate_doc, render_migrate

    verbose = bool(kwargs.pop("verbose"))
    request = MigrateRequest(
        path, to, output, as_encoding(encoding, output), dry_run, repair_first, limits_from(kwargs)
    )
    run_write(ctx, fmt, run_migrate, request, migrate_doc, partial(render_migrate, verbose=verbose))
