"""Issue 15 item 2 (part): ``--color``, ``-q/--quiet`` and ``--no-progress`` are accepted on the
group and on every subcommand, and mean the same in both places (the subcommand's win)."""

from __future__ import annotations

import pytest

from sesstool.cli.main import COMMANDS
from tests.conftest import FIXTURES, Sesstool

CRASHED = str(FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl")
FLEET = ["fleet validate", "fleet inspect", "fleet migrate", "fleet repair"]
ESC = "\x1b["


@pytest.mark.parametrize("command", [*sorted(c for c in COMMANDS if c != "fleet"), *FLEET])
def test_every_subcommand_lists_the_talk_options(sesstool: Sesstool, command: str) -> None:
    result = sesstool(*command.split(), "--help")
    assert result.exit_code == 0, result.stderr
    for option in ("--color [auto|always|never]", "-q, --quiet", "--no-progress"):
        assert option in result.stdout, (command, option)


def test_the_group_lists_them_too(sesstool: Sesstool) -> None:
    text = sesstool("--help").stdout
    for option in ("--color [auto|always|never]", "-q, --quiet", "--no-progress"):
        assert option in text


@pytest.mark.parametrize(
    ("args", "coloured"),
    [
        (["inspect", "--color", "always", CRASHED], True),
        (["--color", "always", "inspect", CRASHED], True),
        (["--color", "always", "inspect", "--color", "never", CRASHED], False),
        (["--color", "never", "inspect", "--color", "always", CRASHED], True),
        (["inspect", CRASHED], False),  # not a terminal
    ],
)
def test_color_on_either_side(sesstool: Sesstool, args: list[str], coloured: bool) -> None:
    result = sesstool(*args)
    assert result.exit_code == 0, result.stderr
    assert (ESC in result.stdout) is coloured
    assert "verdict" in result.stdout


@pytest.mark.parametrize("where", ["group", "subcommand"])
def test_quiet_on_either_side_shows_only_failing_files(sesstool: Sesstool, where: str) -> None:
    clean = str(FIXTURES / "dsh" / "v4-tiny" / "session.v4.jsonl")
    gap = str(FIXTURES / "dsh" / "seq-gap" / "session.jsonl")
    args = ["-q", "validate", clean, gap] if where == "group" else ["validate", "-q", clean, gap]
    result = sesstool(*args)
    assert result.exit_code == 1
    assert gap in result.stdout and f"{clean}: clean" not in result.stdout
    loud = sesstool("validate", clean, gap)
    assert f"{clean}: clean" in loud.stdout


@pytest.mark.parametrize("command", [["inspect"], ["derive"], ["repair", "--dry-run"], ["validate"]])
def test_no_progress_and_quiet_change_nothing_on_stdout(sesstool: Sesstool, command: list[str]) -> None:
    plain = sesstool(*command, CRASHED)
    for flag in ("--no-progress", "-q"):
        if command == ["validate"] and flag == "-q":
            continue  # validate -q also trims the text report (tested above)
        other = sesstool(*command, flag, CRASHED)
        assert (other.exit_code, other.stdout) == (plain.exit_code, plain.stdout), flag
