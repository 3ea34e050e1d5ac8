"""v3 → v4 catalogue completion (spec §13.A item 5): a parent migrated in its dsh root gets one
``subagent/catalog`` per subagent child the log does not catalogue yet.

Fixture: ``fixtures/migrate/subagent-catalog/root`` — the parent ``parent-1`` (which already
catalogues ``kid-known``), its children ``kid-a``, ``kid-b`` (no descriptor, same createdAt:
ordered by id), ``kid-c`` (one v2 descriptor, in another project directory), a subagent of
another parent and a top-level session. Golden: ``expected/session.v4.jsonl`` (refresh with
``SESSTOOL_UPDATE_GOLDENS=1`` and read the diff).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sesstool.core.upgrade import UpgradeRefused
from sesstool.core.upgrade.records import decode_records, encode_header, encode_records
from sesstool.core.upgrade.v4 import STEP, ChildFact
from tests.conftest import FIXTURES, UPDATE_GOLDENS, Sesstool, plaintext_of

CASE = FIXTURES / "migrate" / "subagent-catalog"
PARENT = Path("--work--") / "parent-1" / "session.v3.jsonl"
GOLDEN = CASE / "expected" / "session.v4.jsonl"


def _zstd_root(root: Path) -> None:
    """Re-encode every log of a root as zstd (header frame + one body frame, §9.2)."""
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    for log in sorted(root.rglob("*.jsonl")):
        lines = log.read_bytes().split(b"\n")[:-1]
        data = cctx.compress(lines[0] + b"\n")
        if len(lines) > 1:
            data += cctx.compress(b"".join(line + b"\n" for line in lines[1:]))
        log.with_name(log.name + ".zstd").write_bytes(data)
        log.unlink()


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_parent_in_its_root_gets_the_missing_catalog(sesstool: Sesstool, tmp_path: Path, zstd: bool) -> None:
    root = tmp_path / "root"
    shutil.copytree(CASE / "root", root)
    if zstd:
        _zstd_root(root)
    source = root / (str(PARENT) + (".zstd" if zstd else ""))
    result = sesstool("migrate", "--json", str(source))
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    out = Path(report["output"]["path"])
    assert out.name == ("session.v4.jsonl.zstd" if zstd else "session.v4.jsonl")
    plain = plaintext_of(out)
    if UPDATE_GOLDENS and not zstd:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_bytes(plain)
    assert plain == GOLDEN.read_bytes()
    appended = [json.loads(line) for line in plain.split(b"\n")[-4:-1]]
    assert [e["data"]["childId"] for e in appended] == ["kid-c", "kid-a", "kid-b"]
    unknown = {"version": 1, "childId": "kid-a", "childCreatedAt": 2000, "mode": "unknown"}
    assert appended[1]["data"] == unknown
    assert all(e["time"] == 2601 for e in appended)  # the last event's time


def test_outside_a_root_nothing_is_looked_for(sesstool: Sesstool, tmp_path: Path) -> None:
    source = tmp_path / "parent.jsonl"
    shutil.copyfile(CASE / "root" / PARENT, source)
    result = sesstool("migrate", "--json", "--to", "4", str(source))
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert any("no subagent children looked for" in note for note in report["notes"])
    out = Path(report["output"]["path"]).read_bytes()
    assert out.count(b'"type":"subagent/catalog"') == 1  # only the parent's own entry


def test_a_corrupt_child_refuses(sesstool: Sesstool, tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(CASE / "root", root)
    kid = root / "--work--" / "kid-a" / "session.v3.jsonl"
    kid.write_bytes(
        kid.read_bytes() + b'{"type":"turn/start","seq":5,"time":1,"data":{"turn":1}}\n'
        b'{"type":"turn/end","seq":6,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}\n'
    )
    result = sesstool("migrate", str(root / PARENT))
    assert result.exit_code == 4, result.stderr
    assert "child session 'kid-a'" in result.stderr and "corrupt" in result.stderr
    assert not (root / "--work--" / "parent-1" / "session.v4.jsonl").exists()


def _header(seeded: bool) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": "p",
        "createdAt": 7,
        "isSeeded": seeded,
        "delegationDepth": 0,
    }


def _migrate(events: list[dict[str, Any]], children: tuple[ChildFact, ...]) -> list[dict[str, Any]]:
    header = _header(False)
    lines = [json.dumps(e, separators=(",", ":")).encode() for e in events]
    step = STEP.with_children(children)
    body = encode_records(step.run(header, decode_records(lines)), 4)
    out = encode_header(step.header(header)) + b"".join(body)
    return [json.loads(line) for line in out.split(b"\n")[1:-1]]


def test_no_events_takes_the_header_time_and_seq_zero() -> None:
    out = _migrate([], (ChildFact("k", 5),))
    assert out == [
        {"type": "subagent/catalog", "seq": 0, "time": 7,
         "data": {"version": 1, "childId": "k", "childCreatedAt": 5, "mode": "unknown"}}
    ]  # fmt: skip


def test_descriptor_facts() -> None:
    v1 = ChildFact("a", 1, ({"version": 1, "provider": "p", "label": "L"},))
    two = ChildFact("b", 2, ({"version": 2, "provider": "p", "mode": "one-shot"},) * 2)
    unknown_version = ChildFact("c", 3, ({"version": 9},))
    out = _migrate([], (v1, two, unknown_version))
    assert [e["data"] for e in out] == [
        {"version": 0, "childId": "a", "childCreatedAt": 1, "mode": "continuable", "label": "L"},
        {"version": 1, "childId": "b", "childCreatedAt": 2, "mode": "unknown"},
        {"version": 1, "childId": "c", "childCreatedAt": 3, "mode": "unknown"},
    ]


def _entry(version: int, created: int) -> dict[str, Any]:
    return {"version": version, "childId": "k", "childCreatedAt": created, "mode": "unknown"}


@pytest.mark.parametrize(
    ("catalogued", "child", "reason"),
    [
        (_entry(1, 9), ChildFact("k", 5), "conflicts"),
        (_entry(0, 5), ChildFact("k", 5), "supported"),
        (None, ChildFact("k", 5, ({"version": 2, "provider": 3, "mode": "one-shot"},)), "provider"),
        (None, ChildFact("k", 5, ({"version": 2, "provider": "p", "mode": "forever"},)), "mode"),
    ],
)
def test_contradictions_refuse(catalogued: Any, child: ChildFact, reason: str) -> None:
    events = [{"type": "subagent/catalog", "seq": 0, "time": 8, "data": catalogued}] if catalogued else []
    with pytest.raises(UpgradeRefused, match=reason):
        _migrate(events, (child,))


def test_catalogue_before_the_inherited_cut_is_the_parents() -> None:
    header_events = [
        {"type": "subagent/catalog", "seq": 0, "time": 8,
         "data": {"version": 1, "childId": "k", "childCreatedAt": 5, "mode": "unknown"}},
        {"type": "session/end-seed", "seq": 1, "time": 9, "data": {"inherited": True}},
    ]  # fmt: skip
    header = _header(True)
    step = STEP.with_children((ChildFact("k", 5),))
    lines = [json.dumps(e, separators=(",", ":")).encode() for e in header_events]
    out = [e for rec in step.run(header, decode_records(lines)) for e in rec.events]
    assert out[-1]["type"] == "subagent/catalog" and out[-1]["seq"] == 2
