"""Issue 11 item 1, third round: a Codex rollout's unfinished turns. The scanner once kept an
``OpenTurn`` per ``event_msg`` ``task_started`` never ended, in a dict, until the end of the
scan; past ``dialects.codex.open_turns.SPILL_AT`` turns the records now move to a spill file and
are read back whenever the end of the scan walks them. Peak RSS from the kernel for a child under
an address-space limit (``hostile_logs.run_measured``), never the clock; the child spills past
4,096 (``_spilling_child``), so tens of thousands of turns take the path millions take.

What is bounded: the scan and the commands that do not list every unfinished turn (``validate``,
whose findings stop at ``--max-findings``; ``derive``). ``inspect`` (a row and a predicted closer
per unfinished turn), ``repair`` and ``fork``, which print or write a closer per unfinished turn,
walk them without holding them: ``test_streamed_closers.py``
(docs/reliability.md "Item 1, what grows with the log")."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import run_measured
from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # four children on rollouts of up to 23 MB

MiB = 1 << 20
SPILL_AT = 4096
SEED = sorted((FIXTURES / "codex" / "two-turns").glob("*.jsonl"))[0]


def never_ended(where: Path, turns: int) -> Path:
    """The seed rollout's session_meta, then ``turns`` copies of its first task_started with
    fresh turn ids, none ever completed or aborted."""
    lines = [orjson.loads(line) for line in SEED.read_bytes().splitlines()]
    meta = next(e for e in lines if e["type"] == "session_meta")
    started = next(e for e in lines if e["type"] == "event_msg" and e["payload"]["type"] == "task_started")
    path = where / f"rollout-{turns}.jsonl"
    with open(path, "wb") as f:
        f.write(orjson.dumps(meta) + b"\n")
        for n in range(turns):
            turn = f"turn_{n}"
            payload = {**started["payload"], "turn_id": turn, "root_turn_id": turn}
            f.write(orjson.dumps({**started, "ordinal": n + 1, "payload": payload}) + b"\n")
    return path


COMMANDS = {
    "validate": ["validate", "--format", "json"],
    "derive": ["derive", "--format", "jsonl"],
}


@pytest.fixture(scope="module")
def rollouts(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The rollouts of N and 4N never-ended turns, made once for every command."""
    where = tmp_path_factory.mktemp("open-turns")
    return {turns: never_ended(where, turns) for turns in (10_000, 40_000)}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_unfinished_turns_do_not_grow_memory(rollouts: dict[int, Path], name: str) -> None:
    """N and 4N task_started never ended: the peak within 2 MiB."""
    peaks = []
    for turns, log in sorted(rollouts.items()):
        run = run_measured(
            [*COMMANDS[name], str(log)],
            address_space=2 << 30,
            cwd=log.parent,
            env={"PYTHONPATH": str(ROOT)},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, run.stderr
        if name == "validate":
            found = orjson.loads(run.stdout)["files"][0]
            assert found["verdict"]["verdict"] == "interrupted", found["verdict"]
            assert len(found["findings"]) == 1000 and found["findings_dropped"] == turns - 1000
        peaks.append(run.peak_rss)
    assert peaks[1] - peaks[0] < 2 * MiB, [round(p / MiB, 2) for p in peaks]
