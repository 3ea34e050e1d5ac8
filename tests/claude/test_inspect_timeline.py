"""``inspect --timeline`` of a Claude Code transcript: one row per entry (line, time, entry type,
turn, calls and results with tool name and id, sidechain marks), fed to the sink by the
transcript scanner as it decodes each entry (docs/format.md "Timeline"). Goldens of the
timeline's bytes (text and ``--json``) for recorded scenarios, raw and zstd alike; ``--turn`` and
``--last``; standard input; hostile tool names. A session's subagent files' rows merged by
time into its own (docs/format.md "Subagent rows"): tests/claude/test_timeline_subagents.py.
The memory tests: tests/adversarial/test_timeline_rows.py, test_timeline_subagents.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.claude._support import EXPECTED_DIR, Scenario, zstd_twin
from tests.conftest import ROOT, Sesstool, check_golden

GOLDEN = [
    "text",
    "tool-parallel",
    "compact",
    "kill-tool",
    "damaged-sidechain-result",
    "subagent",
    "kill-subagent",
]
TEXT_START = "\ntimeline\n"
JSON_START = ',\n  "timeline": ['


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def text_timeline(stdout: str) -> str:
    """The text view's timeline section (from its title), the rest being inspect's summary."""
    at = stdout.index(TEXT_START)
    return stdout[at + 1 :]


def json_timeline(stdout: str) -> str:
    """The bytes ``inspect --json`` writes for its ``timeline`` member."""
    at = stdout.index(JSON_START)
    return stdout[at + 2 :]


def rows(sesstool: Sesstool, *args: str) -> list[dict[str, Any]]:
    result = sesstool("inspect", "--json", *args)
    assert result.exit_code == 0, result.stderr
    timeline: list[dict[str, Any]] = json.loads(result.stdout)["timeline"]
    return timeline


@pytest.mark.parametrize("name", GOLDEN)
def test_timeline_goldens(sesstool: Sesstool, name: str) -> None:
    """The timeline's bytes, text and JSON, equal the goldens, for the raw file and its zstd
    twin alike; the rest of the output is inspect's without ``--timeline``."""
    log = Scenario(name).transcript
    for path in (log, zstd_twin(log)):
        plain = sesstool("inspect", _rel(path))
        human = sesstool("inspect", "--timeline", _rel(path))
        assert human.exit_code == plain.exit_code == 0, human.stderr
        assert "\x1b" not in human.stdout
        assert human.stdout.startswith(plain.stdout.rstrip("\n") + "\n")
        check_golden(EXPECTED_DIR / name / "raw.timeline.txt", text_timeline(human.stdout))
        doc = sesstool("inspect", "--json", "--timeline", _rel(path))
        assert doc.exit_code == 0, doc.stderr
        check_golden(EXPECTED_DIR / name / "raw.timeline.json", json_timeline(doc.stdout))


@pytest.mark.parametrize("name", GOLDEN)
def test_a_row_per_entry(sesstool: Sesstool, name: str) -> None:
    """Every line that decodes to an object has its row, in order, its seq the 0-based line
    number (as --at counts); the turns are the report's (a prompt starts the next). (A subagent
    file's rows, merged among them, are marked ``agent``.)"""
    log = Scenario(name).transcript
    found = [r for r in rows(sesstool, "--timeline", _rel(log)) if "agent" not in r]  # the session's own
    decoded = []
    for number, line in enumerate(log.read_bytes().split(b"\n")[:-1], 1):
        try:
            value = json.loads(line.lstrip(b"\0"))
        except ValueError:
            continue
        if isinstance(value, dict):
            decoded.append((number, value))
    assert [r["line"] for r in found] == [n for n, _ in decoded]
    assert all(r["seq"] == r["line"] - 1 and r["step"] is None for r in found)
    for row, (_, entry) in zip(found, decoded, strict=True):
        assert row["type"].split("/")[0] == entry["type"]
        assert row["time"] == entry.get("timestamp")
        assert row["sidechain"] is (entry.get("isSidechain") is True)
    prompts = [r for r in found if r["summary"].startswith("prompt: ")]
    assert [r["turn"] for r in prompts] == list(range(1, len(prompts) + 1))


def test_calls_and_results_name_their_tool_and_id(sesstool: Sesstool) -> None:
    found = rows(sesstool, "--timeline", _rel(Scenario("tool-parallel").transcript))
    calls = [part for r in found for part in r["summary"].split("; ") if part.startswith("call ")]
    results = [part for r in found for part in r["summary"].split("; ") if part.startswith("result ")]
    assert len(calls) >= 2 and len(results) == len(calls)
    assert sorted(c.removeprefix("call ") for c in calls) == sorted(
        r.removeprefix("result ") for r in results
    )


