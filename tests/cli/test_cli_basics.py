"""Every command has help; exit statuses and stdout/stderr separation at the boundary."""

from __future__ import annotations

import click
import pytest

from sesstool.cli.main import cli
from tests.conftest import Sesstool

COMMANDS = sorted(cli.list_commands(click.Context(cli)))


def test_commands_exist() -> None:
    assert {"inspect", "validate", "derive"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(sesstool: Sesstool, command: str) -> None:
    result = sesstool(command, "--help")
    assert result.exit_code == 0, result.stderr
    assert "Usage:" in result.stdout
    found = cli.get_command(click.Context(cli), command)
    assert found is not None and found.help, f"{command} lacks a docstring"


def test_usage_error_is_exit_2(sesstool: Sesstool) -> None:
    result = sesstool("inspect")
    assert result.exit_code == 2
    assert "Missing argument" in result.stderr
    assert result.stdout == ""


def test_missing_file_is_exit_3(sesstool: Sesstool) -> None:
    result = sesstool("inspect", "no/such/session.jsonl")
    assert result.exit_code == 3
    assert "no such file" in result.stderr
    assert result.stdout == ""


def test_version(sesstool: Sesstool) -> None:
    result = sesstool("--version")
    assert result.exit_code == 0
    assert "sesstool" in result.stdout
