"""One report per file (issue 11 item 1): ``validate``'s results, ``inspect``'s side files and
``list``'s rows are kept in a spool (``store.spool.ItemSpool``) or a sorted spill table
(``engine.listing.SortedRows``) past a bound. Spilled from the first item, after a few, or held
in memory, every output is the same byte for byte and the exit status the same: every fixture
tree, every format, raw and zstd, side files that cannot be read, hostile names and times.
(Against main's code before this change the outputs were compared the same way by hand for the
fixture trees: docs/reliability.md.)"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sesstool.engine import listing
from sesstool.engine.listing import SessionRow, SortedRows
from sesstool.store import spool
from sesstool.store.spool import ItemSpool
from tests.adversarial.many_files import write_session
from tests.conftest import FIXTURES, Run, Sesstool

TREES = ["claude", "codex", "dsh", "mini", "migrate", "not-a-log"]
FORMATS = ["text", "json", "github", "junit", "sarif"]
# (bytes of the spool in memory, rows sorted in memory): spilled at once, after some, never
BOUNDS = [(0, 0), (3000, 1), (1 << 40, 1 << 30)]


def _runs(sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, *args: str) -> list[Run]:
    found = []
    for memory, rows in BOUNDS:
        monkeypatch.setattr(spool, "ITEMS_MEMORY", memory)
        monkeypatch.setattr(listing, "ROWS_HELD", rows)
        found.append(sesstool(*args))
    return found


def _same(runs: list[Run]) -> None:
    spilled, some, held = runs
    for run in (spilled, some):
        assert run.exit_code == held.exit_code, run.stderr
        assert run.stdout_bytes == held.stdout_bytes
    assert held.stdout_bytes


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Claude Code home whose session has 30 subagent files (one in ten not a log, one in ten
    leaving a call open), one of them zstd, one a link to nowhere, one named with ESC and a
    newline; and a plain directory of copies of every dsh fixture."""
    home = tmp_path_factory.mktemp("many")
    main = write_session(home, 30)
    sides = main.parent / main.name.removesuffix(".jsonl") / "subagents"
    zstd = FIXTURES / "claude" / "zstd" / "subagent"
    (seed,) = sorted(zstd.glob("*/subagents/agent-*.jsonl.zstd"))
    shutil.copy(seed, sides / "agent-zz.jsonl.zstd")
    (sides / "agent-gone.jsonl").symlink_to(home / "nowhere")
    shutil.copy(sides / "agent-a0000000000000001.jsonl", sides / "agent-\x1b[31m\nx.jsonl")
    return main


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("tree", TREES)
def test_validate_of_every_fixture_tree_is_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, tree: str, fmt: str
) -> None:
    _same(_runs(sesstool, monkeypatch, "validate", "--format", fmt, str(FIXTURES / tree)))
    quiet = ["validate", "-q", "--format", fmt, "--fail-on", "warning", "--max-findings", "2"]
    _same(_runs(sesstool, monkeypatch, *quiet, "--fixture", str(FIXTURES / tree), "missing.jsonl"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_validate_of_many_side_files_is_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, many: Path, fmt: str
) -> None:
    runs = _runs(sesstool, monkeypatch, "validate", "--format", fmt, str(many))
    _same(runs)
    assert runs[0].exit_code == 1


@pytest.mark.parametrize("args", [[], ["--json"], ["--timeline"], ["--json", "--timeline"]])
def test_inspect_with_side_files_is_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, many: Path, args: list[str]
) -> None:
    mains = [
        many,
        *sorted((FIXTURES / "claude").glob("*/*/*.jsonl*")),
        *sorted((FIXTURES / "claude").glob("*/*.jsonl")),
    ]
    with_sides = [p for p in mains if (p.parent / p.name.split(".")[0] / "subagents").is_dir()]
    assert len(with_sides) >= 5
    for main in with_sides:
        _same(_runs(sesstool, monkeypatch, "inspect", *args, str(main)))
    _same(_runs(sesstool, monkeypatch, "inspect", *args, *map(str, with_sides)))


@pytest.mark.parametrize("args", [["list"], ["list", "--json"], ["inspect"], ["inspect", "--json"]])
def test_listing_every_root_is_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, many: Path, args: list[str]
) -> None:
    home = many.parent.parent.parent
    roots = [FIXTURES, *(FIXTURES / tree for tree in TREES), FIXTURES / "claude" / "projects", home]
    for root in roots:
        _same(_runs(sesstool, monkeypatch, *args, str(root)))
    if args[0] == "inspect":  # several roots in one document
        _same(_runs(sesstool, monkeypatch, *args, *map(str, roots[1:4]), str(home)))


_TEXT = st.text(st.characters(exclude_categories=["Cc"]), max_size=6)


@given(
    st.lists(
        st.tuples(st.one_of(st.none(), _TEXT, st.just("\ud800x")), _TEXT, st.booleans()),
        max_size=40,
    ),
    st.integers(0, 8),
)
def test_sorted_rows_spilled_walk_in_the_order_of_the_sort_in_memory(
    made: list[tuple[str | None, str, bool]], held: int
) -> None:
    """Newest first, then by path (lone surrogates and equal times included), at any bound."""
    rows = [
        SessionRow(f"{path}\udcff" if odd else path, None, None, None, None, None, "clean", None, when)
        for when, path, odd in made
    ]
    expected = sorted(rows, key=lambda r: r.path)
    expected.sort(key=lambda r: r.last_time or "", reverse=True)
    saved = listing.ROWS_HELD
    listing.ROWS_HELD = held
    try:
        sorted_rows = SortedRows()
        for row in rows:
            sorted_rows.add(row)
        assert list(sorted_rows) == expected == list(sorted_rows)
        assert len(sorted_rows) == len(rows)
        sorted_rows.close()
    finally:
        listing.ROWS_HELD = saved


@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(0, 2000))
def test_item_spool_gives_back_what_was_appended_walk_after_walk(items: list[bytes], memory: int) -> None:
    found: ItemSpool[bytes] = ItemSpool(memory)
    for item in items:
        found.append(item)
    first = iter(found)
    assert list(found) == items == list(found)
    assert list(first) == items  # walks interleave
    assert len(found) == len(items) and bool(found) == bool(items)
    written = sum(8 + len(pickle.dumps(i, protocol=pickle.HIGHEST_PROTOCOL)) for i in items)
    assert found.spilled == (memory == 0 or written > memory)  # a temporary file past the bound
    found.close()
