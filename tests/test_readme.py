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


# -- every other command the README shows (issue 15 item 15) ----------------------------------

TEXT_BLOCK = re.compile(r"```text\n(\$ sesstool .*?)```", re.S)
INLINE = re.compile(r"`(sesstool [^`]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)]+)\)")
TABLE_ROW = re.compile(r"^\| `(sesstool [^|`]+(?:\\\|[^|`]+)*)`", re.M)


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
    """Issue 15 items 2 and 15: each option the Commands table shows is one the command's
    --help lists; a row that shows ``--format`` shows exactly the command's choices (every row
    but fleet's shows it), and every command takes ``--json``."""
    rows = TABLE_ROW.findall((ROOT / "README.md").read_text())
    assert len(rows) >= 10
    commands = set()
    for row in rows:
        synopsis = row.replace("\\|", "|")
        words = synopsis.split()
        command = ["fleet", "validate"] if words[1] == "fleet" else [words[1]]
        commands.add(words[1])
        helped = sesstool(*command, "--help")
        assert helped.exit_code == 0, command
        for option in set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", synopsis)):
            assert re.search(rf"(?<![\w-]){re.escape(option)}\b", helped.stdout), (row, option)
        shown = re.search(r"--format ([a-z|]+)", synopsis)
        assert shown is not None or words[1] == "fleet", f"the README's {words[1]} row shows no --format"
        if shown is not None:
            choices = re.search(r"--format \[([a-z|]+)\]", helped.stdout)
            assert choices is not None, command
            assert set(choices.group(1).split("|")) == set(shown.group(1).split("|")), command
        assert "--json" in helped.stdout, command
    assert commands >= {
        "inspect",
        "validate",
        "derive",
        "repair",
        "fork",
        "migrate",
        "report",
        "redact",
        "list",
    }


def test_readme_links_work_on_a_package_index() -> None:
    """Issue 15 item 15: the README is also the package index page, where a relative link
    resolves to nothing, and the project has no public home to link to; so it holds no link,
    no image and no placeholder host, and every document it names by path exists and is
    shipped in the source distribution (MANIFEST.in; docs/format.md "Packaging")."""
    text = (ROOT / "README.md").read_text()
    assert LINK.findall(text) == []
    assert re.findall(r"<(?:a|img)\b", text) == []
    assert "OWNER" not in text and "example.com" not in text
    named = sorted(set(DOC_PATH.findall(text)))
    assert {"docs/format.md", "docs/rules.md", "docs/report.png", "bench/README.md"} <= set(named)
    shipped = _manifest()
    for path in named:
        assert (ROOT / path).is_file(), path
        assert any(path == f or path.startswith(d + "/") for f, d in shipped), f"{path} is not in MANIFEST.in"


DOC_PATH = re.compile(r"(?<![\w./-])((?:docs|bench|fixtures|tests)/[\w./-]+\.(?:md|png))")


def _manifest() -> list[tuple[str, str]]:
    """(file, directory) pairs of MANIFEST.in's ``include`` and ``graft`` lines."""
    pairs: list[tuple[str, str]] = []
    for line in (ROOT / "MANIFEST.in").read_text().splitlines():
        words = line.split()
        if words and words[0] == "include":
            pairs.extend((w, "\0") for w in words[1:])
        elif words and words[0] == "graft":
            pairs.extend(("\0", w) for w in words[1:])
    return pairs
