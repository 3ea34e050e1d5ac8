"""Issue 11, item 3: file names and log strings reach no terminal raw, in any text format — ESC
sequences, U+2028/U+2029, and lines a CI runner would read as a workflow command (``::error``
after blanks, the legacy ``##[``); the ``github`` format escapes per the workflow-command rules."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.adversarial.test_terminal_safety import UNSAFE, crashed_log
from tests.conftest import FIXTURES, Sesstool

NAME = "x\n::error file=a.py,line=1::pwned\x1b[2J\u2028\u2029##[warning]y"
SEPARATORS = ["\u2028", "\u2029"]

VIEWS = [
    ("inspect",),
    ("inspect", "--timeline"),
    ("validate",),
    ("validate", "--format", "junit"),
    ("derive", "--format", "text"),
    ("repair", "--dry-run"),
    ("repair",),
    ("fork", "--dry-run", "--at", "5"),
    ("migrate", "--dry-run"),
    ("migrate",),
]


def hostile_dir(tmp_path: Path) -> Path:
    directory = tmp_path / NAME
    directory.mkdir()
    shutil.move(crashed_log(tmp_path), directory / "session.jsonl")
    return directory / "session.jsonl"


def assert_safe(text: str, where: object) -> None:
    for ch in [*UNSAFE, *SEPARATORS]:
        assert ch not in text, (where, repr(ch))
    assert "##[" not in text, where
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), (where, line)


@pytest.mark.parametrize("view", VIEWS, ids=[" ".join(v) for v in VIEWS])
def test_hostile_path_and_content_never_reach_the_terminal_raw(
    sesstool: Sesstool, tmp_path: Path, view: tuple[str, ...]
) -> None:
    log = hostile_dir(tmp_path)
    result = sesstool(*view, str(log))
    assert "Traceback" not in result.stderr
    assert_safe(result.stdout, view)
    assert_safe(result.stderr, view)
    assert result.stdout or result.stderr


def test_a_missing_hostile_path_is_escaped_in_the_error(sesstool: Sesstool, tmp_path: Path) -> None:
    # NAME holds '[' (of ESC [ and ##[): to validate, a missing name with a glob character is a
    # glob matching nothing, a usage error (issue 15 item 10, docs/format.md "Commands"); the
    # commands that take one path report it unreadable (3). Without glob characters validate
    # reports the unreadable path among its results (1).
    plain = NAME.replace("\x1b[2J", "\x1b]0;t\x07").replace("##[", "##")
    cases = [("inspect", NAME, 3), ("validate", NAME, 2), ("repair", NAME, 3), ("derive", NAME, 3)]
    cases += [("validate", plain, 1)]
    for command, name, code in cases:
        result = sesstool(command, str(tmp_path / name))
        assert result.exit_code == code, (command, name, result.exit_code)
        assert_safe(result.stdout + result.stderr, command)
    # -o DIR writes the default name into DIR (issue 15): a balanced log writes nothing at all
    result = sesstool("repair", "-o", str(FIXTURES), str(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"))
    assert result.exit_code == 0 and "nothing written" in result.stdout
    directory = tmp_path / NAME
    directory.mkdir()
    result = sesstool("migrate", "-o", str(directory), str(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"))
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert [p.name for p in directory.iterdir()] == ["session.v4.jsonl"]
    assert_safe(result.stdout + result.stderr, "a report quoting a hostile -o directory")


_COMMAND = re.compile(r"^::(error|warning|notice) file=([^,:]*)(?:,line=(\d+))?,title=([^,:]*)::(.*)$")


def _unescape(value: str) -> str:
    return (
        value.replace("%2C", ",")
        .replace("%3A", ":")
        .replace("%0A", "\n")
        .replace("%0D", "\r")
        .replace("%25", "%")
    )


def test_github_format_is_one_well_formed_command_per_line(sesstool: Sesstool, tmp_path: Path) -> None:
    log = hostile_dir(tmp_path)
    # the missing path has no glob character ('[' would make it a glob matching nothing: exit 2)
    # so that it is reported as an unreadable file, one more annotation; '##[' and ESC [ reach
    # the annotations through the hostile directory of the log itself
    missing = tmp_path / ("x\n::error file=a.py,line=1::pwned\x1b]0;t\x07\u2028\u2029##" + "-missing")
    result = sesstool("validate", "--format", "github", str(log), str(missing))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) >= 3
    for line in lines:
        m = _COMMAND.match(line)
        assert m is not None, line
        for ch in [*UNSAFE, *SEPARATORS, "\r"]:
            assert ch not in line
        file = _unescape(m.group(2))
        assert file.startswith(str(tmp_path)) and "\n" not in file  # the name, escaped for a log
        assert "::" not in m.group(4) and "##[" not in m.group(5)
    assert any(_unescape(m.group(2)).endswith("-missing") for m in map(_COMMAND.match, lines) if m)
