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
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sesstool.core import held_map
from sesstool.core.upgrade import UpgradeRefused
from sesstool.core.upgrade.records import decode_records, encode_header, encode_records
from sesstool.core.upgrade.v4 import STEP, ChildFact
from sesstool.store.run_spill import RunSpill
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


def _catalog(seq: int, data: Any) -> dict[str, Any]:
    return {"type": "subagent/catalog", "seq": seq, "time": 8, "data": data}


def _other(n: int) -> dict[str, Any]:
    return {"version": 1, "childId": f"other-{n}", "childCreatedAt": n, "mode": "unknown"}


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ({"version": 7}, _other(0), "supported"),  # the malformed one first
        (_other(0), {"version": 7}, "duplicate catalog child other-0"),  # the duplicate first
    ],
)
def test_the_first_entry_that_refuses_names_the_refusal(first: Any, second: Any, reason: str) -> None:
    """Entries are judged in log order: a duplicate of an entry for a child that is not given
    (one that is not kept) before a malformed one refuses as a duplicate, and the other way
    round as malformed; the entries between them do not matter."""
    events = [_catalog(0, _other(0)), _catalog(1, first)]
    events += [_catalog(2 + n, _other(1 + n)) for n in range(50)] + [_catalog(52, second)]
    with pytest.raises(UpgradeRefused, match=reason):
        _migrate(events, (ChildFact("k", 5),))


def test_an_inherited_cut_forgets_the_refusals_before_it() -> None:
    events = [_catalog(0, {"version": 7}), _catalog(1, _other(0)), _catalog(2, _other(0))]
    events.append({"type": "session/end-seed", "seq": 3, "time": 9, "data": {"inherited": True}})
    events.append(_catalog(4, _other(0)))
    out = _migrate(events, (ChildFact("k", 5),))
    assert out[:5] == events and [e["data"]["childId"] for e in out[5:]] == ["k"]


def test_without_children_the_entries_are_not_judged() -> None:
    """No evidence, no completion: nothing is appended and nothing refuses (as before)."""
    events = [_catalog(0, {"version": 7}), _catalog(1, _other(0)), _catalog(2, _other(0))]
    assert _migrate(events, ()) == events


def _peak_of_catalogue(n: int) -> tuple[int, list[dict[str, Any]]]:
    """The traced peak of v3 → v4 over ``n`` catalogue entries for children that are not given,
    then one for the given child, with a run's spill and ``HeldMap`` lowered to 256."""
    header = _header(False)
    lines = (
        json.dumps(_catalog(s, _other(s) if s < n else _entry(1, 5)), separators=(",", ":")).encode()
        for s in range(n + 1)
    )
    tail: list[dict[str, Any]] = []
    tracemalloc.start()
    try:
        step = STEP.with_children((ChildFact("k", 5), ChildFact("j", 6))).with_spill(RunSpill())
        for rec in step.run(header, decode_records(lines)):
            tail = list(rec.events)  # the last record only
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, tail


def test_the_catalogue_kept_does_not_grow_with_its_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 item 1: the step kept every entry's payload after the cut until the last event;
    now the given children's entries, the ids named (a ``HeldMap``, spilled) and the first
    refusal. 2,000 → 8,000 entries: on the list's code the peak grew by 2.2 MB."""
    monkeypatch.setattr(held_map, "HELD_AT", 256)
    _peak_of_catalogue(300)  # what is made once (the spill file's module, its first tables)
    small, tail = _peak_of_catalogue(2_000)
    assert [e["data"]["childId"] for e in tail] == ["j"]  # "k" is catalogued already
    large, _ = _peak_of_catalogue(8_000)
    assert large - small < 200_000, (small, large)
