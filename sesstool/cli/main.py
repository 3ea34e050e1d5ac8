"""The `sesstool` group and the one exit boundary: errors become messages and exit statuses."""

from __future__ import annotations

import errno
import os
import sys

import click

from sesstool import __version__
from sesstool.cli.derive_cmd import derive_cmd
from sesstool.cli.inspect_cmd import inspect_cmd
from sesstool.cli.validate_cmd import validate_cmd
from sesstool.core.errors import ExitStatus, SesstoolError
from sesstool.render.console import ColorMode, Consoles
from sesstool.render.escape import safe_line


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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


cli.add_command(inspect_cmd)
cli.add_command(validate_cmd)
cli.add_command(derive_cmd)


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
