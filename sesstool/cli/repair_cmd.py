"""`sesstool repair PATH`: balance an interrupted or torn log into a new file (spec §7)."""

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


@click.command(
    "repair",
    epilog=examples(
        "sesstool repair crashed.jsonl                    # writes crashed.repaired.jsonl",
        "sesstool repair --salvage -o kept.jsonl corrupt.jsonl",
        "sesstool repair --relink --dry-run session-id.jsonl  # Claude: broken parentUuid links",
    ),
)
@click.argument("path", type=LOG_PATH)
@click.option(
    "--salvage",
    is_flag=True,
    help="Repair a corrupt log anyway: keep the prefix before the first defect and "
    "save every dropped byte in a sidecar file with a report.",
)
@click.option(
    "--relink",
    is_flag=True,
    help="Also re-point broken parent links (Claude Code: a parentUuid naming no entry in the "
    "file) to the graph entry before each in file order, or null when there is none. An edit, "
    "not an append, so only when asked: every changed line (line, uuid, field, old and new "
    "value, reason) is listed in a manifest, <output>.relink.json, beside the output.",
)
@write_options(
    "<stem>.repaired.jsonl[.zstd] beside the source",
    "the plan",
)
@verbose_option
@click.pass_context
def repair_cmd(
    ctx: click.Context,
    /,
    path: str,
    output: str | None,
    encoding: str | None,
    dry_run: bool,
    salvage: bool,
    relink: bool,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Write a balanced copy of an interrupted or torn session log; the source is never touched.

    Appends exactly the closers of spec §7.1 (results for pending tool calls, step/end,
    turn/end {interrupted}) after the committed prefix, which is copied byte for byte.
    A parent link that names no entry cannot be mended by appending: it is reported, and edited
    only with --relink (the source still untouched; a manifest records each change).
    Exit 0 (also when already balanced), 3 corrupt, 4 unsupported, 5 live, 6 write refused.
    """
    # imported on call: other commands stay fast to start
    from sesstool.engine.repair import RepairRequest, run_repair
    from sesstool.render.repair_view import render_repair, repair_doc

    verbose = bool(kwargs.pop("verbose"))
    encoded = as_encoding(encoding, output)
    request = RepairRequest(path, output, encoded, dry_run, salvage, limits_from(kwargs), relink)
    run_write(ctx, fmt, run_repair, request, repair_doc, partial(render_repair, verbose=verbose))
