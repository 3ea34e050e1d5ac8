"""The command line as people expect it: the small items of issue 15 (item 15), each through the
real ``main`` (in process, or as a process where a terminal, a pipe or a directory matters)."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pty
import re
import shlex
import shutil
import struct
import subprocess
import sys
import termios
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest

from sesstool import __version__
from sesstool.cli.main import COMMANDS, cli
from sesstool.core.rules import RULES
from sesstool.dialects import registry
from tests.conftest import FIXTURES, ROOT, Sesstool

CRASH = "fixtures/dsh/crash-dangling-call/session.jsonl"
CLEAN = "fixtures/dsh/clean-multiturn/session.jsonl"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    env.update(NO_COLOR="1", **extra)
    return env


# -- --help: examples, dialects, version, defaults --------------------------------------------


def _command(path: list[str]) -> click.Command:
    ctx = click.Context(cli)
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(ctx, name)
        assert found is not None, name
        command = found
    return command


def _examples(help_text: str) -> list[list[str]]:
    block = help_text.split("Examples:\n", 1)[1].split("\n\n", 1)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


HELP_PATHS = [[name] for name in sorted(COMMANDS)] + [
    ["fleet", sub] for sub in ("validate", "inspect", "migrate", "repair")
]


def _parses(path: list[str], args: list[str], where: Path) -> None:
    """``args`` parsed exactly as the command parses them (every option exists, every value is
    accepted), in a directory where the files the example names exist."""
    for word in args:
        if re.fullmatch(r"[\w.-]+\.(jsonl|zst|zstd|parquet|html)", word):
            (where / word).touch()
    _command(path).make_context("sesstool", args)


@pytest.mark.parametrize("path", HELP_PATHS, ids=" ".join)
def test_every_command_help_has_examples_its_parser_accepts(
    sesstool: Sesstool, path: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = sesstool(*path, "--help")
    assert result.exit_code == 0
    examples = _examples(result.stdout)
    assert 2 <= len(examples) <= 3, result.stdout
    monkeypatch.chdir(tmp_path)
    for words in examples:
        assert words[: 1 + len(path)] == ["sesstool", *path], words
        _parses(path, words[1 + len(path) :], tmp_path)


def test_top_level_help_names_every_dialect_and_shows_examples(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = sesstool("--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    for dialect in registry.DIALECTS:
        assert dialect.title.split()[0] in text, dialect.name
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    for words in _examples(result.stdout):
        _parses([words[1]], words[2:], tmp_path)


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(sesstool: Sesstool, flag: str) -> None:
    result = sesstool(flag)
    assert (result.exit_code, result.stdout) == (0, f"sesstool, version {__version__}\n")


@pytest.mark.parametrize("path", HELP_PATHS, ids=" ".join)
def test_defaults_are_shown_plainly(sesstool: Sesstool, path: list[str]) -> None:
    text = sesstool(*path, "--help").stdout
    assert not re.search(r"default:\s+\(", text), text  # not "[default: (64G)]"
    if path == ["inspect"]:
        flat = " ".join(text.split())
        for shown in ("[default: 64M]", "[default: 64G]", "[default: 32M]"):
            assert shown in flat


# -- sesstool rule ------------------------------------------------------------------------------


def test_rule_explains_a_rule(sesstool: Sesstool) -> None:
    result = sesstool("rule", "zstd-single-frame")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "zstd-single-frame"
    assert "severity  warning" in lines and "spec      §9.2" in lines
    assert "verdict   — (the verdict stays clean)" in lines
    assert any(
        line.startswith("  `sesstool repair PATH` writes a copy in the harness's framing") for line in lines
    )
    assert lines[-1] == "Examples of a log that breaks it: docs/rules.md#zstd-single-frame"


def test_rule_relational_rules_say_they_are_errors_in_v4(sesstool: Sesstool) -> None:
    out = sesstool("rule", "tool-result-unmatched").stdout
    assert "severity  warning (error in a v4 log: the v4 reader enforces it)" in out
    assert "  In a v4 log, where it is an error:" in out


def test_every_rule_of_every_dialect_is_explained(sesstool: Sesstool) -> None:
    listing = json.loads(sesstool("rule", "--all", "--json").stdout)
    ids = [row["rule"] for row in listing]
    assert ids == sorted(RULES) and len(ids) >= 100
    assert any(i.startswith("claude-") for i in ids) and any(i.startswith("codex-") for i in ids)
    for rule_id in ids:
        result = sesstool("rule", "--json", rule_id)
        assert result.exit_code == 0, rule_id
        doc = json.loads(result.stdout)
        assert doc["rule"] == rule_id and doc["fix"] and doc["title"] == RULES[rule_id].title
        assert doc["verdict"] in ("corrupt", "unsupported", "torn", "interrupted", "none")


def test_rule_unknown_id_is_a_usage_error_with_suggestions(sesstool: Sesstool) -> None:
    result = sesstool("rule", "seq-gapp")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "sesstool: no rule 'seq-gapp'; did you mean seq-gap?\n"
    nothing = sesstool("rule", "no-such-thing-at-all")
    assert nothing.exit_code == 2 and "sesstool rule --all" in nothing.stderr
    assert sesstool("rule").exit_code == 2
    assert sesstool("rule", "--all", "seq-gap").exit_code == 2


# -- inspect wording ------------------------------------------------------------------------------


def test_the_open_turn_is_named(sesstool: Sesstool) -> None:
    out = sesstool("inspect", CRASH).stdout
    assert "events      5 · 1 turn (turn 1 open) · 1 step\n" in out


def test_zstd_addresses_label_the_decoded_offset(sesstool: Sesstool) -> None:
    zstd = sesstool("inspect", "fixtures/dsh/torn-tail/session.jsonl.zstd").stdout
    raw = sesstool("inspect", "fixtures/dsh/torn-tail/session.jsonl").stdout
    assert "session.jsonl.zstd, decoded byte 3147, frame 4 at file byte 1452: last zstd frame 4" in zstd
    assert "session.jsonl, line 15, byte 3147: final record" in raw and "decoded" not in raw
    checked = sesstool("validate", "fixtures/dsh/torn-tail/session.jsonl.zstd").stdout
    assert "session.jsonl.zstd (decoded byte 3147, frame 4): warning [zstd-torn-frame]" in checked


def test_timeline_turn_and_last(sesstool: Sesstool) -> None:
    out = sesstool("inspect", "--turn", "2", "--last", "3", CLEAN).stdout
    timeline = out.split("\ntimeline\n", 1)[1].splitlines()
    assert [line.split()[1] for line in timeline if line.startswith("    seq")] == ["42", "46"]
    assert timeline[-1] == "  end of turn 2: completed (seq 48)"
    doc = json.loads(sesstool("inspect", "--json", "--last", "2", CLEAN).stdout)
    assert [e["seq"] for e in doc["timeline"]] == [59, 61]
    whole = json.loads(sesstool("inspect", "--json", "--turn", "3", CLEAN).stdout)["timeline"]
    assert {e["turn"] for e in whole} == {3} and whole[0]["seq"] == 49
    stdin = sesstool("inspect", "--json", "--turn", "3", "-", input=(ROOT / CLEAN).read_bytes())
    assert json.loads(stdin.stdout)["timeline"] == whole


# -- where write commands write ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["repair"], "crash.repaired.jsonl"),
        (["migrate"], "crash.v4.jsonl"),
        (["redact"], "crash.redacted.jsonl"),
        (["fork", "--at", "12", "--id", "child"], "child.jsonl"),
    ],
)
def test_output_directory_takes_the_default_name(
    sesstool: Sesstool, tmp_path: Path, args: list[str], name: str
) -> None:
    source = tmp_path / "crash.jsonl"
    shutil.copyfile(
        FIXTURES / "dsh" / ("v0-tiny" if args[0] == "fork" else "crash-dangling-call") / "session.jsonl",
        source,
    )
    out = tmp_path / "out"
    out.mkdir()
    result = sesstool(*args, "-o", str(out), str(source))
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [name]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crash.jsonl", "out"]


def test_an_unwritable_target_directory_suggests_o(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root a mode-0555 directory would not stop us: a read-only file system is simulated at
    the system call that creates the temporary file."""
    source = tmp_path / "crash.jsonl"
    shutil.copyfile(ROOT / CRASH, source)
    real = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    result = sesstool("repair", str(source))
    assert result.exit_code == 6
    assert result.stderr.endswith(
        "EROFS (Read-only file system); write elsewhere with -o PATH "
        "(a file, or a directory to put the output in)\n"
    )


