"""The cost of finding subagent children (spec §13.A item 5) and a fleet run's child index.

* A migrate plan (the dry run, and the plan step of every migration) decides its note from the
  layout/binding check alone: it lists no root and reads no child header.
* A fleet run's index (``fleet.run.with_child_index``) gives byte-identical outputs to the walk
  of `sesstool migrate`, on ``fixtures/migrate/subagent-catalog`` raw and zstd.
* The index is the root as listed when the run starts: a child created after it is not
  catalogued by that run; a child re-pointed away after it is not either (each candidate's
  header is re-read when used).

The operation count of a whole `fleet migrate` (O(S) header reads for a root of S sessions)
is in tests/fleet/test_child_index_fleet.py (it needs Dask).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest

from sesstool.engine import children
from sesstool.engine.migrate import MigrateRequest, run_migrate
from sesstool.fleet.run import FleetRequest, plan, with_child_index
from sesstool.fleet.work import FleetSettings, Item, process
from sesstool.store.paths import session_dirs
from tests.conftest import FIXTURES, plaintext_of
from tests.migrate.test_subagent_catalog import _zstd_root

CASE = FIXTURES / "migrate" / "subagent-catalog"
PARENT = Path("--work--") / "parent-1" / "session.v3.jsonl"
GOLDEN = CASE / "expected" / "session.v4.jsonl"


def make_root(where: Path, fillers: int = 0, zstd: bool = False) -> Path:
    """A copy of the fixture root plus ``fillers`` top-level v3 sessions bound to their
    directories (``--filler--/s-N``): each one is migrated, and each one's migration would walk
    the root on the old code."""
    root = where / "root"
    shutil.copytree(CASE / "root", root)
    for n in range(fillers):
        session = root / "--filler--" / f"s-{n:05d}"
        session.mkdir(parents=True)
        header = (
            f'{{"type":"session","version":3,"id":"s-{n:05d}","createdAt":{3000 + n},'
            '"cwd":"/work","isSeeded":false,"delegationDepth":0}\n'
        )
        (session / "session.v3.jsonl").write_text(header)
    if zstd:
        _zstd_root(root)
    return root


class Counts:
    """Header reads and root listings of engine.children, counted by wrapping them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.headers = 0
        self.listings = 0
        header, listing = children._header, session_dirs

        def counted_header(*args: Any) -> Any:
            self.headers += 1
            return header(*args)

        def counted_listing(*args: Any) -> Any:
            self.listings += 1
            return listing(*args)

        monkeypatch.setattr(children, "_header", counted_header)
        monkeypatch.setattr(children, "session_dirs", counted_listing)


def _items(root: Path) -> Collection[Item]:
    return plan(FleetRequest((str(root),), FleetSettings("migrate"))).items


def _indexed(root: Path) -> tuple[FleetSettings, Collection[Item]]:
    request = FleetRequest((str(root),), FleetSettings("migrate"))
    items = plan(request).items
    return with_child_index(request, items).settings, items


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_plan_reads_no_child_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_root(tmp_path)
    counts = Counts(monkeypatch)
    report = run_migrate(MigrateRequest(str(root / PARENT), dry_run=True))
    assert report.status == "planned" and report.steps
    assert (counts.headers, counts.listings) == (0, 0)
    # the note still comes from the layout check: a copy outside the root gets it
    outside = tmp_path / "parent.jsonl"
    shutil.copyfile(root / PARENT, outside)
    plan_notes = run_migrate(MigrateRequest(str(outside), to=4, dry_run=True)).notes
    assert any("no subagent children looked for" in note for note in plan_notes)
    assert (counts.headers, counts.listings) == (0, 0)


def test_one_migration_walks_its_root_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_root(tmp_path, fillers=5)
    counts = Counts(monkeypatch)
    report = run_migrate(MigrateRequest(str(root / PARENT)))
    assert report.status == "migrated"
    sessions = sum(1 for p in root.glob("*/*") if p.is_dir())
    assert counts.listings == 1
    assert counts.headers == sessions - 1  # every session but the parent, once
    assert plaintext_of(report.target or Path()) == GOLDEN.read_bytes()


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_the_index_gives_the_walks_bytes(tmp_path: Path, zstd: bool) -> None:
    walked = make_root(tmp_path / "walked", fillers=3, zstd=zstd)
    indexed = make_root(tmp_path / "indexed", fillers=3, zstd=zstd)
    plain = FleetSettings("migrate")
    settings, items = _indexed(indexed)
    assert settings.children is not None
    assert settings.children.candidates(indexed, "parent-1")
    walked_rows = [process(plain, item) for item in _items(walked)]
    indexed_rows = [process(settings, item) for item in items]
    assert [r.status for r in walked_rows] == [r.status for r in indexed_rows]
    assert {r.status for r in indexed_rows} == {"migrated"}
    assert _tree(walked) == _tree(indexed)
    parent = indexed / (str(PARENT).replace("v3", "v4") + (".zstd" if zstd else ""))
    assert plaintext_of(parent) == GOLDEN.read_bytes()


def _catalogued(root: Path) -> list[str]:
    import json

    out = root / "--work--" / "parent-1" / "session.v4.jsonl"
    events = [json.loads(line) for line in out.read_bytes().splitlines()[1:]]
    return [e["data"]["childId"] for e in events if e["type"] == "subagent/catalog"]


def _child(root: Path, child_id: str, parent: str, created: int) -> None:
    session = root / "--work--" / child_id
    session.mkdir(exist_ok=True)
    (session / "session.v3.jsonl").write_text(
        f'{{"type":"session","version":3,"id":"{child_id}","createdAt":{created},"cwd":"/work",'
        f'"parentSession":"{parent}","isSeeded":false,"origin":"subagent","delegationDepth":1}}\n'
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # created after the listing: not this run's candidate (`sesstool migrate` would find it)
        (lambda root: _child(root, "kid-late", "parent-1", 1900), ["kid-known", "kid-c", "kid-a", "kid-b"]),
        # re-pointed away after the listing: its header is re-read when used, so it is dropped
        (lambda root: _child(root, "kid-a", "parent-9", 2000), ["kid-known", "kid-c", "kid-b"]),
    ],
    ids=["created", "re-pointed"],
)
def test_the_index_is_the_root_as_listed_when_the_run_starts(
    tmp_path: Path, change: Callable[[Path], None], expected: list[str]
) -> None:
    root = make_root(tmp_path)
    settings, items = _indexed(root)
    change(root)
    parent = next(item for item in items if item.path.endswith(str(PARENT)))
    row = process(settings, parent)
    assert row.status == "migrated", row.message
    assert _catalogued(root) == expected
