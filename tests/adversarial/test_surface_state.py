"""Issue 11 item 1: the projection fold of a dsh log that is never compacted keeps every surface
node; its state per node is a machine word (the node list), a byte (the node's type code) and —
derive by address — a machine word (the line offset), never Python objects. Peak RSS from the
kernel for a child under an address-space limit: 180,000 more nodes cost validate and derive a
few MB (held as objects: about 21 MB and 41 MB)."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from sesstool.core.fold import Fold, NodeTypes, Projected
from tests.adversarial.hostile_logs import run_measured, v4_messages

MiB = 1 << 20


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    where = tmp_path_factory.mktemp("nodes")
    made: dict[int, Path] = {}
    for nodes in (20_000, 200_000):
        made[nodes] = v4_messages(where / f"session-{nodes}.v4.jsonl", nodes, lambda seq: "m")
    return made


@pytest.mark.parametrize(
    ("command", "bound"), [(["validate"], 6 * MiB), (["derive", "--format", "jsonl"], 10 * MiB)]
)
def test_surface_state_per_node_is_a_few_bytes(logs: dict[int, Path], command: list[str], bound: int) -> None:
    small, big = (
        run_measured([*command, str(log)], address_space=2 << 30, cwd=log.parent)
        for _, log in sorted(logs.items())
    )
    assert small.exit_code == big.exit_code == 0, big.stderr
    assert big.peak_rss - small.peak_rss < bound, (command, big.peak_rss, small.peak_rss)
    if command[0] == "derive":
        assert big.stdout.count(b"\n") == 200_000


def test_the_compact_state_behaves_as_the_dicts_it_replaced() -> None:
    types, projected = NodeTypes(), Projected()
    types[3] = "user/message"
    types[7] = "tool/result"
    assert 3 in types and 4 not in types and -1 not in types and "3" not in types and 10**9 not in types
    assert types[7] == "tool/result"
    del types[3]
    assert 3 not in types
    with pytest.raises(KeyError):
        types[3]
    projected[2] = 40
    projected[5] = None
    projected[6] = -41  # a message orjson cannot encode: -1 - offset
    assert projected.get(2) == 40 and projected.get(5) is None and projected.get(9, "d") == "d"
    assert list(projected.of(array("q", [6, 5, 2, 9]))) == [-41, 40]
    assert projected.pop(2) == 40 and projected.pop(2, "gone") == "gone"
    projected[8] = {"role": "user"}  # kept in memory: the table becomes a dict, values kept
    assert projected.get(6) == -41 and projected[8] == {"role": "user"} and projected.get(5) is None
    fold = Fold()
    fold.append(0, "user/message")
    twin = fold.copy()
    twin.append(1, "assistant/message")
    assert list(fold.nodes) == [0] and 1 not in fold.node_type and 1 in twin.node_type
