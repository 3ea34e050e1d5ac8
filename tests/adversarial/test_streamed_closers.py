"""Issue 11 item 1, the closers: ``inspect``, ``repair`` and ``fork`` print or write one closer per
call waiting for its result, and once held them all (and inspect its row and JSON member per
waiting call) while they did. The closers are now made as they are walked
(``core.closer_list.Closers``, from the scan's spilled waiting calls), the rows as they are
printed and the JSON arrays streamed into place (``render.json_stream``).

Peak RSS of a child (``hostile_logs.run_measured``, with glibc's mmap threshold fixed:
``hostile_logs.FIXED_MMAP``, else the mini-agent fork's peak stepped up 1.6 to 3.4 MiB between N
and 4N with nothing held) spilling past 1,024 calls (``_spilling_child``; 4,096 while N was
10,000): N and 4N never-answered calls, N = 6,000, Codex and mini-agent (the old code's growth
scales with N: at 5,000 Codex inspect's was +12.3 MiB, six times its bound). On the code before
(e1d6f95) every one of these fails at this N: the peak grew between N and 4N +15.1 (Codex
inspect), +42.5 (--json), +25.8 (repair), +26.2 (repair --json), +17.6 (fork); mini-agent +17.6,
+44.2, +51.5, +51.6, +31.0 MiB. Now: within 2 MiB (fork: 3 MiB, its two scans each fill their
spill file's page cache, a fixed 2 MiB at most: it grew 1.2 and 1.6 MiB at N = 10,000): Codex
+0.62, +0.49, +0.64, +0.87, -0.15; mini-agent +0.43, +0.53, +0.69, +0.67, -0.13 MiB. A dsh log's
one open step of N and 4N never-answered calls (its tables spill past the same threshold since
0a512aa; on 7cfe991 they were dicts held to the end of the scan): within the same bounds, +0.45,
+0.64, +0.25, +0.01, +0.86 MiB; on 7cfe991 +8.6, +8.8, +12.3, +12.0 and +11.9 MiB."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, run_measured
from tests.adversarial.test_open_turns import never_ended
from tests.adversarial.test_waiting_calls import dsh_never_answered, mini_never_answered, never_answered
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # 38 children on logs of up to 8 MB

MiB = 1 << 20
SPILL_AT = 1024
N = 6_000
CODEX_CHILD = "0199a213-81c0-7800-8aa1-bbab2a035a53"

COMMANDS = {
    "inspect": ["inspect"],
    "inspect-json": ["inspect", "--json"],
    "repair": ["repair", "-o", "{out}"],
    "repair-json": ["repair", "--json", "-o", "{out}"],
    "fork": ["fork", "--json", "--at", "{at}", "--id", "{id}", "--created-at", "5", "-o", "{out}"],
}
GROWTH = {"fork": 3 * MiB}


def _args(name: str, log: Path, out: Path, codex: bool, calls: int, last: int | None = None) -> list[str]:
    fill = {
        "out": str(out),
        # the last line (Codex) / the last seq (mini; dsh: ``last``)
        "at": str(last if last is not None else calls if codex else 2 * calls),
        "id": CODEX_CHILD if codex else "child-1",
    }
    return [a.format(**fill) for a in COMMANDS[name]] + [str(log)]


def _check(name: str, stdout: bytes, out: Path, calls: int, codex: bool, more: int = 0) -> None:
    """What each command said and wrote: one closer per call, then ``more`` (mini's turn-less
    log: none; dsh: the step/end and turn/end), so a command that stopped early would not pass
    as a small peak."""
    if name == "inspect":
        assert stdout.count(b"\n            pending call_") == calls
        listed = stdout.split(f"would append {calls + more} closers:\n".encode())[1].splitlines()
        assert len(listed) == calls + more and all(row.startswith(b"  ") for row in listed)
        assert f"call_{calls - 1}".encode() in listed[calls - 1], listed[calls - 1]
    elif name == "inspect-json":
        doc = orjson.loads(stdout)
        assert len(doc["repair"]["closers"]) == calls + more
        waiting = doc["codex"]["dangling"] if codex else doc["open"]["pending_calls"]
        assert len(waiting) == calls
    else:
        assert out.exists()
        lines = out.read_bytes().splitlines()
        assert (
            sum(b"call_" in line and (b'"aborted"' in line or b"tool/result" in line) for line in lines)
            == calls
        )
        if name != "repair":
            doc = orjson.loads(stdout)
            closers = doc["closers"] if name == "fork" else doc["plan"]["closers"]
            assert len(closers) == calls + more


@pytest.mark.parametrize("name", list(COMMANDS))
@pytest.mark.parametrize(
    "make", [never_answered, mini_never_answered, dsh_never_answered], ids=["codex", "mini", "dsh"]
)
def test_closers_do_not_grow_memory(tmp_path: Path, name: str, make: Callable[[Path, int], Path]) -> None:
    codex = make is never_answered
    peaks = []
    for calls in (N, 4 * N):
        log = make(tmp_path, calls)
        out = tmp_path / f"out-{calls}.jsonl"
        dsh = make is dsh_never_answered
        last = 2 * calls + 2 if dsh else None
        run = run_measured(
            _args(name, log, out, codex, calls, last),
            address_space=2 << 30,
            cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, run.stderr
        _check(name, run.stdout, out, calls, codex, 2 if dsh else 0)
        peaks.append(run.peak_rss)
    print(name, [round(p / MiB, 2) for p in peaks], f"{(peaks[1] - peaks[0]) / MiB:+.2f}")
    assert peaks[1] - peaks[0] < GROWTH.get(name.split("-")[0], 2 * MiB), [round(p / MiB, 2) for p in peaks]


@pytest.mark.parametrize("name", ["inspect", "inspect-json", "repair", "fork"])
def test_unfinished_turn_closers_do_not_grow_memory(tmp_path: Path, name: str) -> None:
    """A Codex rollout of N and 4N ``task_started`` never ended (spilled past 1,024 turns,
    ``dialects/codex/open_turns.py``): a row, a JSON member and a ``turn_aborted`` closer per
    turn, made as walked. Now +0.67 (inspect), +0.52 (--json), +0.75 (repair) and +0.62 MiB
    (fork); on e162470 (the scan spills the turns, the closers held) these grew, at this N, 16.0,
    38.5, 29.2 and 21.4 MiB."""
    peaks = []
    for turns in (N, 4 * N):
        log = never_ended(tmp_path, turns)
        out = tmp_path / f"out-{turns}.jsonl"
        run = run_measured(
            _args(name, log, out, True, turns),
            address_space=2 << 30,
            cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, run.stderr
        if name == "inspect":
            assert run.stdout.count(b"\n            unfinished turn turn_") == turns
            assert f"would append {turns} closers:".encode() in run.stdout
        elif name == "inspect-json":
            doc = orjson.loads(run.stdout)
            assert len(doc["repair"]["closers"]) == len(doc["codex"]["open_turns"]) == turns
        else:
            aborted = [line for line in out.read_bytes().splitlines() if b'"turn_aborted"' in line]
            assert len(aborted) == turns and f'"turn_{turns - 1}"'.encode() in aborted[-1]
        peaks.append(run.peak_rss)
    print(name, [round(p / MiB, 2) for p in peaks], f"{(peaks[1] - peaks[0]) / MiB:+.2f}")
    assert peaks[1] - peaks[0] < GROWTH.get(name.split("-")[0], 2 * MiB), [round(p / MiB, 2) for p in peaks]
