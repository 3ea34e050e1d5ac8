"""Issue 11 item 1: a log whose last line is its one very long line. The scanner is fed a read's
batch of lines and a command keeps its scanner after the read (a write command through its
verification, ``derive`` through its projection): if it kept the batch it was fed last, a log
ending in a 16 MiB line would hold those bytes and their decoded objects to the end, where an
otherwise equal log that ends in short lines holds nothing of it (docs/reliability.md, "the
scanner's last batch of lines"). Each command's peak on the two logs is compared: the long line
last may cost what the long line earlier costs, and no more than allocator noise.

Measured by hand (``run_measured``, 16 MiB line, MiB): every command within 0.5 of the other
log; with the scanner keeping its last batch, ``derive`` 125.9 against 110.4."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.hostile_logs import V4_HEADER, run_measured, v4_user

MiB = 1 << 20
LONG = 16 * MiB
NOISE = 4 * MiB  # a quarter of the line: what the same log's peak moves by between runs, and more
SHORT = 8_000  # short events after (or before) the long one: 3 MiB, past a read's 1 MiB of lines
COMMANDS: list[list[str]] = [
    ["validate"],
    ["inspect"],
    ["inspect", "--timeline", "--json"],
    ["derive"],
    ["derive", "--format", "jsonl"],
    ["repair"],
    ["migrate"],
    ["fork", "--created-at", "0", "--at", str(200 + SHORT)],  # the whole log: it has no turn
]


def _log(long_last: bool) -> bytes:
    """A valid v4 log of 200 short prompts, then ``SHORT`` prompts of 200 letters and one of
    ``LONG`` letters: the long one last, or first of the two runs."""
    head = b"".join(v4_user(seq) for seq in range(200))
    first = 200
    if long_last:
        rest = b"".join(v4_user(seq, "z" * 200) for seq in range(first, first + SHORT))
        return V4_HEADER + head + rest + v4_user(first + SHORT, "x" * LONG)
    rest = b"".join(v4_user(seq, "z" * 200) for seq in range(first + 1, first + 1 + SHORT))
    return V4_HEADER + head + v4_user(first, "x" * LONG) + rest


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for name, long_last in (("last", True), ("earlier", False)):
        directory = tmp_path_factory.mktemp(name)
        log = directory / "session.v4.jsonl"
        log.write_bytes(_log(long_last))
        made[name] = log
    assert made["last"].stat().st_size == made["earlier"].stat().st_size
    return made


def _peak(command: list[str], log: Path) -> tuple[int, int]:
    """The command's exit code and peak RSS on ``log`` (a write command publishes beside it)."""
    out = []
    if command[0] in ("repair", "migrate", "fork"):
        target = log.parent / f"out-{command[0]}.v4.jsonl"
        target.unlink(missing_ok=True)
        out = ["-o", str(target)]
    m = run_measured([*command, *out, str(log)], address_space=1 << 30, cwd=log.parent)
    assert "Traceback" not in m.stderr, (command, m.stderr)
    return m.exit_code, m.peak_rss


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c).replace("--", ""))
def test_a_long_last_line_is_not_held_past_its_batch(logs: dict[str, Path], command: list[str]) -> None:
    code_last, last = _peak(command, logs["last"])
    code_earlier, earlier = _peak(command, logs["earlier"])
    assert (code_last, code_earlier) == (0, 0), command
    assert last <= earlier + NOISE, (command, last / MiB, "MiB against", earlier / MiB)
