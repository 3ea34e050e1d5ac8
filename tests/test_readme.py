"""The README's `sesstool` transcripts are real: each one is re-run and compared exactly."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import ROOT, UPDATE_GOLDENS, Sesstool
from tests.report.planted import planted_log

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


# -- every other command the README shows (issue 15 item 15) ----------------------------------

TEXT_BLOCK = re.compile(r"```text\n(\$ sesstool .*?)```", re.S)
INLINE = re.compile(r"`(sesstool [^`]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)]+)\)")
TABLE_ROW = re.compile(r"^\| `(sesstool [^|`]+(?:\\\|[^|`]+)*)`", re.M)


def _repository() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'^Repository = "([^"]+)"$', text, re.M)
    assert match, "pyproject.toml names no Repository URL"
    return match.group(1)


def test_readme_redact_transcript_is_current(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ```text transcript of `sesstool redact session.jsonl`, on the planted log it shows."""
    (block,) = TEXT_BLOCK.findall((ROOT / "README.md").read_text())
    command, expected = block.split("\n", 1)
    assert command == "$ sesstool redact session.jsonl"
    planted_log(tmp_path / "session.jsonl")
    monkeypatch.chdir(tmp_path)
    result = sesstool("redact", "session.jsonl")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected


def test_readme_inline_commands_run(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every inline `sesstool …` naming a bundled file runs, from a copy of the layout (its
    outputs land in a scratch directory, never in the repository)."""
    commands = [shlex.split(c)[1:] for c in INLINE.findall((ROOT / "README.md").read_text())]
    runnable = [c for c in commands if any((ROOT / a).is_file() for a in c)]
    assert runnable, "no inline command with a bundled file"
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    monkeypatch.chdir(tmp_path)
    for args in runnable:
        result = sesstool(*args)
        assert result.exit_code == 0, (args, result.stderr)


def test_readme_command_table_agrees_with_help(sesstool: Sesstool) -> None:
    """Each option the Commands table shows is one the command's --help lists."""
    rows = TABLE_ROW.findall((ROOT / "README.md").read_text())
    assert len(rows) >= 10
    for row in rows:
        words = row.replace("\\|", "|").split()
        command = [w for w in words[1:3] if re.fullmatch(r"[a-z]+", w)]
        if words[1] == "fleet":
            command = ["fleet", "validate"]
        shown = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", row))
        helped = sesstool(*command, "--help")
        assert helped.exit_code == 0, command
        for option in shown:
            assert re.search(rf"(?<![\w-]){re.escape(option)}\b", helped.stdout), (row, option)


def test_readme_links_work_on_a_package_index() -> None:
    """A package index shows the README without the repository around it: every link is an
    absolute URL, and each into the repository names a file that exists."""
    base = _repository()
    links = LINK.findall((ROOT / "README.md").read_text())
    assert links
    for target in links:
        assert target.startswith("https://"), f"relative link {target!r}"
        for kind in ("blob", "raw"):
            prefix = f"{base}/{kind}/main/"
            if target.startswith(prefix):
                assert (ROOT / target[len(prefix) :]).exists(), target