def test_the_lock_protocol_note_only_with_verbose(sesstool: Sesstool, tmp_path: Path) -> None:
    source = tmp_path / "crash.jsonl"
    shutil.copyfile(ROOT / CRASH, source)
    note = "note      not a session directory: no session.lock protocol to check"
    quiet = sesstool("repair", "--dry-run", str(source))
    loud = sesstool("repair", "--dry-run", "-v", str(source))
    assert quiet.exit_code == loud.exit_code == 0
    assert note not in quiet.stdout and note in loud.stdout
    assert quiet.stdout == loud.stdout.replace(f"  {note}\n", "")
    doc = json.loads(sesstool("repair", "--dry-run", "--json", str(source)).stdout)
    assert "not a session directory: no session.lock protocol to check" in doc["notes"]


# -- terminals, pipes, entry points --------------------------------------------------------------


def _on_terminal(args: list[str], columns: int) -> tuple[int, str]:
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child execs
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "sesstool", *args], _env())
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode().replace("\r\n", "\n")


def test_text_wraps_to_the_terminal_width_with_hanging_indents() -> None:
    code, screen = _on_terminal(["inspect", CRASH], 60)
    assert code == 0
    lines = screen.splitlines()
    assert max(len(line) for line in lines) <= 60
    # a row's continuation stays in the value column; a finding's under the finding
    start = lines.index(next(line for line in lines if line.startswith("tool calls  ")))
    assert lines[start + 1].startswith("            ") and lines[start + 1].strip()
    finding = lines.index("  warning torn-tail")
    assert lines[finding + 1].startswith("    fixtures/dsh/crash-dangling-call/session.jsonl, line 7,")
    # the same words as the unwrapped pipe output
    piped = subprocess.run(
        [sys.executable, "-m", "sesstool", "inspect", CRASH],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        check=True,
    )
    assert screen.split() == piped.stdout.decode().split()


