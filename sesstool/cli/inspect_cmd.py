"""`sesstool inspect PATH`: the one-screen forensic summary."""

from __future__ import annotations

import sys
from typing import Any

import click

from sesstool.cli.options import consoles, examples, fixture_option, limit_options, limits_from
from sesstool.engine.inspect import DEFAULT_MAX_TIMELINE


@click.command(
    "inspect",
    epilog=examples(
        "sesstool inspect session.jsonl.zstd",
        "sesstool inspect --timeline --last 20 session.jsonl",
        "sesstool inspect ~/.codex                         # a root: one line per log",
    ),
)
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON document.")
@click.option("--timeline", is_flag=True, help="Add the turn → step → message timeline.")
@click.option(
    "--max-timeline",
    type=click.IntRange(1),
    default=DEFAULT_MAX_TIMELINE,
    show_default=True,
    help="Timeline entries kept from standard input or a FIFO (read once); a file's timeline "
    "is streamed by a second pass, unbounded.",
)
@click.option(
    "--turn",
    "timeline_turn",
    type=click.IntRange(1),
    default=None,
    help="Timeline of turn N only (implies --timeline).",
)
@click.option(
    "--last",
    "timeline_last",
    type=click.IntRange(1),
    default=None,
    help="Only the last N timeline entries (implies --timeline; with --turn, of that turn).",
)
@fixture_option
@limit_options
@click.pass_context
def inspect_cmd(
    ctx: click.Context,
    /,
    path: str,
    as_json: bool,
    timeline: bool,
    max_timeline: int,
    timeline_turn: int | None,
    timeline_last: int | None,
    fixture: bool,
    **kwargs: Any,
) -> None:
    """Summarise one session log: verdict, open turn, tool calls, and what a repair would add.

    PATH is a .jsonl or .jsonl.zstd file (encoding sniffed), a session directory (its highest
    generation), a root directory such as a Codex home (every log in it, one line each) or -
    for standard input. Exit 0 whatever the verdict; 3 if unreadable.
    """
    # imported on call: `sesstool --help` and other commands stay fast to start
    from sesstool.engine.inspect import InspectRequest, run_inspect
    from sesstool.engine.roots import find_root, run_root
    from sesstool.render.jsonout import write_inspect_json
    from sesstool.render.progress import scan_progress

    timeline = timeline or timeline_turn is not None or timeline_last is not None
    request = InspectRequest(
        path, limits_from(kwargs), timeline, fixture, max_timeline, timeline_turn, timeline_last
    )
    cons = consoles(ctx)
    root = find_root(path)
    if root is not None:
        with scan_progress(cons, "inspecting") as progress:
            listing = run_root(path, root, request.limits, progress)
        if as_json:
            from sesstool.core.jsonline import dumps_pretty
            from sesstool.render.jsonout import root_doc

            sys.stdout.buffer.write(dumps_pretty(root_doc(listing)) + b"\n")
        else:
            from sesstool.render.inspect_view import render_root

            render_root(listing, cons.out)
        return
    with scan_progress(cons, "inspecting") as progress:
        report = run_inspect(request, progress)
    if as_json:
        write_inspect_json(report, sys.stdout.buffer)
    else:
        from sesstool.render.inspect_view import render_inspect  # rich: human view only

        render_inspect(report, cons.out)
