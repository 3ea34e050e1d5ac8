"""`sesstool derive PATH`: the model-visible messages (deriveMessages) and request envelope."""

from __future__ import annotations

import sys
from typing import Any

import click

from sesstool.cli.options import (
    LOG_PATH,
    consoles,
    examples,
    fixture_option,
    format_options,
    limit_options,
    limits_from,
)
from sesstool.cli.talk import talk_options
from sesstool.core.vocabulary import CURRENT_VERSION


@click.command(
    "derive",
    epilog=examples(
        "sesstool derive session.jsonl.zstd               # messages + request envelope (JSON)",
        "sesstool derive --format markdown session.jsonl",
        "sesstool derive --at 41 --format text session.jsonl",
    ),
)
@click.argument("path", type=LOG_PATH)
@format_options(
    "json",
    "jsonl",
    "text",
    "markdown",
    default="json",
    help="json: messages + request envelope; jsonl: one message per line; text: a readable "
    "transcript; markdown: the transcript as Markdown (tool calls and results in fenced blocks).",
)
@click.option("--redact", is_flag=True, help="Replace credential-shaped values with stable tokens.")
@click.option(
    "--at",
    type=click.IntRange(0),
    default=None,
    help="Derive as of this seq (fold only events up to and including it).",
)
@click.option(
    "--as-version",
    type=click.IntRange(0, CURRENT_VERSION),
    default=None,
    help="Derive what a reader of this newer format version sees: the log is upgraded in "
    "memory through the chain (nothing is written).",
)
@fixture_option
@limit_options
@talk_options
@click.pass_context
def derive_cmd(
    ctx: click.Context,
    /,
    path: str,
    fmt: str,
    at: int | None,
    as_version: int | None,
    redact: bool,
    fixture: bool,
    **kwargs: Any,
) -> None:
    """Print the message list a resumed model would see (spec §5).

    Exit 3 on a corrupt log, 4 on an unsupported one or a file that is not a session log, 2 for
    an --at past the last committed event (as fork); a torn or interrupted log derives its
    committed events.
    """
    # imported on call: `sesstool --help` and other commands stay fast to start
    from sesstool.engine.derive import DeriveRequest, run_derive
    from sesstool.render import derive_view
    from sesstool.render.progress import scan_progress

    request = DeriveRequest(path, at, limits_from(kwargs), fixture, as_version, redact)
    cons = consoles(ctx)
    with scan_progress(cons) as progress:
        report = run_derive(request, progress)
    if fmt == "json":
        derive_view.render_json(report, sys.stdout.buffer)
    elif fmt == "jsonl":
        derive_view.render_jsonl(report, sys.stdout.buffer)
    elif fmt == "markdown":
        from sesstool.render.derive_markdown import render_markdown

        render_markdown(report, sys.stdout)
    else:
        derive_view.render_text(report, cons.out)
    if report.redactions is not None:
        counts = ", ".join(f"{kind} {n}" for kind, n in report.redactions) or "nothing found"
        cons.err.print(f"redacted: {counts}")
    verdict = report.scan.scan.verdict
    if verdict in ("torn", "interrupted"):
        cons.err.print(f"note: the log is {verdict}; derived from its committed events")
