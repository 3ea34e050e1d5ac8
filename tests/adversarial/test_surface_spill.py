"""Issue 11 item 1, second round: a dsh log that is never compacted keeps every surface node, and
past ``core.fold.SPILL_AT`` seqs the fold's state (the node list, a type byte and — derive — a
line offset per seq, each tool/result's fingerprint) lives in a spill file, so memory no longer
grows with the node count. Peak RSS from the kernel for a child under an address-space limit
(``hostile_logs.run_measured``), never the clock: a log of 4N nodes costs every command within
a fixed bound (2 MiB) of the log of N nodes. The child runs with the threshold at 4,096 seqs
(``_spilling_child``), so tens of thousands of nodes take the path millions take; the fold held
in memory grows by about 3 MB (tiny messages) and 12 MB (tool results) between the two sizes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, run_measured, v4_messages, v4_tool_calls
from tests.conftest import FIXTURES, ROOT

MiB = 1 << 20
SPILL_AT = 4096


def _torn(log: Path) -> Path:
    """``log`` with half of a last line appended: a torn tail (repair's case)."""
    torn = log.with_name(log.name.replace(".v4.", ".torn.v4."))
    data = log.read_bytes()
    torn.write_bytes(data + data[data.rindex(b"\n", 0, -1) + 1 :][:40])
    return torn


def _commands(events: int) -> dict[str, tuple[list[str], bool]]:
    """name -> (arguments before the log, whether it runs on the torn twin)."""
    return {
        "validate": (["validate"], False),
        "inspect": (["inspect", "--json"], False),
        "derive json": (["derive", "--format", "json"], False),
        "derive jsonl": (["derive", "--format", "jsonl"], False),
        "repair": (["repair", "-o", "repaired.jsonl"], True),
        "fork": (
            ["fork", "--at", str(events - 2), "--id", "child", "--created-at", "5", "-o", "child.jsonl"],
            False,
        ),
    }


def _peaks(log: Path, events: int, names: tuple[str, ...]) -> dict[str, int]:
    torn = _torn(log)
    commands = _commands(events)
    peaks: dict[str, int] = {}
    for name in names:
        command, on_torn = commands[name]
        for written in ("repaired.jsonl", "child.jsonl"):
            (log.parent / written).unlink(missing_ok=True)
        run = run_measured(
            [*command, str(torn if on_torn else log)],
            address_space=2 << 30,
            cwd=log.parent,
            # glibc's mmap threshold held at its first value (``hostile_logs.FIXED_MMAP``): the
            # dynamic one made fork's peak step up once, by chance, +3.09 MiB from 20,000 to
            # 80,000 calls in one CI run (probe: 41.27 / 41.46 / 42.39 MiB at N / 4N / 8N, and
            # 39.66 / 39.76 / 39.96 with it fixed; what the program holds counts as before)
            env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, (command, run.stderr)
        peaks[name] = run.peak_rss
    return peaks


def _messages(where: Path, count: int) -> tuple[Path, int]:
    return v4_messages(where / f"m{count}.v4.jsonl", count, lambda seq: "m"), count


def _tool_calls(where: Path, count: int) -> tuple[Path, int]:
    return v4_tool_calls(where / f"c{count}.v4.jsonl", count), 2 * count + 4


EVERY = ("validate", "inspect", "derive json", "derive jsonl", "repair", "fork")


@pytest.mark.parametrize(
    ("make", "small", "names", "bound"),
    [
        # tiny messages: the fold in memory grows by ~9 bytes a node (validate), ~25 (derive)
        (_messages, 60_000, ("validate", "derive jsonl"), 2 * MiB),
        # one tool/result per call: ~100 bytes a node in memory (a fingerprint dict), copied by fork
        (_tool_calls, 20_000, EVERY, 2 * MiB),
    ],
    ids=["tiny-messages", "tool-results"],
)
def test_surface_memory_does_not_grow_with_the_node_count_past_the_spill(
    tmp_path: Path,
    make: Callable[[Path, int], tuple[Path, int]],
    small: int,
    names: tuple[str, ...],
    bound: int,
) -> None:
    """N and 4N nodes: every command's peak within ``bound`` (spilled, about 1 MiB of it is the
    spill's caches and the allocator filling up: +1.1 MB from 60,000 to 240,000 tiny messages,
    +1.2 MB from 240,000 to 960,000, where the fold in memory grows 1.7 and 7.6 MB)."""
    peaks = [_peaks(*make(tmp_path, count), names) for count in (small, 4 * small)]
    grown = {name: peaks[1][name] - peaks[0][name] for name in names}
    assert all(growth < bound for growth in grown.values()), str(
        {n: round(g / MiB, 2) for n, g in grown.items()}
    )


CODEX_SEED = sorted((FIXTURES / "codex" / "tool-call").glob("*.jsonl"))[0]
CODEX_ITEMS = 6  # the seed's response items: messages, a call and its output


def _rollout(where: Path, turns: int) -> Path:
    """A Codex rollout whose response items repeat ``turns`` times with fresh call ids: one
    thread of ``CODEX_ITEMS × turns`` history items."""
    lines = [orjson.loads(line) for line in CODEX_SEED.read_bytes().splitlines()]
    head = [e for e in lines if e["type"] == "session_meta"]
    items = [e for e in lines if e["type"] == "response_item"]
    path = where / f"{turns}-{CODEX_SEED.name}"
    with open(path, "wb") as f:
        for e in head:
            f.write(orjson.dumps(e) + b"\n")
        for turn in range(turns):
            for e in items:
                payload = dict(e["payload"])
                if isinstance(payload.get("call_id"), str):
                    payload["call_id"] = f"{payload['call_id']}_{turn}"
                f.write(orjson.dumps({**e, "payload": payload}) + b"\n")
    return path


def test_codex_history_memory_does_not_grow_with_the_items_past_the_spill(tmp_path: Path) -> None:
    """derive of a rollout of 4N history items costs within 1 MiB of N items: past the
    threshold the history's columns (five words an item) and the sorted call/output lists are
    in the spill file (in memory they grow ~4 MB between 30,000 and 120,000 items)."""
    peaks = []
    for turns in (5_000, 20_000):
        log = _rollout(tmp_path, turns)
        run = run_measured(
            ["derive", "--format", "jsonl", str(log)],
            address_space=2 << 30,
            cwd=tmp_path,
            # the allocator held as above
            env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, run.stderr
        assert run.stdout.count(b"\n") == CODEX_ITEMS * turns
        peaks.append(run.peak_rss)
    assert peaks[1] - peaks[0] < 1 * MiB, [round(p / MiB, 2) for p in peaks]
