"""Issue 11 item 1: what grows with the number of DISTINCT VALUES a dsh log puts in a field. Every
turn ends with its own ``turn/end`` reason kind and is followed by an event of its own unknown
type marked ignorable (spec session-format §1.4, §4: kept opaque, reported once per type). The
scanner's counts by event type and by turn/end reason and its reported-once keys keep the first
``first_seen.FIRST_SEEN`` values and past them only that there were more (docs/format.md,
"Memory"). The same log of N and 4N turns, N = 20,000: peak RSS of a child from the kernel,
never timed.

On main's code before this change (a dict entry per event type and per reason, a set entry per
reported type) each of these children grew by several MiB from N to 4N (figures in the commit
message): every memory test here fails there."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from sesstool.core.first_seen import FIRST_SEEN
from tests.adversarial.hostile_logs import assert_flat, json_objects, output_of, peak_of

N = 20_000
_COMMANDS = {
    "validate": ["validate"],
    "inspect": ["inspect"],
    "inspect-json": ["inspect", "--json"],
    "derive": ["derive", "--format", "jsonl"],
}


def distinct_values(where: Path, n: int) -> Path:
    """A dsh v4 log of ``n`` turns, each ended with its own reason kind and followed by an
    ignorable event of its own type."""
    path = where / f"dsh-distinct-{n}" / "session.v4.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 4, "id": "s", "createdAt": 1000, "isSeeded": False}
    with open(path, "wb") as f:
        f.write(orjson.dumps({**header, "delegationDepth": 0}) + b"\n")
        for i in range(n):
            seq, when, turn = 3 * i, 1001 + i, i + 1
            f.write(
                orjson.dumps({"type": "turn/start", "seq": seq, "time": when, "data": {"turn": turn}})
                + b"\n"
                + orjson.dumps(
                    {
                        "type": "turn/end",
                        "seq": seq + 1,
                        "time": when,
                        "data": {"turn": turn, "reason": {"kind": f"k{i}"}},
                    }
                )
                + b"\n"
                + orjson.dumps(
                    {"type": f"x/kind-{i}", "seq": seq + 2, "time": when, "data": {}, "ignorable": True}
                )
                + b"\n"
            )
    return path


def test_the_counts_stop_at_first_seen_and_say_so(tmp_path: Path) -> None:
    log = distinct_values(tmp_path, 200)
    text = output_of(["inspect"], log).decode()
    assert text.count(f"… and more (the first {FIRST_SEEN} shown)") == 2, text
    doc = json.loads(output_of(["inspect", "--json"], log))
    found = [v for v in json_objects(doc) if "turn_ends" in v]
    assert len(found) == 1 and found[0]["more"] == ["by_type", "turn_ends"]
    ends = found[0]["turn_ends"]
    assert isinstance(ends, dict) and len(ends) == FIRST_SEEN and ends["k0"] == 1
    validated = output_of(["validate", "--max-findings", "100000"], log).decode()
    # every type is said: the first 64 once each, each type after them at each of its lines
    assert validated.count("marked ignorable") == 200
    assert all(f'"x/kind-{i}" marked ignorable' in validated for i in range(200))
    again = distinct_values(tmp_path / "again", 70)  # the last type's line written twice
    lines = again.read_bytes().splitlines()
    twice = orjson.loads(lines[-1])
    twice["seq"] += 1
    again.write_bytes(again.read_bytes() + orjson.dumps(twice) + b"\n")
    validated = output_of(["validate", "--max-findings", "100000"], again).decode()
    assert validated.count('"x/kind-69" marked ignorable') == 2 and validated.count('"x/kind-0" ') == 1


@pytest.mark.slow
@pytest.mark.parametrize("command", _COMMANDS)
def test_memory_does_not_grow_with_distinct_values(
    tmp_path_factory: pytest.TempPathFactory, command: str
) -> None:
    where = tmp_path_factory.getbasetemp() / "dsh-distinct"
    where.mkdir(exist_ok=True)
    small, large = (peak_of(_COMMANDS[command], distinct_values(where, n)) for n in (N, 4 * N))
    assert_flat(small, large)
