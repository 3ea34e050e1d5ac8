"""The README's `sesstool` transcripts are real: each one is re-run and compared exactly."""

from __future__ import annotations

import re
import shlex

from tests.conftest import ROOT, UPDATE_GOLDENS, Sesstool

BLOCK = re.compile(r"```console\n(.*?)```", re.S)


def _transcripts() -> list[tuple[list[str], str]]:
    text = (ROOT / "README.md").read_text()
    out: list[tuple[list[str], str]] = []
    for block in BLOCK.findall(text):
        lines = block.splitlines(keepends=True)
        assert lines[0].startswith("$ sesstool "), "a console block starts with a command"
        out.append((shlex.split(lines[0][2:])[1:], "".join(lines[1:])))
    return out


def test_readme_has_transcripts() -> None:
    assert len(_transcripts()) >= 3
    text = (ROOT / "README.md").read_text()
    assert "make demo" in text and "make test" in text


def test_readme_transcripts_are_current(sesstool: Sesstool) -> None:
    text = (ROOT / "README.md").read_text()
    for args, expected in _transcripts():
        result = sesstool(*args)
        actual = result.stdout + result.stderr
        if UPDATE_GOLDENS:
            text = text.replace(expected, actual, 1)
            continue
        assert actual == expected, " ".join(args)
    if UPDATE_GOLDENS:
        (ROOT / "README.md").write_text(text)


_ROW = re.compile(r"^\| `sesstool ([a-z]+) ([^`]*)` \|", re.M)


def _synopses() -> list[tuple[str, str]]:
    rows = _ROW.findall((ROOT / "README.md").read_text())
    return [(command, synopsis.replace("\\|", "|")) for command, synopsis in rows if command != "fleet"]


def test_the_commands_table_agrees_with_help(sesstool: Sesstool) -> None:
    """Issue 15 item 2: every option the README's table shows is one the command takes, and the
    formats it lists are exactly the command's ``--format`` choices; each takes ``--json``."""
    synopses = _synopses()
    assert {c for c, _ in synopses} >= {"inspect", "validate", "derive", "repair", "fork", "migrate"}
    for command, synopsis in synopses:
        help_text = sesstool(command, "--help").stdout
        for option in re.findall(r"(?<![\w-])(-o|--[a-z][a-z-]*)", synopsis):
            assert re.search(rf"(?<![\w-]){re.escape(option)}\b", help_text), (command, option)
        shown = re.search(r"--format ([a-z|]+)", synopsis)
        assert shown is not None, f"the README's {command} row shows no --format"
        choices = re.search(r"--format \[([a-z|]+)\]", help_text)
        assert choices is not None and set(choices.group(1).split("|")) == set(shown.group(1).split("|")), (
            command
        )
        assert "--json" in help_text, command
