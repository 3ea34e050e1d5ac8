"""Issue 11 item 1: a log whose last line is its one very long line. The scanner is fed a read's
batch of lines and a command keeps its scanner after the read (a write command through its
verification, ``derive`` through its projection): if it kept the batch it was fed last, a log
ending in a 16 MiB line would hold those bytes and their decoded objects to the end, where an
otherwise equal log that ends in short lines holds nothing of it (docs/reliability.md, "the
scanner's last batch of lines"). Each command's peak on the two logs is compared: the long line
last may cost what the long line earlier costs, and no more than allocator noise.

The same for a Claude Code transcript (a chain of prompts) and a Codex rollout (turns of one
prompt each), stop 35.

Measured by hand (``run_measured``, 16 MiB line, MiB): every command within 0.5 of the other
log; with the scanner keeping its last batch, ``derive`` 125.9 against 110.4. Claude before
stop 35: ``derive`` 195.8 against 130.0 (the scanner's last decoded line, the chain's last
entry while the span after it was written, and two joins of the span's dump), ``derive
--format jsonl`` 163.9 against 130.0; both within 2 now."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.adversarial.claude_hostile import SESSION
from tests.adversarial.claude_hostile import _entry as claude_entry
from tests.adversarial.codex_hostile import Lines, meta
from tests.adversarial.hostile_logs import EVERY_COMMAND, V4_HEADER, output_args, run_measured, v4_user

MiB = 1 << 20
LONG = 16 * MiB
NOISE = 4 * MiB  # a quarter of the line: what the same log's peak moves by between runs, and more
SHORT = 8_000  # short events after (or before) the long one: 3 MiB, past a read's 1 MiB of lines
# DSH: every command, its fork of the whole log (it has no turn); the others: no migrate
COMMANDS: list[list[str]] = [
    *map(list, EVERY_COMMAND),
    ["fork", "--created-at", "0", "--at", str(200 + SHORT)],
]
DIALECT_COMMANDS: list[list[str]] = [*map(list, EVERY_COMMAND[:-1]), ["fork"]]


def _dsh(long_last: bool) -> bytes:
    """A valid v4 log of 200 short prompts, then ``SHORT`` prompts of 200 letters and one of
    ``LONG`` letters: the long one last, or first of the two runs."""
    head = b"".join(v4_user(seq) for seq in range(200))
    first = 200
    if long_last:
        rest = b"".join(v4_user(seq, "z" * 200) for seq in range(first, first + SHORT))
        return V4_HEADER + head + rest + v4_user(first + SHORT, "x" * LONG)
    rest = b"".join(v4_user(seq, "z" * 200) for seq in range(first + 1, first + 1 + SHORT))
    return V4_HEADER + head + v4_user(first, "x" * LONG) + rest


def _texts(long_last: bool, short: int) -> list[str]:
    texts = ["z" * 200] * short
    return [*texts, "x" * LONG] if long_last else ["x" * LONG, *texts]


def _claude(long_last: bool) -> bytes:
    """A chain of ``SHORT`` + 1 prompts, the long one last or first."""
    out, parent = [], None
    for i, text in enumerate(_texts(long_last, SHORT)):
        entry = claude_entry("user", i + 1, parent, text)
        parent = entry["uuid"]
        out.append(orjson.dumps(entry) + b"\n")
    return b"".join(out)


def _codex(long_last: bool) -> bytes:
    """A rollout of ``SHORT // 4`` + 1 turns of one prompt each, the long one last or first."""
    lines, out = Lines(), [orjson.dumps(meta()) + b"\n"]
    for i, text in enumerate(_texts(long_last, SHORT // 4)):
        out.append(lines.event("task_started", turn_id=f"t{i}"))
        prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        out.append(lines.line("response_item", prompt))
        out.append(lines.event("task_complete", turn_id=f"t{i}"))
    return b"".join(out)


DIALECTS = {  # the log's name, how it is made, its commands
    "dsh": ("session.v4.jsonl", _dsh, COMMANDS),
    "claude": (f"{SESSION}.jsonl", _claude, DIALECT_COMMANDS),
    "codex": (
        "rollout-2026-12-01T13-00-00-01a231e1-985a-79f2-b0b7-1aef24b0bd09.jsonl",
        _codex,
        DIALECT_COMMANDS,
    ),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    made = {}
    for dialect, (name, write, _) in DIALECTS.items():
        for which, long_last in (("last", True), ("earlier", False)):
            log = tmp_path_factory.mktemp(f"{dialect}-{which}") / name
            log.write_bytes(write(long_last))
            made[dialect, which] = log
        assert made[dialect, "last"].stat().st_size == made[dialect, "earlier"].stat().st_size
    return made


def _peak(command: list[str], log: Path) -> tuple[int, int]:
    """The command's exit code and peak RSS on ``log`` (a write command publishes into a
    directory beside it)."""
    args = [*command, *output_args(command, log.parent), str(log)]
    m = run_measured(args, address_space=1 << 30, cwd=log.parent)
    assert "Traceback" not in m.stderr, (command, m.stderr)
    return m.exit_code, m.peak_rss


# Claude's derive reads the chain's entries back by offset (store.line_fetch), and the reader's
# cache keeps the latest line it read whatever its length (a repeated fetch of a zstd line
# behind the cursor would decode the file again from its first frame): a transcript ending in
# the long prompt keeps it there to the end, one that does not has let it go. Measured with the
# fixed mmap threshold (stop 35): 131.9 against 114.3 MiB, the line (16) and noise; with the
# scanner's last line or the chain's last entry held as well (before 429061c), 16 more.
READ_BACK = {("claude", "derive"): LONG}
CASES = [(dialect, command) for dialect, (_, _, commands) in DIALECTS.items() for command in commands]


@pytest.mark.parametrize(
    ("dialect", "command"), CASES, ids=[f"{d}-{'-'.join(c).replace('--', '')}" for d, c in CASES]
)
def test_a_long_last_line_is_not_held_past_its_batch(
    logs: dict[tuple[str, str], Path], dialect: str, command: list[str]
) -> None:
    code_last, last = _peak(command, logs[dialect, "last"])
    code_earlier, earlier = _peak(command, logs[dialect, "earlier"])
    assert (code_last, code_earlier) == (0, 0), command
    allowed = NOISE + READ_BACK.get((dialect, command[0]), 0)
    assert last <= earlier + allowed, (command, last / MiB, "MiB against", earlier / MiB)
