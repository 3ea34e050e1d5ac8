"""`sesstool redact PATH`: publish a copy of a log with credential-shaped values replaced."""

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
    "redact",
    epilog=examples(
        "sesstool redact session.jsonl",
        "sesstool redact --dry-run --json session.jsonl.zstd",
        "sesstool redact -o shareable.jsonl session.jsonl",
    ),
)
@click.argument("path", type=LOG_PATH)
@write_options("<stem>.redacted.jsonl[.zstd] beside the source", "what would be replaced")
@verbose_option
@click.pass_context
def redact_cmd(
    ctx: click.Context,
    /,
    path: str,
    output: str | None,
    encoding: str | None,
    dry_run: bool,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Write a copy of a session log with every credential-shaped value (API keys, tokens,
    passwords in URLs, private keys, …) replaced by a token; the source is never touched.

    The same value becomes the same token throughout the file, records without a secret are
    copied byte for byte, and the copy is read back before it is published: it must read as the
    same log (same verdict and findings). Exit 0, 3 unreadable, 5 live, 6 write refused.
    """
    from sesstool.engine.redact import RedactRequest, run_redact
    from sesstool.render.redact_view import redact_doc, render_redact

    verbose = bool(kwargs.pop("verbose"))
    request = RedactRequest(path, output, as_encoding(encoding, output), dry_run, limits_from(kwargs))
    run_write(ctx, fmt, run_redact, request, redact_doc, partial(render_redact, verbose=verbose))
