"""`sesstool fork PATH`: a child session from a prefix of a log (spec §8)."""

from __future__ import annotations

from typing import Any

import click

from sesstool.cli.options import (
    LOG_PATH,
    as_encoding,
    examples,
    limits_from,
    run_write,
    write_options,
)
from sesstool.core.header import MAX_SAFE


@click.command(
    "fork",
    epilog=examples(
        "sesstool fork session.jsonl                      # from the end of the last completed turn",
        "sesstool fork --at 17 --id child-1 session.jsonl.zstd",
        "sesstool fork --dry-run --json session.jsonl",
    ),
)
@click.argument("path", type=LOG_PATH)
@click.option(
    "--at",
    type=click.IntRange(0),
    default=None,
    help="Inclusive boundary seq. Default: the end of the last completed turn.",
)
@click.option("--id", "child_id", default=None, help="The child's session id (default: a fresh unique one).")
@click.option(
    "--created-at",
    type=click.IntRange(0, MAX_SAFE),
    default=None,
    help="The child's createdAt in epoch ms (default: now; set it for reproducible output).",
)
@write_options(
    "its own session directory in a dsh root, else <child-id>.jsonl[.zstd] beside the source",
    "the plan (boundary, header, marker, closers)",
)
@click.pass_context
def fork_cmd(
    ctx: click.Context,
    /,
    path: str,
    at: int | None,
    child_id: str | None,
    output: str | None,
    encoding: str | None,
    created_at: int | None,
    dry_run: bool,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Fork a child session from PATH: the events up to the boundary copied byte for byte, then
    session/end-seed, with a header naming PATH's session as parent (spec §8).

    PATH is a session file or directory. Before v4 a boundary inside an open turn is refused
    (exit 4); v4 closes the open turn with `forked` closers. Exit 2 for a boundary past the end,
    3 for a corrupt log, 6 when the target exists.
    """
    # imported on call: `sesstool --help` and other commands stay fast to start
    from sesstool.engine.fork import ForkRequest, run_fork
    from sesstool.render.fork_view import fork_doc, render_fork

    request = ForkRequest(
        path=path,
        at=at,
        child_id=child_id,
        output=output,
        encoding=as_encoding(encoding, output),
        created_at=created_at,
        dry_run=dry_run,
        limits=limits_from(kwargs),
    )
    run_write(ctx, fmt, run_fork, request, fork_doc, render_fork)
