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
