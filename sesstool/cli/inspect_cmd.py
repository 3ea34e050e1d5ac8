"""`sesstool inspect PATH`: the one-screen forensic summary."""

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
from sesstool.engine.inspect import DEFAULT_MAX_TIMELINE

if TYPE_CHECKING:
    from sesstool.engine.inspect import InspectReport
    from sesstool.engine.listing import ListReport
    from sesstool.render.inspect_many import InspectWriter


@click.command(
    "inspect",
    epilog=examples(
        "sesstool inspect session.jsonl.zstd",
        "sesstool inspect --timeline --last 20 session.jsonl",
        "sesstool inspect crashed.jsonl ~/.codex           # a root: one row per session",
    ),
)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...", type=LOG_PATH)
@format_options("text", "json", help="text: the one-screen summary; json: the same as one JSON document.")
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
@talk_options
@click.pass_context
def inspect_cmd(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    fmt: str,
    timeline: bool,
    max_timeline: int,
    timeline_turn: int | None,
    timeline_last: int | None,
    fixture: bool,
    **kwargs: Any,
) -> None:
    """Summarise session logs: verdict, open turn, tool calls, and what a repair would add.

    Each PATH is a .jsonl, .jsonl.zst or .jsonl.zstd file (encoding sniffed), a session
    directory (its highest generation), - for standard input, or a directory of sessions: a
    root such as a Claude Code or Codex home, or any directory of logs (searched at most 8
    levels deep and 100,000 entries, as ``list``), listed one row per session (id, dialect,
    version, verdict, size, last time; newest first). Exit 0 whatever the
    verdict; 3 if unreadable, 4 if not a session log. With several PATHs every one is shown
    (--json: one document with a "reports" list) and the exit status is the highest of theirs.
    """
    # imported on call: `sesstool --help` and other commands stay fast to start
    from sesstool.core.errors import SesstoolError
    from sesstool.engine.inspect import InspectRequest, run_inspect_path
    from sesstool.render.inspect_many import InspectWriter
    from sesstool.render.progress import scan_progress

    timeline = timeline or timeline_turn is not None or timeline_last is not None
    cons = consoles(ctx)
    limits = limits_from(kwargs)

    def run(path: str) -> InspectReport | ListReport:
        with scan_progress(cons) as progress:
            request = InspectRequest(
                path, limits, timeline, fixture, max_timeline, timeline_turn, timeline_last
            )
            return run_inspect_path(request, progress)

    writer = InspectWriter(cons, sys.stdout.buffer, fmt == "json", several=len(paths) > 1)
    if len(paths) == 1:
        shown(writer, run(paths[0]))  # an error is the exit boundary's, as for any command
        return
    worst = 0
    for path in paths:
        try:
            outcome = run(path)
        except SesstoolError as err:
            writer.error(path, str(err), int(err.exit_status))
            worst = max(worst, int(err.exit_status))
            continue
        shown(writer, outcome)
    writer.close()
    if worst:
        ctx.exit(worst)


def shown(writer: InspectWriter, outcome: InspectReport | ListReport) -> None:
    """``outcome`` written, then its spools given back (side files, a listing's rows)."""
    try:
        writer.report(outcome)
    finally:
        outcome.close()
