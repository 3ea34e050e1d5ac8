"""Issue 11 item 1: what grows with the number of DISTINCT VALUES a Claude Code transcript puts
in a field, not with its entries. Every entry names its own ``sessionId``, ``version``, ``cwd``,
``gitBranch`` and ``message.model``, and after each a metadata-less entry of its own unknown
``type`` (spec agent-formats §1.3, §1.6: nothing limits them). The scanner keeps a leaf, an
envelope and a prompt id only for the sessions resume can choose (the expected one, the first),
the graph numbers at most four sessions, and every list of values stops at
``first_seen.FIRST_SEEN`` with "and more" (docs/format.md, "Memory"). The same transcript of N
and 4N entries, N = 20,000, the children run with the graph's thresholds lowered as in
test_claude_hostile.py, their peak RSS read from the kernel, never timed.

On main's code before this change (a dict entry per distinct session, version, cwd, branch,
model and type, an envelope per session, the graph's session numbering per session) each of
these children grew by tens of MiB from N to 4N (figures in the commit message): every memory
test here fails there."""

from __future__ import annotations

import functools
import json
import uuid
from pathlib import Path

import pytest

from sesstool.core.first_seen import FIRST_SEEN
from tests.adversarial.hostile_logs import json_objects, run_measured
from tests.adversarial.lowered import LoweredRuns, assert_flat, lowered_runs
from tests.conftest import ROOT

N = 20_000
SESSION = "5f0c0a3e-0000-4000-8000-000000000077"
_COMMANDS = {
    "validate": ["validate"],
    "inspect": ["inspect"],
    "inspect-json": ["inspect", "--json"],
    "derive": ["derive", "--format", "jsonl"],
}


def write(path: Path, n: int) -> None:
    """``n`` prompts on one chain, each of its own session, version, cwd, branch and model (an
    assistant reply each other entry), each followed by an entry of its own unknown type."""
    parent: str | None = None
    with path.open("w") as out:
        for i in range(n):
            me = str(uuid.UUID(int=i + 1))
            kind = "assistant" if i % 2 else "user"
            message = {"role": kind, "content": "go"}
            if kind == "assistant":
                message.update({"id": f"msg_{i}", "type": "message", "model": f"model-{i}"})
            entry = {
                "parentUuid": parent,
                "isSidechain": False,
                "type": kind,
                "message": message,
                "uuid": me,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "sessionId": SESSION if i == 0 else f"session-{i}",
                "version": f"2.1.{i}",
                "cwd": f"/w/{i}",
                "gitBranch": f"b{i}",
                "promptId": f"p{i}",
            }
            out.write(json.dumps(entry) + "\n")
            out.write(json.dumps({"type": f"kind-{i}"}) + "\n")
            parent = me


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-distinct")


def _log(where: LoweredRuns, n: int) -> Path:
    return where.log(f"distinct-{n}", functools.partial(write, n=n), SESSION)


def test_the_lists_stop_at_first_seen_and_say_so(where: LoweredRuns) -> None:
    """Scanned: the first FIRST_SEEN of each value, in order, and which lists were cut."""
    from sesstool.engine.scan import scan_source

    t = scan_source(str(_log(where, 200))).scan.facts.scan
    assert t.session_id == SESSION
    assert t.sessions == (SESSION, *(f"session-{i}" for i in range(1, FIRST_SEEN)))
    assert t.cwds == tuple(f"/w/{i}" for i in range(FIRST_SEEN))
    assert t.git_branches == tuple(f"b{i}" for i in range(FIRST_SEEN))
    assert t.models == tuple(f"model-{i}" for i in range(1, 2 * FIRST_SEEN, 2))
    assert len(t.versions) == len(t.by_type) == FIRST_SEEN
    assert set(t.more) == {"sessions", "versions", "cwd", "git_branch", "models", "by_type"}
    several = [f for f in t.findings if f.rule == "claude-several-sessions"]
    assert several and several[0].message.startswith(f"more than {FIRST_SEEN} session ids")
    assert t.closing.prompt_id == "p0"  # the chosen session's, not the last entry's
    assert len(t.chain) == 1  # the chosen session's conversation: its one entry


def test_the_outputs_say_what_was_left_out(where: LoweredRuns) -> None:
    log = _log(where, 200)
    text = run_measured(["inspect", str(log)], cwd=log.parent, env={"PYTHONPATH": str(ROOT)})
    assert f"… and more (the first {FIRST_SEEN} shown)" in text.stdout.decode()
    body = run_measured(["inspect", "--json", str(log)], cwd=log.parent, env={"PYTHONPATH": str(ROOT)})
    doc = json.loads(body.stdout)
    claude = next(v["claude"] for v in json_objects(doc) if "claude" in v)
    assert isinstance(claude, dict) and claude["more"] == [
        "sessions",
        "versions",
        "cwd",
        "git_branch",
        "models",
        "by_type",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("command", _COMMANDS)
def test_memory_does_not_grow_with_distinct_values(where: LoweredRuns, command: str) -> None:
    args = _COMMANDS[command]
    small = where.run(_log(where, N), args).peak_rss
    assert_flat(small, where.run(_log(where, 4 * N), args).peak_rss)


def test_the_expected_session_is_chosen_past_the_first_seen(where: LoweredRuns) -> None:
    """Resume follows the expected session when the file has it (§1.6), kept or not: its leaf,
    envelope and prompt id are kept, and the several-sessions finding names its first line."""
    from sesstool.dialects.claude.transcript import TranscriptScanner

    scanner = TranscriptScanner("t.jsonl", expected_session="session-100")
    scanner.feed_lines(_log(where, 200).read_bytes().splitlines(), 0, 1)
    t = scanner.finish()
    assert t.session_id == "session-100" and "session-100" not in t.sessions
    assert t.closing.prompt_id == "p100" and t.leaf == str(uuid.UUID(int=101))
    assert dict(t.closing.envelope)["sessionId"] == "session-100"
    several = next(f for f in t.findings if f.rule == "claude-several-sessions")
    assert several.message.startswith(
        f"more than {FIRST_SEEN} session ids in one file; resume follows session-100"
    )


def test_unknown_types_past_first_seen_are_said_at_every_line(tmp_path: Path) -> None:
    from sesstool.core.options import ScanOptions
    from sesstool.engine.scan import scan_source

    kinds = [f"kind-{i}" for i in range(FIRST_SEEN + 5)] + ["kind-0", f"kind-{FIRST_SEEN + 4}"]
    log = tmp_path / f"{SESSION}.jsonl"
    write(log, 1)  # one prompt (and kind-0 after it), then the other kinds
    with log.open("a") as out:
        out.write("".join(json.dumps({"type": k}) + "\n" for k in kinds[1:]))
    found = [f for f in scan_source(log, ScanOptions()).scan.findings if f.rule == "claude-unknown-type"]
    # the first FIRST_SEEN types once each (kind-0 again: not said again); each type after them
    # at every one of its lines (told apart from nothing), the repeated last one too
    said = [f.message.split("'")[1] for f in found]
    assert said == [f"kind-{i}" for i in range(FIRST_SEEN + 5)] + [f"kind-{FIRST_SEEN + 4}"]
    assert [f.address.line for f in found][-1] == len(kinds) + 1
