"""Issue 15 item 2 (part): ``--color``, ``-q/--quiet`` and ``--no-progress`` are accepted on the
group and on every subcommand, and mean the same in both places (the subcommand's win)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


V0 = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"


@pytest.mark.parametrize(
    "command",
    [
        ["inspect"],
        ["validate"],
        ["derive"],
        ["repair", "--dry-run"],
        ["migrate", "--dry-run"],
        ["fork", "--dry-run", "--at", "31", "--id", "child"],
    ],
    ids=lambda c: c[0],
)
def test_json_is_format_json(sesstool: Sesstool, command: list[str], tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    log = "clean-multiturn" if command[0] == "fork" else "crash-dangling-call"
    shutil.copy(FIXTURES / "dsh" / log / "session.jsonl", source)
    as_json = sesstool(*command, "--json", str(source))
    as_format = sesstool(*command, "--format", "json", str(source))
    assert as_json.exit_code == as_format.exit_code and as_json.exit_code in (0, 1), as_json.stderr
    if command[0] == "fork":  # the child's header carries the time of the run: same document shape
        a, b = json.loads(as_json.stdout), json.loads(as_format.stdout)
        assert a.keys() == b.keys() and a["output"] == b["output"]
    else:
        assert as_json.stdout == as_format.stdout
    assert json.loads(as_json.stdout)["schema_version"] == 2
    clash = sesstool(*command, "--json", "--format", "text", str(source))
    assert clash.exit_code == 2 and "contradicts --format text" in clash.stderr


def test_write_commands_take_format_text(sesstool: Sesstool, tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(V0, source)
    result = sesstool("migrate", "--dry-run", "--format", "text", str(source))
    assert result.exit_code == 0 and not result.stdout.lstrip().startswith("{")


def test_report_has_no_json_and_says_where_it_is(sesstool: Sesstool) -> None:
    result = sesstool("report", "--json", CRASHED)
    assert result.exit_code == 2 and "inspect --json" in result.stderr
    assert sesstool("report", "--format", "html", CRASHED).stdout.startswith("<!DOCTYPE html>")


# every document that reports the log's verdict, and where in it (issue 15 item 2)
VERDICT_MEMBERS: dict[str, tuple[list[str], Callable[[Any], Any]]] = {
    "validate": (["validate"], lambda d: d["files"][0]["verdict"]),
    "sarif": (
        ["validate", "--format", "sarif"],
        lambda d: d["runs"][0]["artifacts"][0]["properties"]["verdict"],
    ),
    "derive": (["derive"], lambda d: d["verdict"]),
    "repair": (["repair", "--dry-run"], lambda d: d["source"]["verdict"]),
    "migrate": (["migrate", "--dry-run"], lambda d: d["source"]["verdict"]),
    "redact": (["redact", "--dry-run"], lambda d: d["source"]["verdict"]),
    "fork": (["fork", "--dry-run", "--at", "2"], lambda d: d["source"]["verdict"]),
    "list": (["list", "{dir}"], lambda d: d["sessions"][0]["verdict"]),
    "inspect DIR": (["inspect", "{dir}"], lambda d: d["sessions"][0]["verdict"]),
}
# the commands that refuse the log (no document): a corrupt log is not derived, repaired,
# migrated or forked; an interrupted v0 log has no fork boundary at seq 2
REFUSED = {
    "crash-dangling-call/session.jsonl": {"fork"},
    "seq-gap/session.jsonl": {"derive", "repair", "migrate", "fork"},
    "v4-tiny/session.v4.jsonl": set(),
}


@pytest.mark.parametrize("log", sorted(REFUSED))
def test_one_verdict_shape_in_every_document(sesstool: Sesstool, tmp_path: Path, log: str) -> None:
    source = tmp_path / "root" / "s" / Path(log).name  # root: a directory of logs, listed
    source.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "dsh" / log, source)
    inspected = json.loads(sesstool("inspect", "--json", str(source)).stdout)["verdict"]
    assert set(inspected) == {"verdict", "reason", "address"} and isinstance(inspected["verdict"], str)
    assert inspected["reason"]
    reported = []
    for name, (args, member) in VERDICT_MEMBERS.items():
        argv = [a.replace("{dir}", str(tmp_path / "root")) for a in args]
        result = sesstool(
            *argv, *([] if "{dir}" in args else [str(source)]), *(["--json"] if name != "sarif" else [])
        )
        if name in REFUSED[log]:
            assert result.exit_code in (3, 4) and result.stdout == "", (name, result.stderr)
            continue
        assert result.exit_code in (0, 1), (name, result.stderr)
        assert member(json.loads(result.stdout)) == inspected, name
        reported.append(name)
    assert len(reported) == len(VERDICT_MEMBERS) - len(REFUSED[log])
