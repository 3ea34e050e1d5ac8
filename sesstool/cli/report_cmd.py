"""`sesstool report PATH`: one self-contained HTML page (verdict, findings, timeline, conversation)."""

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
    page_output,
)
from sesstool.cli.talk import talk_options


@click.command(
    "report",
    epilog=examples(
        "sesstool report crashed.jsonl -o report.html",
        "sesstool report --redact session.jsonl.zstd -o report.html",
    ),
)
@click.argument("path", type=LOG_PATH)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    callback=page_output,
    help="Write the page to this file (must not exist; published like every file sesstool "
    "writes). Default (or -): standard output.",
)
@format_options(
    "html",
    default="html",
    help="html: one self-contained page (the only format).",
    no_json="report writes an HTML page; the same facts as JSON: sesstool inspect --json",
)
@click.option("--redact", is_flag=True, help="Replace credential-shaped values with stable tokens.")
@fixture_option
@limit_options
@talk_options
@click.pass_context
def report_cmd(
    ctx: click.Context,
    /,
    path: str,
    output: str | None,
    fmt: str,
    redact: bool,
    fixture: bool,
    **kwargs: Any,
) -> None:
    """Write an HTML report of a log: verdict and findings, a timeline drawn to scale, the
    conversation a resume would see, and what a repair would append.

    The page is one file with no network access (inline style and script, locked by a
    Content-Security-Policy) and a bounded size whatever the log's size.
    """
    from sesstool.engine.report import ReportRequest, run_report
    from sesstool.engine.report_file import write_report
    from sesstool.render.progress import scan_progress
    from sesstool.render.published import already
    from sesstool.render.report_html import render_html

    del fmt  # html, the only format
    cons = consoles(ctx)
    request = ReportRequest(path, limits_from(kwargs), fixture, redact)
    with scan_progress(cons) as progress:
        report = run_report(request, progress)
    page = render_html(report)
    if output is None:
        sys.stdout.buffer.write(page)
    else:
        published = write_report(output, page)
        cons.err.print(
            f"{already(published)}wrote {published.path} ({published.size} bytes, sha256 {published.sha256})"
        )
    if report.redactions:
        counts = ", ".join(f"{kind} {n}" for kind, n in report.redactions)
        cons.err.print(f"redacted: {counts}")
