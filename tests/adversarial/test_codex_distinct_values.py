"""Issue 11 item 1: what grows with the number of DISTINCT VALUES a Codex rollout puts in a field.
Every line names its own line type and its own ``response_item`` payload type (unknown to Codex
0.171, which tolerates them: spec agent-formats §2). The scanner's counts by line type and by
item type and its set of reported unknown kinds keep the first ``first_seen.FIRST_SEEN`` values
and past them only that there were more (docs/format.md, "Memory"). The same rollout of N and 4N
such pairs, N = 20,000: peak RSS of a child from the kernel, never timed.

On main's code before this change (a dict entry per type and item type, a set entry per unknown
kind) each of these children grew by several MiB from N to 4N (figures in the commit message):
every memory test here fails there."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from sesstool.core.first_seen import FIRST_SEEN
from tests.adversarial.hostile_logs import assert_flat, json_objects, output_of, peak_of
from tests.conftest import FIXTURES

N = 20_000
SEED = sorted((FIXTURES / "codex" / "tool-call").glob("*.jsonl"))[0]
_COMMANDS = {
    "validate": ["validate"],
    "inspect": ["inspect"],
    "inspect-json": ["inspect", "--json"],
    "derive": ["derive", "--format", "jsonl"],
}


def distinct_types(where: Path, n: int) -> Path:
    """The seed's session_meta, then ``n`` lines of their own line type and ``n`` response items
    of their own item type."""
    meta = next(e for e in map(orjson.loads, SEED.read_bytes().splitlines()) if e["type"] == "session_meta")
    path = where / f"rollout-distinct-{n}.jsonl"
    if path.exists():
        return path
    when = meta["timestamp"]
    with open(path, "wb") as f:
        f.write(orjson.dumps(meta) + b"\n")
        for i in range(n):
            f.write(orjson.dumps({"timestamp": when, "type": f"line-{i}", "payload": {}}) + b"\n")
            item = {"timestamp": when, "type": "response_item", "payload": {"type": f"item-{i}"}}
            f.write(orjson.dumps(item) + b"\n")
    return path


def test_the_counts_stop_at_first_seen_and_say_so(tmp_path: Path) -> None:
    log = distinct_types(tmp_path, 200)
    assert f"… and more (the first {FIRST_SEEN} shown)" in output_of(["inspect"], log).decode()
    doc = json.loads(output_of(["inspect", "--json"], log))
    found = [v for v in json_objects(doc) if "by_item" in v]
    assert len(found) == 1 and found[0]["more"] == ["by_type", "by_item"]
    assert len(found[0]["by_type"]) == len(found[0]["by_item"]) == FIRST_SEEN  # type: ignore[arg-type]
    assert list(found[0]["by_item"])[:2] == ["item-0", "item-1"]  # type: ignore[call-overload]


def test_unknown_kinds_past_first_seen_are_said_at_every_line_never_not_at_all(tmp_path: Path) -> None:
    log = distinct_types(tmp_path, FIRST_SEEN + 6)
    extra = log.read_bytes().splitlines()[-2:]  # the last pair again: no longer told apart
    log.write_bytes(log.read_bytes() + b"\n".join(extra) + b"\n")
    doc = json.loads(output_of(["validate", "--format", "json", "--max-findings", "10000"], log))
    messages = [str(f["message"]) for f in json_objects(doc) if f.get("rule") == "codex-unknown-item-type"]
    first = [m for m in messages if "(first seen here;" in m]
    again = [m for m in messages if "(one of more than 64 such kinds;" in m]
    # 32 line types and 32 item types are kept (in the order met); every kind met after them is
    # said at each of its lines, the repeated last pair too; nothing goes unsaid
    assert len(first) == FIRST_SEEN and len(messages) == len(first) + len(again)
    assert len(again) == 2 * (FIRST_SEEN + 6) - FIRST_SEEN + 2
    for i in range(FIRST_SEEN + 6):
        assert any(f"'line-{i}'" in m for m in messages) and any(f"'item-{i}'" in m for m in messages)


@pytest.mark.slow
@pytest.mark.parametrize("command", _COMMANDS)
def test_memory_does_not_grow_with_distinct_types(
    tmp_path_factory: pytest.TempPathFactory, command: str
) -> None:
    where = tmp_path_factory.getbasetemp() / "codex-distinct"
    where.mkdir(exist_ok=True)
    small, large = (peak_of(_COMMANDS[command], distinct_types(where, n)) for n in (N, 4 * N))
    assert_flat(small, large)
