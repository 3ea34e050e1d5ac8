"""`sesstool list ROOT`: the sessions a root directory holds (a Claude Code home, …)."""

from __future__ import annotations

import sys
from typing import Any

import click

from sesstool.cli.options import consoles, examples, limit_options, limits_from


@click.command(
    "list",
    epilog=examples(
        "sesstool list ~/.claude",
        "sesstool list --json ~/.claude",
    ),
)
@click.argument("root")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as one JSON document.")
@limit_options
@click.pass_context
def list_cmd(ctx: click.Context, /, root: str, as_json: bool, **kwargs: Any) -> None:
    """List the session logs under ROOT: id, cwd, version, verdict, size, last time.

    ROOT is a directory in a dialect's root layout, e.g. a Claude Code home (``~/.claude``,
    sessions in ``projects/<project>/<session-id>.jsonl``, subagent files included). Exit 0
    whatever the verdicts; 3 if ROOT holds no session log.
    """
    from sesstool.core.jsonline import dumps_pretty
    from sesstool.engine.listing import ListRequest, run_list
    from sesstool.render.list_view import list_doc, render_list

    report = run_list(ListRequest(root, limits_from(kwargs)))
    if as_json:
        sys.stdout.buffer.write(dumps_pretty(list_doc(report)) + b"\n")
    else:
        render_list(report, consoles(ctx).out)
