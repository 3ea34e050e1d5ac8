"""`sesstool list ROOT`: the sessions a root directory holds (a Claude Code home, …)."""

from __future__ import annotations

import sys
from typing import Any

import click

from sesstool.cli.options import LOG_PATH, consoles, examples, format_options, limit_options, limits_from
from sesstool.cli.talk import talk_options


@click.command(
    "list",
    epilog=examples(
        "sesstool list ~/.claude",
        "sesstool list --json ~/.claude",
    ),
)
@click.argument("root", type=LOG_PATH)
@format_options("text", "json", help="text: one line per log; json: one JSON document.")
@limit_options
@talk_options
@click.pass_context
def list_cmd(ctx: click.Context, /, root: str, fmt: str, **kwargs: Any) -> None:
    """List the session logs under ROOT: id, dialect, version, verdict, size, last time, cwd.

    ROOT is a directory in a dialect's root layout — a Claude Code home (``~/.claude``:
    ``projects/<project>/<session-id>.jsonl``, subagent files included), a Codex home
    (``~/.codex``: ``sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]``), a dsh root — or any directory
    of logs (every *.jsonl[.zst|.zstd] file below it, any case, searched at most 8 directory
    levels deep and 100,000 entries; what was not searched is said), or a session directory
    (each generation). The same view as ``inspect ROOT``; newest first. Exit 0 whatever the
    verdicts; 3 if ROOT holds no session log.
    """
    from sesstool.engine.listing import ListRequest, run_list
    from sesstool.render.list_view import render_list, write_list_json
    from sesstool.render.progress import scan_progress

    cons = consoles(ctx)
    with scan_progress(cons) as progress:
        report = run_list(ListRequest(root, limits_from(kwargs)), progress)
    try:
        if fmt == "json":
            write_list_json(report, sys.stdout.buffer)
            sys.stdout.buffer.write(b"\n")
        else:
            render_list(report, cons.out)
    finally:
        report.close()
