"""`sesstool validate PATH...`: every rule over many logs, for people and for CI."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

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
from sesstool.core.errors import ExitStatus
from sesstool.core.rules import Severity

if TYPE_CHECKING:
    from sesstool.engine.validate import Validated
    from sesstool.render.console import Consoles


@click.command(
    "validate",
    epilog=examples(
        "sesstool validate fixtures/                       # every log below it",
        "sesstool validate --format github --fail-on warning a.jsonl b.jsonl.zstd",
        "sesstool validate --format sarif fixtures/",
    ),
)
@click.argument("paths", nargs=-1, required=True, type=LOG_PATH)
@format_options(
    "text",
    "json",
    "github",
    "junit",
    "sarif",
    help="text: per file and finding; json: one JSON document; github: workflow annotations; "
    "junit: JUnit XML; sarif: SARIF 2.1.0.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default="error",
    show_default=True,
    help="Exit 1 when a finding is at or above this severity.",
)
@click.option(
    "--assume-version",
    type=click.IntRange(0, 4),
    default=0,
    show_default=True,
    help="--fixture: format version of logs without a header.",
)
@click.option(
    "--max-findings",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Findings kept per file (the rest are counted).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Also report objects that repeat a key (slower: every record is decoded twice).",
)
@fixture_option
@limit_options
@talk_options
@click.pass_context
def validate_cmd(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    fmt: str,
    fail_on: str,
    assume_version: int,
    max_findings: int,
    strict: bool,
    fixture: bool,
    **kwargs: Any,
) -> None:
    """Check session logs against every rule (docs/rules.md).

    PATHS are files, directories (every *.jsonl, *.jsonl.zst and *.jsonl.zstd below them, in
    any case) or globs. Exit 0 when no finding reaches --fail-on, 1 when one does (or a file
    is unreadable), 2 when a directory holds no log or a glob matches nothing.
    """
    # imported on call: `sesstool --help` and other commands stay fast to start
    from sesstool.engine.validate import ValidateRequest, check_all
    from sesstool.render.progress import scan_progress

    request = ValidateRequest(
        paths,
        Severity.parse(fail_on),
        limits_from(kwargs),
        fixture,
        assume_version,
        max_findings,
        strict,
    )
    cons = consoles(ctx)
    with scan_progress(cons) as progress:
        report = check_all(request, progress)  # each file's result spooled (issue 11 item 1)
    try:
        _render(report, fmt, cons)
    finally:
        report.close()
    if report.failed:
        ctx.exit(ExitStatus.FINDINGS)


def _render(report: Validated, fmt: str, cons: Consoles) -> None:
    from sesstool.render.jsonout import write_validate_json

    if fmt == "json":
        write_validate_json(report, sys.stdout.buffer)
    else:
        from sesstool.render import validate_formats  # rich: only for the human formats

        if fmt == "github":
            validate_formats.render_github(report, sys.stdout)
        elif fmt == "junit":
            validate_formats.render_junit(report, sys.stdout)
        elif fmt == "sarif":
            validate_formats.render_sarif(report, sys.stdout.buffer)
        else:
            validate_formats.render_text(report, cons.out, cons.quiet)
