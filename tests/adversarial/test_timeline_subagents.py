"""Issue 11 item 1(c) for a session's subagent rows: ``inspect --timeline`` of a Claude Code
session merges its subagent files' rows by time into its own (engine/timeline_merge.py,
docs/format.md "Subagent rows") and holds none of them: each file's rows go to a table of a
spill file keyed by time (store/spill_sort.py ``SpilledRows``), then are handed out between the
session's own rows as those are read again. A session of four entries whose one Agent call ran
two subagents side by side, their files of N and of 4N rows in all (N = 6,000; each file a
prompt, then request records of 1.5 KB: rows the scanner keeps nothing for, in files larger
than the reader's chunks at both sizes, so that what can grow is the merge's);
the children's peak RSS read from the kernel under an address-space limit, malloc's mmap
threshold fixed (``hostile_logs.run_measured``, ``FIXED_MMAP``), never timed.

The same for the number of files: 50 and 200 subagent files of 40 rows (the merge keeps nothing
per file; inspect's own list of them, engine/companions.py, is in both peaks).

The control: the same children with the spill table replaced by a list sorted in memory (a
merge that holds the rows) grow by more than the bound. On the code before this merge the
subagents' rows were not in the timeline at all: the row counts fail."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, MiB, assert_flat, run_measured
from tests.conftest import ROOT

N = 6_000  # subagent rows, in two files
SESSION = "5f0c0a3e-0000-4000-8000-0000000000cc"
PAD = "x" * 1500
COMMANDS = {"text": ["inspect", "--timeline"], "json": ["inspect", "--json", "--timeline"]}
HELD = """\
from sesstool.engine import timeline_merge


class HeldRows:  # the merge's rows kept in a list and sorted in memory: the control
    def __init__(self, purpose):
        self.rows, self.waiting = [], []

    def __len__(self):
        return len(self.rows) + len(self.waiting)

    def add(self, key, row):
        (self.waiting if key is None else self.rows).append((key, len(self), row))

    def settle(self, key):
        self.rows += [(key, p, row) for _, p, row in self.waiting]
        self.waiting = []

    def sorted(self):
        return iter([(k, row) for k, _, row in sorted(self.rows, key=lambda r: r[:2])])

    def close(self):
        pass


