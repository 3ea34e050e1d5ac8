"""The `sesstool` group and the one exit boundary: errors become messages and exit statuses."""

from __future__ import annotations

import errno
import importlib
import os
import sys

import click

from sesstool import __version__
from sesstool.core.errors import ExitStatus, SesstoolError
from sesstool.render.console import ColorMode, Consoles
from sesstool.render.escape import safe_line

# Subcommands, loaded on use: one module per command (DESIGN §2). Only the invoked one imports.
COMMANDS: dict[str, str] = {
    "derive": "sesstool.cli.derive_cmd:derive_cmd",
    "fleet": "sesstool.cli.fleet_cmd:fleet_cmd",
    "fork": "sesstool.cli.fork_cmd:fork_cmd",
    "inspect": "sesstool.cli.inspect_cmd:inspect_cmd",
    "list": "sesstool.cli.list_cmd:list_cmd",
    "migrate": "sesstool.cli.migrate_cmd:migrate_cmd",
    "redact": "sesstool.cli.redact_cmd:redact_cmd",
    "repair": "sesstool.cli.repair_cmd:repair_cmd",
    "report": "sesstool.cli.report_cmd:report_cmd",
    "validate": "sesstool.cli.validate_cmd:validate_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sesstool")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour in human output (NO_COLOR/FORCE_COLOR respected).",
)
@click.pass_context
def cli(ctx: click.Context, color: ColorMode) -> None:
    """Forensic toolkit for append-only coding-agent session logs (DeepSeek Harness v0–v4).

    Read commands never modify a log; write commands publish a new file and never overwrite.
    """
    ctx.obj = Consoles.create(color)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; the only place that turns exceptions into exit statuses."""
    try:
        status = cli.main(args=argv, prog_name="sesstool", standalone_mode=False)
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at exit
    except SesstoolError as err:
        click.echo(f"sesstool: {safe_line(str(err))}", err=True)
        status = err.exit_status
    except click.exceptions.Exit as exc:
        status = exc.exit_code
    except click.exceptions.Abort:
        click.echo("sesstool: interrupted", err=True)
        status = ExitStatus.INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        status = ExitStatus.USAGE if exc.exit_code == 2 else exc.exit_code
    except KeyboardInterrupt:
        click.echo("sesstool: interrupted", err=True)
        status = ExitStatus.INTERRUPTED
    except BrokenPipeError:
        # `sesstool inspect x | head`: the reader left; end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = ExitStatus.OK
    except OSError as err:
        if err.errno == errno.EPIPE:
            status = ExitStatus.OK
        else:
            raise
    sys.exit(int(status or 0))
