"""Files that are not session logs (issue 15 item 9): an ELF binary named ``.jsonl.zstd``, a
gzip file, a pretty-printed JSON document, ``package.json``, JSON Lines of no agent, plain text,
a log of another dialect than ``--dialect`` asks for. Each is named as what it looks like, with
exit 4 (docs/format.md "Not a session log") — never diagnosed as a torn or corrupt log — raw
and zstd; a log stopped at an unusable header still counts its lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import zstandard

from tests.conftest import FIXTURES, ROOT, UPDATE_GOLDENS, Sesstool

NOT_A_LOG = FIXTURES / "not-a-log"
FILES = sorted(p for p in NOT_A_LOG.iterdir() if p.is_file() and p.name != "build.py")
GOLDEN = NOT_A_LOG / "expected" / "inspect.txt"
CLAUDE = FIXTURES / "claude" / "projects" / "text" / "0a388a4a-bad0-5697-b8a2-5cb779938bde.jsonl"
CODEX = FIXTURES / "codex" / "kill-during-command"


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_corpus_has_raw_and_zstd_of_each_kind() -> None:
    names = {p.name for p in FILES}
    assert {"elf.jsonl.zstd", "gzip.jsonl", "pretty.json", "package.json", "two-lines.jsonl"} <= names
    zstd = [p for p in FILES if p.read_bytes().startswith(b"\x28\xb5\x2f\xfd")]
    assert len(zstd) >= 5  # an ELF, a JSON document, JSON Lines, text and package.json compressed


def test_every_command_names_what_the_file_is(sesstool: Sesstool) -> None:
    lines = []
    for path in FILES:
        result = sesstool("inspect", rel(path))
        assert result.exit_code == 4, (path.name, result.stderr)
        assert result.stdout == ""
        assert "not a session log: it " in result.stderr
        assert not any(word in result.stderr for word in ("torn", "corrupt", "type None"))
        lines.append(result.stderr)
        assert sesstool("derive", rel(path)).stderr == result.stderr
    text = "".join(lines)
    if UPDATE_GOLDENS:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


WRITES = {
    "repair": ("repair", "--dry-run"),
    "migrate": ("migrate", "--dry-run"),
    "fork": ("fork", "--dry-run", "--at", "1"),
    "redact": ("redact", "--dry-run"),
    "report": ("report", "-o", "{out}"),
}


@pytest.mark.parametrize("command", sorted(WRITES))
@pytest.mark.parametrize("name", ["elf.jsonl.zstd", "pretty.json.zstd", "two-lines.jsonl"])
def test_the_write_commands_refuse_the_same_way(
    sesstool: Sesstool, tmp_path: Path, command: str, name: str
) -> None:
    source = tmp_path / name
    shutil.copy(NOT_A_LOG / name, source)
    args = [a.replace("{out}", str(tmp_path / "r.html")) for a in WRITES[command]]
    result = sesstool(*args, str(source))
    assert result.exit_code == 4, result.stderr
    assert f"{source}: not a session log: it " in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written


@pytest.mark.parametrize("name", ["elf.jsonl.zstd", "gzip.jsonl", "package.json"])
def test_standard_input_is_judged_the_same(sesstool: Sesstool, name: str) -> None:
    from tests.conftest import run_sesstool

    data = (NOT_A_LOG / name).read_bytes()
    result = run_sesstool("inspect", "-", input=data)
    assert result.exit_code == 4
    named = sesstool("inspect", rel(NOT_A_LOG / name)).stderr
    assert result.stderr == named.replace(rel(NOT_A_LOG / name), "-")


def test_validate_reports_each_and_goes_on(sesstool: Sesstool) -> None:
    log = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"
    result = sesstool("validate", "--format", "json", rel(NOT_A_LOG), rel(log))
    assert result.exit_code == 1  # validate's rule: a file it cannot check fails the run
    doc = json.loads(result.stdout)
    errors = {Path(f["path"]).name: f["error"] for f in doc["files"] if f.get("error")}
    assert set(errors) == {p.name for p in FILES if p.name.endswith((".jsonl", ".jsonl.zst", ".jsonl.zstd"))}
    assert all(": not a session log: it " in e for e in errors.values())
    assert [f["verdict"]["verdict"] for f in doc["files"] if f["path"] == rel(log)] == ["clean"]


def test_a_listing_marks_them_not_a_log(sesstool: Sesstool) -> None:
    doc = json.loads(sesstool("list", "--json", rel(NOT_A_LOG)).stdout)
    assert {r["verdict"]["verdict"] for r in doc["sessions"]} == {"not-a-log"}
    assert all(r["error"].startswith("not a session log: it ") for r in doc["sessions"])
    assert all(
        r["verdict"] == {"verdict": "not-a-log", "reason": r["error"], "address": None}
        for r in doc["sessions"]
    )


def test_a_listing_calls_no_file_a_session_log_it_is_not(sesstool: Sesstool, tmp_path: Path) -> None:
    """The header and the summary count files when some rows are not session logs."""
    n = sum(1 for p in FILES if p.name.lower().endswith((".jsonl", ".jsonl.zst", ".jsonl.zstd")))
    lines = sesstool("list", rel(NOT_A_LOG)).stdout.splitlines()
    counted = f"{n} files: 0 session logs, {n} not session logs"
    assert lines[0] == f"{rel(NOT_A_LOG)}: directory of logs, {counted}, newest first"
    assert lines[-1] == f"{n} files: {n} not-a-log"
    shutil.copy(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl", tmp_path / "a.jsonl")
    shutil.copy(NOT_A_LOG / "gzip.jsonl", tmp_path / "b.jsonl")
    mixed = sesstool("inspect", str(tmp_path)).stdout.splitlines()
    assert (
        mixed[0]
        == f"{tmp_path}: directory of logs, 2 files: 1 session log, 1 not a session log, newest first"
    )
    assert mixed[-1] == "2 files: 1 clean, 1 not-a-log"
    (tmp_path / "b.jsonl").unlink()
    alone = sesstool("list", str(tmp_path)).stdout.splitlines()
    assert (alone[0], alone[-1]) == (
        f"{tmp_path}: directory of logs, 1 session log, newest first",
        "1 session log: 1 clean",
    )


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_log_of_another_dialect_than_asked_for(sesstool: Sesstool, tmp_path: Path, zstd: bool) -> None:
    claude, codex = tmp_path / CLAUDE.name, tmp_path / "rollout.jsonl"
    shutil.copy(CLAUDE, claude)
    shutil.copy(next(CODEX.glob("*.jsonl")), codex)
    if zstd:
        for path in (claude, codex):
            path.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    as_dsh = sesstool("inspect", "--dialect", "dsh", str(claude))
    assert as_dsh.exit_code == 4
    assert as_dsh.stderr == (
        f"sesstool: {claude}: not a DeepSeek Harness session log: it is a Claude Code log "
        "(drop --dialect, or use --dialect claude)\n"
    )
    as_claude = sesstool("derive", "--dialect", "claude", str(codex))
    assert as_claude.exit_code == 4
    assert "not a Claude Code session log: it is a Codex CLI rollout log" in as_claude.stderr
    assert sesstool("inspect", "--dialect", "claude", str(claude)).exit_code == 0  # the right one reads


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_a_two_line_log_stopped_at_its_header_counts_two_lines(
    sesstool: Sesstool, tmp_path: Path, zstd: bool
) -> None:
    """A header sesstool cannot use stops the scan; the file is still read to count it."""
    data = (
        b'{"type":"session","version":9,"id":"s-future","createdAt":1760052000000,"delegationDepth":0}\n'
        b'{"type":"turn/start","seq":1,"time":1760052000001,"data":{}}\n'
    )
    log = tmp_path / "two.jsonl"
    log.write_bytes(zstandard.ZstdCompressor().compress(data) if zstd else data)
    result = sesstool("inspect", "--json", str(log))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["verdict"]["verdict"] == "unsupported"
    assert (doc["file"]["lines"], doc["file"]["plaintext_bytes"]) == (2, len(data))
    text = sesstool("inspect", str(log)).stdout
    assert " · 2 lines" in text.splitlines()[1] and "0 lines" not in text


@pytest.mark.parametrize("name", ["elf.jsonl.zstd", "package.json", "two-lines.jsonl"])
def test_every_validate_format_labels_it_not_a_log(sesstool: Sesstool, tmp_path: Path, name: str) -> None:
    """text, json, github, junit and sarif name the file as what it is, not "unreadable" (a
    missing path beside it stays unreadable), with the exit status of the text format."""
    path, missing = rel(NOT_A_LOG / name), str(tmp_path / "missing.jsonl")
    text = sesstool("validate", path, missing)
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"{path}: error not a session log: it ")
    assert lines[1].startswith(f"{missing}: error unreadable: ")
    why = lines[0].removeprefix(f"{path}: error ")
    results = {fmt: sesstool("validate", "--format", fmt, path, missing) for fmt in FORMATS}
    assert {fmt: r.exit_code for fmt, r in results.items()} == dict.fromkeys(FORMATS, 1)
    doc = json.loads(results["json"].stdout)
    assert [f["verdict"] for f in doc["files"]] == [
        {"verdict": "not-a-log", "reason": f"{path}: {why}", "address": None},
        {"verdict": "unreadable", "reason": doc["files"][1]["error"], "address": None},
    ]
    github = results["github"].stdout.splitlines()
    assert github[0] == f"::error file={path},title=sesstool not a session log::{path}: {why}"
    assert github[1].startswith(f"::error file={missing},title=sesstool unreadable::")
    junit = results["junit"].stdout
    assert junit.count('type="not-a-log"') == 1 and junit.count('type="unreadable"') == 1
    run = json.loads(results["sarif"].stdout)["runs"][0]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("file-not-a-log", "error"),
        ("file-unreadable", "error"),
    ]
    assert run["results"][0]["message"]["text"] == f"{path}: {why}"
    assert [d["id"] for d in run["tool"]["driver"]["rules"]] == ["file-unreadable", "file-not-a-log"]
    assert run["artifacts"][0]["properties"]["verdict"]["verdict"] == "not-a-log"


FORMATS = ("json", "github", "junit", "sarif")