def test_sidechain_entries_are_marked(sesstool: Sesstool) -> None:
    log = _rel(Scenario("damaged-sidechain-result").transcript)
    marked = [r for r in rows(sesstool, "--timeline", log) if r["sidechain"]]
    assert marked and all(r["type"] in ("user", "assistant") for r in marked)
    text = sesstool("inspect", "--timeline", log).stdout
    assert sum(line.endswith(" (sidechain)") for line in text.splitlines()) == len(marked)


@pytest.mark.parametrize("name", ["compact", "tool-parallel"])
def test_turn_and_last_narrow_the_rows(sesstool: Sesstool, name: str) -> None:
    log = _rel(Scenario(name).transcript)
    every = rows(sesstool, "--timeline", log)
    turns = sorted({r["turn"] for r in every if r["turn"] is not None})
    assert turns, "a scenario with at least one turn"
    for turn in turns:
        assert rows(sesstool, "--turn", str(turn), log) == [r for r in every if r["turn"] == turn]
        assert (
            rows(sesstool, "--turn", str(turn), "--last", "2", log)
            == [r for r in every if r["turn"] == turn][-2:]
        )
    assert rows(sesstool, "--last", "3", log) == every[-3:]
    assert rows(sesstool, "--turn", str(turns[-1] + 1), log) == []


@pytest.mark.parametrize("name", ["tool-one", "compact"])
def test_standard_input_gives_the_files_rows(sesstool: Sesstool, name: str) -> None:
    log = Scenario(name).transcript
    from_file = sesstool("inspect", "--timeline", _rel(log))
    for data in (log.read_bytes(), zstd_twin(log).read_bytes()):
        piped = sesstool("inspect", "--timeline", "-", input=data)
        assert piped.exit_code == 0, piped.stderr
        assert text_timeline(piped.stdout) == text_timeline(from_file.stdout)
        doc = sesstool("inspect", "--json", "--timeline", "-", input=data)
        assert json.loads(doc.stdout)["timeline"] == rows(sesstool, "--timeline", _rel(log))


HOSTILE = "Ba\x1bsh\n]0;x\u2028\u202e"


def _hostile(path: Path) -> Path:
    """A prompt, a call of a tool with a hostile name and id, its failed result (whose time
    holds an ESC: shown as written, escaped)."""
    session = "5f0c0a3e-0000-4000-8000-0000000000aa"
    base = {"isSidechain": False, "sessionId": session, "version": "2.1.332", "cwd": "/w"}
    call = {"type": "tool_use", "id": "toolu_\u2028x", "name": HOSTILE, "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_\u2028x", "content": "ok", "is_error": True}
    said = {"id": "m1", "type": "message", "model": "m", "stop_reason": "tool_use"}
    entries = [
        ("user", "u1", None, "2026-01-01T00:00:00.000Z", {"role": "user", "content": "go\x1b[2J"}),
        (
            "assistant",
            "a1",
            "u1",
            "2026-01-01T00:00:01.000Z",
            {"role": "assistant", **said, "content": [call]},
        ),
        ("user", "u2", "a1", "2026-01-01T00:00:02.000Z\x1b", {"role": "user", "content": [result]}),
    ]
    log = path / f"{session}.jsonl"
    with log.open("w") as out:
        for kind, ident, parent, when, message in entries:
            entry = {**base, "type": kind, "uuid": ident, "parentUuid": parent, "timestamp": when}
            out.write(json.dumps({**entry, "message": message}) + "\n")
    return log


def test_hostile_tool_names_are_escaped_in_the_text_view(sesstool: Sesstool, tmp_path: Path) -> None:
    log = str(_hostile(tmp_path))
    text = text_timeline(sesstool("inspect", "--timeline", log).stdout)
    assert "\x1b" not in text and "\u2028" not in text and "\u202e" not in text
    lines = text.splitlines()
    assert lines[0] == "timeline" and lines[1] == "turn 1" and len(lines) == 5, lines
    assert "call Ba\\x1bsh\\n]0;x\\u2028\\u202e toolu_\\u2028x" in lines[3]
    assert "2026-01-01T00:00:02.000Z\\x1b" in lines[4]  # a time that does not parse: shown as written
    assert lines[4].endswith("result Ba\\x1bsh\\n]0;x\\u2028\\u202e toolu_\\u2028x (error)")
    found = rows(sesstool, "--timeline", log)  # JSON is exact: the names as written
    assert found[1]["summary"] == f"call {HOSTILE} toolu_\u2028x"
    assert found[2]["summary"] == f"result {HOSTILE} toolu_\u2028x (error)"
