"""The `sesstool` group and the one exit boundary: errors become messages and exit statuses."""

from __future__ import annotations

import errno
import importlib
import io
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

import click

from sesstool import __version__
from sesstool.cli.talk import COLOR_HELP, NO_PROGRESS_HELP, QUIET_HELP
from sesstool.core.errors import ExitStatus, SesstoolError, WriteRefusedError
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
    "rule": "sesstool.cli.rule_cmd:rule_cmd",
    "validate": "sesstool.cli.validate_cmd:validate_cmd",
}


WRITE_COMMANDS = frozenset({"fork", "migrate", "repair"})
PUBLISHING_COMMANDS = WRITE_COMMANDS | {"redact"}  # take -o PATH


class PipeClosed(BaseException):
    """Standard output's reader went away (EPIPE). Raised past click, which would exit 1."""


class LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as err:
            if err.errno == errno.EPIPE:
                raise PipeClosed from None
            raise

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


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  sesstool inspect session.jsonl.zstd      # what happened, what a repair would add
  sesstool validate --format github fixtures/
  sesstool repair session.jsonl            # a balanced copy beside the log
  sesstool rule seq-gap                    # what a finding means, how to fix it

Exit status: 0 ok, 1 findings (validate), 2 usage, 3 unreadable or corrupt, 4 unsupported,
5 live session, 6 write refused, 130 interrupted. Docs: README.md and docs/.""",
)
@click.version_option(__version__, "-V", "--version", prog_name="sesstool")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help=COLOR_HELP,
)
@click.option("-q", "--quiet", is_flag=True, help=QUIET_HELP)
@click.option("--no-progress", is_flag=True, help=NO_PROGRESS_HELP)
@click.pass_context
def cli(ctx: click.Context, color: ColorMode, quiet: bool, no_progress: bool) -> None:
    """Forensic toolkit for append-only coding-agent session logs: DeepSeek Harness (v0–v4, raw
    JSONL or zstd), the mini-agent layout, Codex CLI rollouts and Claude Code transcripts
    (detected from the first line; --dialect forces one).

    Read commands never modify a log; write commands publish a new file and never overwrite.
    """
    ctx.obj = Consoles.create(color, quiet, not no_progress)


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the program is, so that every ``finally`` and the
    publisher's cleanup run exactly as for SIGINT's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _install_signal_handlers() -> dict[signal.Signals, Any] | None:
    """SIGINT → KeyboardInterrupt, SIGTERM/SIGHUP → Terminated; None off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    return previous


def _restore_signal_handlers(previous: dict[signal.Signals, Any] | None) -> None:
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; the only place that turns exceptions into exit statuses."""
    previous: dict[str, Any] = {}
    try:
        status = _run(argv, previous)
    finally:
        _restore_signal_handlers(previous.get("handlers"))
    sys.exit(int(status or 0))


def _command(argv: list[str] | None) -> str | None:
    args = sys.argv[1:] if argv is None else argv
    return next((a for a in args if a in COMMANDS), None)


def _pipe_closed() -> int:
    """`sesstool inspect big | head -1`: the reader left. End silently with 141 (128 + SIGPIPE),
    the status of a Unix tool killed by SIGPIPE (cat, grep, git): neither success (the output
    was not all read) nor a finding (docs/format.md "Commands")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush goes nowhere
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a file descriptor (tests capture stdout in memory)
    return ExitStatus.BROKEN_PIPE


def _hint(err: SesstoolError, argv: list[str] | None) -> str:
    """What to do next, where the error alone does not say it."""
    if (
        isinstance(err, WriteRefusedError)
        and err.unwritable_directory
        and _command(argv) in PUBLISHING_COMMANDS
    ):
        return "; write elsewhere with -o PATH (a file, or a directory to put the output in)"
    return ""


def _run(argv: list[str] | None, previous: dict[str, Any]) -> int:
    try:
        previous["handlers"] = _install_signal_handlers()  # inside the try: a signal is handled
        status = cli.main(args=argv, prog_name="sesstool", standalone_mode=False)
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at exit
    except Terminated as exc:
        hangup = exc.signum == signal.SIGHUP
        click.echo(f"sesstool: {'hung up' if hangup else 'terminated'}", err=True)
        status = ExitStatus.HANGUP if hangup else ExitStatus.TERMINATED
    except SesstoolError as err:
        click.echo(f"sesstool: {safe_line(str(err))}{_hint(err, argv)}", err=True)
        status = err.exit_status
    except click.exceptions.Exit as exc:
        status = exc.exit_code
    except click.exceptions.Abort:
        click.echo("sesstool: interrupted", err=True)
        status = ExitStatus.INTERRUPTED
    except click.ClickException as exc:
        exc.message = safe_line(exc.message)  # type: ignore[misc]  # may quote a hostile path
        exc.show()
        status = ExitStatus.USAGE if exc.exit_code == 2 else exc.exit_code
    except KeyboardInterrupt:
        click.echo("sesstool: interrupted", err=True)
        status = ExitStatus.INTERRUPTED
    except (PipeClosed, BrokenPipeError):
        status = _pipe_closed()
    except OSError as err:
        if err.errno == errno.EPIPE:
            status = _pipe_closed()
        else:
            # Any other OSError that no layer turned into a SesstoolError: still a clean exit,
            # 6 for a command that writes, 3 for one that reads (DESIGN §6).
            status = ExitStatus.WRITE_REFUSED if _command(argv) in WRITE_COMMANDS else ExitStatus.INPUT
            where = f" ({err.filename})" if err.filename is not None else ""
            reason = err.strerror or str(err)
            click.echo(safe_line(f"sesstool: {reason}{where}"), err=True)
    return int(status or 0)