@pytest.mark.parametrize(
    "args",
    [["inspect", "--timeline", CLEAN], ["validate", "fixtures/dsh"], ["derive", "--format", "jsonl", CLEAN]],
    ids=lambda a: a[0],
)
def test_a_closed_pipe_ends_silently_with_141(args: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first byte: every write is EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "sesstool", *args],
            cwd=ROOT,
            env=_env(),
            stdout=write,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (141, b"")


def test_python_dash_m_works_from_any_directory(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sesstool", "inspect", str(ROOT / CRASH)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"verdict     TORN")


# -- packaging --------------------------------------------------------------------------------


def test_make_demo_installs_only_what_the_demo_needs(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    # run from `make test`, the child make inherits MAKELEVEL/MAKEFLAGS and would print
    # "Entering/Leaving directory" lines: the plan is asked of a top-level make
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    plan = subprocess.run(
        ["make", "--no-print-directory", "-n", "demo", f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    installs = [line for line in plan if " install " in line]
    assert installs == [f"{venv}/bin/pip install --quiet -e ."]  # sesstool and its dependencies
    assert plan[-1] == f"{venv}/bin/sesstool inspect fixtures/dsh/crash-dangling-call/session.jsonl"
    assert not any("requirements-dev" in line for line in plan)


def test_license_classifiers_and_project_urls() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    assert "License :: " not in " ".join(project["classifiers"])  # PEP 639: the expression says it
    assert {"Environment :: Console", "Programming Language :: Python :: 3.11"} <= set(project["classifiers"])
    urls = project["urls"]
    assert set(urls) >= {"Homepage", "Repository", "Documentation", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())
