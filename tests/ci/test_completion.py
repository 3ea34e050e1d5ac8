"""Shell completion (click's own): the scripts docs/ci.md installs, and what they complete."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sesstool.cli.main import COMMANDS
from tests.conftest import ROOT, Run, run_sesstool

SOURCE_MARKERS = {
    "bash": "complete -o nosort -F _sesstool_completion sesstool",
    "zsh": "compdef _sesstool_completion sesstool",
    "fish": 'complete --no-files --command sesstool --arguments "(_sesstool_completion)"',
}


def complete(monkeypatch: pytest.MonkeyPatch, mode: str, words: str, cword: str) -> Run:
    monkeypatch.setenv("_SESSTOOL_COMPLETE", mode)
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", cword)
    return run_sesstool()


def documented_lines() -> dict[str, str]:
    """The install line for each shell from docs/ci.md's sh block, by shell."""
    text = (ROOT / "docs" / "ci.md").read_text()
    lines = [ln for b in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M) for ln in b.splitlines()]
    found: dict[str, str] = {}
    for line in lines:
        m = re.search(r"_SESSTOOL_COMPLETE=(\w+)_source sesstool", line)
        if m:
            found[m.group(1)] = line
    return found


def test_docs_install_a_script_for_each_shell() -> None:
    lines = documented_lines()
    assert set(lines) == {"bash", "zsh", "fish"}
    assert lines["bash"] == 'eval "$(_SESSTOOL_COMPLETE=bash_source sesstool)"'
    assert lines["zsh"] == 'eval "$(_SESSTOOL_COMPLETE=zsh_source sesstool)"'
    assert lines["fish"] == (
        "_SESSTOOL_COMPLETE=fish_source sesstool > ~/.config/fish/completions/sesstool.fish"
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_source_script(monkeypatch: pytest.MonkeyPatch, shell: str) -> None:
    monkeypatch.setenv("_SESSTOOL_COMPLETE", f"{shell}_source")
    run = run_sesstool()
    assert run.exit_code == 0, run.stderr
    assert SOURCE_MARKERS[shell] in run.stdout
    assert "_SESSTOOL_COMPLETE" in run.stdout  # the script calls sesstool back to complete
    assert run.stderr == ""


def test_bash_completes_command(monkeypatch: pytest.MonkeyPatch) -> None:
    run = complete(monkeypatch, "bash_complete", "sesstool va", "1")
    assert run.exit_code == 0
    assert run.stdout.splitlines() == ["plain,validate"]


def test_zsh_completes_command(monkeypatch: pytest.MonkeyPatch) -> None:
    run = complete(monkeypatch, "zsh_complete", "sesstool va", "1")
    assert run.exit_code == 0
    # zsh gets (type, value, help) triples
    assert run.stdout.splitlines()[:2] == ["plain", "validate"]
    assert len(run.stdout.splitlines()) == 3


def test_fish_completes_command(monkeypatch: pytest.MonkeyPatch) -> None:
    run = complete(monkeypatch, "fish_complete", "sesstool va", "va")
    assert run.exit_code == 0
    (line,) = run.stdout.splitlines()
    assert line.startswith("plain,validate\t")


def test_all_commands_and_format_values(monkeypatch: pytest.MonkeyPatch) -> None:
    commands = complete(monkeypatch, "bash_complete", "sesstool ", "1").stdout.splitlines()
    assert commands == [f"plain,{c}" for c in sorted(COMMANDS)]
    formats = complete(monkeypatch, "bash_complete", "sesstool validate --format ", "3").stdout.splitlines()
    assert "plain,sarif" in formats and "plain,github" in formats


def test_documented_bash_line_in_a_real_bash(tmp_path: Path) -> None:
    """The docs' bash line, eval'ed by bash, makes `sesstool va<Tab>` complete to validate."""
    bash = shutil.which("bash")
    exe = Path(sys.executable).parent / "sesstool"
    if bash is None or not exe.exists():
        pytest.skip("needs bash and the installed sesstool script")
    script = "\n".join(
        [
            documented_lines()["bash"],
            "COMP_WORDS=(sesstool va)",
            "COMP_CWORD=1",
            "_sesstool_completion sesstool va sesstool",
            'printf "%s\\n" "${COMPREPLY[@]}"',
        ]
    )
    env = dict(os.environ, PATH=f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("_SESSTOOL_COMPLETE", None)
    done = subprocess.run(
        [bash, "--norc", "--noprofile", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["validate"]


PATH_COMMANDS = [
    ["inspect"],
    ["validate"],
    ["validate", "a.jsonl"],  # validate's second and later paths too
    ["derive"],
    ["repair"],
    ["fork"],
    ["migrate"],
    ["redact"],
    ["report"],
    ["list"],
    ["fleet", "validate"],
]


@pytest.mark.parametrize("before", PATH_COMMANDS, ids=" ".join)
def test_path_arguments_complete_file_names(monkeypatch: pytest.MonkeyPatch, before: list[str]) -> None:
    """Issue 15 item 3: a PATH argument asks the shell for file names (click's ``file`` type:
    the bash script then turns on the shell's own file completion, which also offers
    directories, so session directories complete too)."""
    words = " ".join(["sesstool", *before, "fixtures/ds"])
    run = complete(monkeypatch, "bash_complete", words, str(len(before) + 1))
    assert run.exit_code == 0, run.stderr
    assert run.stdout.splitlines() == ["file,fixtures/ds"]
    zsh = complete(monkeypatch, "zsh_complete", words, str(len(before) + 1))
    assert zsh.stdout.splitlines()[:2] == ["file", "fixtures/ds"]


def test_output_completes_file_names(monkeypatch: pytest.MonkeyPatch) -> None:
    run = complete(monkeypatch, "bash_complete", "sesstool repair x.jsonl -o out", "4")
    assert run.stdout.splitlines() == ["file,out"]


def test_options_still_complete_after_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    run = complete(monkeypatch, "bash_complete", "sesstool inspect x.jsonl --ti", "3")
    assert run.stdout.splitlines() == ["plain,--timeline"]


@pytest.mark.parametrize("value", ["-", "./-"])
def test_dash_is_still_standard_input_and_dot_slash_dash_a_file(value: str, tmp_path: Path) -> None:
    """The completion type passes every value through as given: '-' stays standard input."""
    log = (ROOT / "fixtures" / "dsh" / "v0-tiny" / "session.jsonl").read_bytes()
    if value == "./-":
        (tmp_path / "-").write_bytes(log)
    done = subprocess.run(
        [sys.executable, "-m", "sesstool", "validate", "--json", value],
        cwd=tmp_path,
        input=log if value == "-" else None,
        stdin=None if value == "-" else subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["path"] == value