timeline_merge.SpilledRows = HeldRows
"""


def _at(ms: int) -> str:
    return f"2026-01-01T00:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z"


def _entry(kind: str, n: int, parent: int | None, ms: int, content: Any, **more: Any) -> bytes:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update({"id": f"msg_{more.get('agentId', 'main')}_{n}", "type": "message", "model": "m"})
    prefix = more.get("agentId", "main")
    return orjson.dumps(
        {
            "parentUuid": None if parent is None else f"{prefix}-{parent}",
            "isSidechain": "agentId" in more,
            "type": kind,
            "message": message,
            "uuid": f"{prefix}-{n}",
            "timestamp": _at(ms),
            "sessionId": SESSION,
            "version": "2.1.332",
            "cwd": "/w",
            **more,
        }
    )


def session(rows: int) -> Callable[[Path], None]:
    """Writes the session: a prompt, one Agent call, its result after every subagent row, a
    reply; beside it two subagent files of ``rows // 2`` entries each, their times interleaved
    (one at even, one at odd milliseconds) inside the call's span."""

    def write(log: Path) -> None:
        call = {"type": "tool_use", "id": "toolu_agent", "name": "Agent", "input": {}}
        result = {"type": "tool_result", "tool_use_id": "toolu_agent", "content": "done"}
        end = 10 + 2 * rows
        log.write_bytes(
            b"\n".join(
                [
                    _entry("user", 1, None, 0, "go"),
                    _entry("assistant", 2, 1, 5, [call]),
                    _entry("user", 3, 2, end, [result]),
                    _entry("assistant", 4, 3, end + 1, [{"type": "text", "text": "ok"}]),
                ]
            )
            + b"\n"
        )
        subagents = log.parent / SESSION / "subagents"
        subagents.mkdir(parents=True)
        for side in (0, 1):
            agent = f"a{side}"
            with open(subagents / f"agent-{agent}.jsonl", "wb") as out:
                out.write(_entry("user", 0, None, 10 + 2 * side, f"task {agent}", agentId=agent) + b"\n")
                for i in range(1, rows // 2):
                    ms = 10 + 4 * i + 2 * side  # interleaved with the other file's
                    out.write(orjson.dumps(_request(ms, agent, i)) + b"\n")

    return write


def _request(ms: int, agent: str, i: int) -> dict[str, Any]:
    """A subagent's request record (metadata: a row, but nothing the scanner keeps)."""
    return {
        "type": "api-request",
        "timestamp": _at(ms),
        "sessionId": SESSION,
        "agentId": agent,
        "requestId": f"req_{agent}_{i}",
        "shape": PAD,  # files of some MiB at N already: the reader's chunks are full at both sizes
    }


def _logs(where: Path) -> list[Path]:
    logs = []
    for n in (N, 4 * N):
        log = where / f"session-{n}" / f"{SESSION}.jsonl"
        if not log.exists():
            log.parent.mkdir(parents=True)
            session(n)(log)
        logs.append(log)
    return logs


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _logs(tmp_path_factory.mktemp("timeline-subagents"))


def _run(log: Path, args: list[str], site: Path | None = None) -> Any:
    path = f"{site}:{ROOT}" if site is not None else str(ROOT)
    run = run_measured(
        [*args, str(log)], address_space=2 << 30, cwd=log.parent, env={"PYTHONPATH": path, **FIXED_MMAP}
    )
    assert run.exit_code == 0, run.stderr
    return run


def _count(out: bytes, view: str) -> int:
    if view == "json":
        return sum(1 for r in json.loads(out)["timeline"] if "agent" in r)
    return out.count(b"\n      line ")


@pytest.mark.parametrize("view", list(COMMANDS))
def test_subagent_rows_are_streamed(logs: list[Path], view: str) -> None:
    """Every subagent row at both sizes, between the Agent call and its result; the peak of 4N
    within 2 MiB of N's."""
    peaks = []
    for n, log in zip((N, 4 * N), logs, strict=True):
        run = _run(log, COMMANDS[view])
        assert _count(run.stdout, view) == n
        if view == "json":
            rows = json.loads(run.stdout)["timeline"]
            assert [r["line"] for r in rows if "agent" not in r] == [1, 2, 3, 4]
            assert [r["agent"] for r in rows[2:6]] == ["agent-a0", "agent-a1"] * 2  # interleaved
            assert rows[-2]["summary"] == "result Agent toolu_agent"
        peaks.append(run.peak_rss)
    assert_flat(*peaks)


def _many_files(root: Path, files: int) -> Path:
    """The session of ``session(2)`` with ``files`` more subagent files of 40 rows each."""
    log = root / f"files-{files}" / f"{SESSION}.jsonl"
    if log.exists():
        return log
    log.parent.mkdir(parents=True)
    session(2)(log)
    for k in range(files):
        agent = f"f{k:04d}"
        with open(log.parent / SESSION / "subagents" / f"agent-{agent}.jsonl", "wb") as out:
            out.write(_entry("user", 0, None, 10 + k, f"task {agent}", agentId=agent) + b"\n")
            for i in range(1, 40):
                out.write(orjson.dumps(_request(10 + k + 4 * i, agent, i)) + b"\n")
    return log


@pytest.mark.parametrize("view", list(COMMANDS))
def test_many_subagent_files_cost_nothing_each(logs: list[Path], view: str) -> None:
    """50 and 200 subagent files: every row at both counts; the peak of 200 within 2 MiB of 50's."""
    where = logs[0].parent.parent
    peaks = []
    for files in (50, 200):
        run = _run(_many_files(where, files), COMMANDS[view])
        assert _count(run.stdout, view) == 2 + 40 * files
        peaks.append(run.peak_rss)
    assert_flat(*peaks)


def test_the_control_rows_held_grow(logs: list[Path], tmp_path: Path) -> None:
    """The same merge with its rows kept in memory grows the peak by more than the bound: the
    flat peaks above are the rows spilled."""
    (tmp_path / "sitecustomize.py").write_text(HELD)
    peaks = [_run(log, COMMANDS["json"], tmp_path).peak_rss for log in logs]
    assert peaks[1] - peaks[0] > 2 * MiB, [round(p / MiB, 2) for p in peaks]
