"""Issue 17 (issue 11 item 1, issue 14's flat memory): past the spill threshold, the peak memory
of a Claude Code ``derive`` (every format) and ``report`` does not grow with the transcript's
entries. The same session of N and of 4N turns (the ``tool-one`` turn, its long strings cut so
many entries fit in a small file: about 26,000 and 106,000 graph entries); the children run
with the spill thresholds lowered to 1,024 entries (``sitecustomize``, so both sizes are far past
them), and their peak RSS is read from the kernel under an address-space limit, never timed.
Before: a word per line and per reply/result id plus a sorted list (~100 bytes an entry, ~8 MB
from N to 4N), the JSON document's system messages (one per turn), and the report's messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.claude_memory import SEED, _turn
from tests.adversarial.hostile_logs import run_measured
from tests.adversarial.lowered import DERIVE_COMMANDS, GRAPH_LOWERED, LoweredRuns, lowered_fixture

pytestmark = pytest.mark.slow  # eight children, the larger on a 70 MB transcript

MiB = 1 << 20
TURNS = 2_400
CUT = 48  # characters a long string keeps
KEPT = {"parentUuid", "isSidechain", "type", "message", "uuid", "timestamp", "sessionId", "version"}
KEPT |= {"rendered", "renderedRole", "attachment", "promptId", "cwd"}


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value[:CUT]
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {
            k: v if k in ("uuid", "parentUuid", "id", "tool_use_id") else _cut(v) for k, v in value.items()
        }
    return value


def _session(path: Path, turns: int) -> Path:
    """``turns`` turns of the seed's graph entries (one session, each turn parented to the last),
    with only the envelope keys derive reads and its long strings cut."""
    seed = [json.loads(line) for line in SEED.read_bytes().splitlines()]
    entries = [
        _cut({k: v for k, v in e.items() if k in KEPT}) for e in seed if isinstance(e.get("uuid"), str)
    ]
    last: str | None = None
    with path.open("wb") as out:
        for turn in range(turns):
            _, last = _turn(out, entries, turn, last)
    return path


where = lowered_fixture("claude-flat", GRAPH_LOWERED)


def _log(where: LoweredRuns, turns: int) -> Path:
    """The session of ``turns`` turns, written the first time it is asked for."""
    session = f"5f0c0a3e-0000-4000-8000-00000000000{int(turns != TURNS)}"
    return where.log(f"turns-{turns}", lambda path: _session(path, turns), session)


def _peak(where: LoweredRuns, turns: int, args: list[str]) -> tuple[int, bytes]:
    measured = where.run(_log(where, turns), args, ok=(0,))
    return measured.peak_rss, measured.stdout


def test_the_sessions_are_past_the_threshold(where: LoweredRuns) -> None:
    small = _log(where, TURNS).read_bytes().count(b'"uuid"')
    assert small > 24_000 and _log(where, 4 * TURNS).read_bytes().count(b'"uuid"') == 4 * small


@pytest.mark.parametrize("form", ["jsonl", "json", "markdown"])
def test_claude_derive_memory_does_not_grow_with_the_turns(where: LoweredRuns, form: str) -> None:
    small, _ = _peak(where, TURNS, DERIVE_COMMANDS[form])
    large, text = _peak(where, 4 * TURNS, DERIVE_COMMANDS[form])
    assert large - small < 3 * MiB, (small, large)
    if form == "jsonl":
        messages = [json.loads(line) for line in text.splitlines()]
        assert sum(m["role"] == "system" for m in messages) == 4 * TURNS  # one per turn
    elif form == "json":
        document = json.loads(text)
        assert len(document["messages"]) > 4 * 4 * TURNS


def test_claude_report_memory_does_not_grow_with_the_messages(where: LoweredRuns) -> None:
    small, _ = _peak(where, TURNS, [*DERIVE_COMMANDS["report"], "-o", "report.html"])
    large, _ = _peak(where, 4 * TURNS, [*DERIVE_COMMANDS["report"], "-o", "report.html"])
    assert large - small < 3 * MiB, (small, large)
    page = (_log(where, 4 * TURNS).parent / "report.html").read_text()
    assert "messages" in page


def test_claude_derive_memory_does_not_grow_with_filler_lines(tmp_path: Path) -> None:
    """A run of blank lines in a transcript (handed over by the reader as one issue) costs one
    gap record in derive's per-line offsets, not a word per line: 8 and 32 MiB of newlines
    (before: 8 bytes a line, 64 and 256 MB more; the scan then finds the log corrupt, exit 3)."""
    seed = SEED.read_bytes().splitlines(keepends=True)
    peaks = []
    for n, size in enumerate((8, 32)):
        log = tmp_path / f"5f0c0a3e-0000-4000-8000-00000000001{n}.jsonl"
        log.write_bytes(b"".join(seed[:5]) + b"\n" * (size * MiB) + b"".join(seed[5:]))
        measured = run_measured(
            ["derive", "--format", "jsonl", str(log)], address_space=2 << 30, cwd=tmp_path
        )
        assert measured.exit_code == 3 and "filler lines" in measured.stderr, measured.stderr
        peaks.append(measured.peak_rss)
    assert peaks[1] - peaks[0] < 4 * MiB, peaks
