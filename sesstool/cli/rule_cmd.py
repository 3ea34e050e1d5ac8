"""`sesstool rule ID`: what a rule means and how to fix a finding of it (like `ruff rule`)."""

from __future__ import annotations

import sys

import click

from sesstool.cli.options import consoles, examples, format_options
from sesstool.cli.talk import talk_options


@click.command(
    "rule",
    epilog=examples("sesstool rule seq-gap", "sesstool rule zstd-single-frame --json", "sesstool rule --all"),
)
@click.argument("rule_id", metavar="ID", required=False)
@click.option(
    "--all", "list_all", is_flag=True, help="List every rule of every dialect: id, severity, title."
)
@format_options("text", "json", help="text: the explanation; json: the same as one JSON document.")
@talk_options
@click.pass_context
def rule_cmd(ctx: click.Context, /, rule_id: str | None, list_all: bool, fmt: str) -> None:
    """Explain the rule ID that a finding names (`validate` prints it in brackets): what it
    means, its severity and spec section, the verdict it implies, and what to do.

    Every dialect's rules are known (DeepSeek Harness, mini-agent, Codex, Claude Code). Exit 2
    for an unknown ID (the closest ids are suggested).
    """
    from sesstool.core.errors import UsageError
    from sesstool.core.jsonline import dumps_pretty
    from sesstool.engine.explain import all_rules, explain
    from sesstool.render.rule_view import render_rule, render_rules, rule_doc

    if list_all == (rule_id is not None):
        raise UsageError("give one rule ID, or --all for the list")
    if rule_id is None:
        rules = all_rules()
        if fmt == "json":
            docs = [{"rule": r.id, "severity": r.severity.label, "title": r.title} for r in rules]
            sys.stdout.buffer.write(dumps_pretty(docs) + b"\n")
        else:
            render_rules(rules, consoles(ctx).out)
        return
    explanation = explain(rule_id)
    if fmt == "json":
        sys.stdout.buffer.write(dumps_pretty(rule_doc(explanation)) + b"\n")
    else:
        render_rule(explanation, consoles(ctx).out)
