"""A directory's walk held bounded (issue 11 item 1, docs/reliability.md "one report per file"):
``store.paths.SortedPaths`` sorts the paths a walk finds in memory up to ``PATHS_HELD``, past
it in a spill file (``store.spilling_list.SpillingOrder`` on one ``bytes`` column). Differential:
spilled at once, after one, after a few or never, ``walk_logs``, ``root_logs`` and
``bounded_walk`` give the same paths in the same order, byte for byte — and the same as the
pathlib code they replace (kept here as the reference: ``Path.rglob``/``Path.glob`` and
``sorted``) — on generated trees whose names hold undecodable bytes, newlines, leading dashes,
glob characters, any case of a log suffix, and links to files, to directories and to nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sesstool.dialects import registry
from sesstool.store import paths
from sesstool.store.paths import SortedPaths, bounded_walk, root_logs, walk_logs

HELD = [0, 1, 3, 1 << 30]  # paths sorted in memory: spilled at once, after one, a few, never


@contextmanager
def held(n: int) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(paths, "PATHS_HELD", n)
        yield


def reference_walk(directory: Path, suffixes: tuple[str, ...]) -> list[str]:
    """``walk_logs`` before: pathlib's ``rglob``, sorted."""
    wanted = tuple(s.lower() for s in suffixes)
    return sorted(
        str(p) for p in Path(directory).rglob("*") if p.name.lower().endswith(wanted) and p.is_file()
    )


def reference_root(root: Path, patterns: tuple[str, ...]) -> list[str]:
    """``root_logs`` before: pathlib's ``glob`` per pattern, a set, sorted."""
    found: set[str] = set()
    for pattern in patterns:
        for path in root.glob(pattern):
            if path.is_file() and not path.is_symlink():
                found.add(str(path))
    return sorted(found)


# pieces of names: undecodable bytes (a lone surrogate once decoded), a newline, dashes, glob
# characters, a character past the BMP, the literal parts of the dialects' root layouts
PIECES = [
    b"a",
    b"Z",
    b"-",
    b"--",
    b"\n",
    b" ",
    b"\xff",
    b"\x80",
    b"\xc3\xa9",
    b"\xf0\x9f\x98\x80",
    b"[",
    b"*",
    b"?",
]
LITERAL_DIRS = [b"projects", b"subagents", b"sessions", b"2026", b"archived_sessions", b"--p--"]
LITERAL_FILES = [b"session.jsonl", b"session.v2.jsonl.zstd", b"agent-x.jsonl", b"rollout-1.jsonl.zst"]
SUFFIXES = [b".jsonl", b".JSONL", b".jsonl.zst", b".Jsonl.ZSTD", b".txt", b""]

piece = st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map(b"".join)
dir_name = st.one_of(st.sampled_from(LITERAL_DIRS), piece)
file_name = st.one_of(
    st.sampled_from(LITERAL_FILES), st.tuples(piece, st.sampled_from(SUFFIXES)).map(b"".join)
)
tree = st.lists(st.tuples(st.lists(dir_name, max_size=4), file_name), min_size=1, max_size=25)
links = st.lists(st.sampled_from(["file", "dir", "nowhere", "loop"]), max_size=3)


def build(root: bytes, files: list[tuple[list[bytes], bytes]], kinds: list[str]) -> None:
    made: list[bytes] = []
    for parts, name in files:
        folder = os.path.join(root, *parts)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:  # a file of that name on the way
            continue
        path = os.path.join(folder, name)
        if not os.path.lexists(path):
            with open(path, "wb") as f:
                f.write(b"{}\n")
            made.append(path)
    for i, kind in enumerate(kinds):
        where = os.path.join(root, b"projects", b"--l--")
        os.makedirs(where, exist_ok=True)
        link = os.path.join(where, b"link-%d.jsonl" % i)
        target = {
            "file": made[0],
            "dir": root,
            "nowhere": os.path.join(root, b"nowhere"),
            "loop": link,
        }[kind]
        os.symlink(target, link)


def check_tree(root: str) -> None:
    suffixes = registry.log_suffixes()
    walked = reference_walk(Path(root), suffixes)
    rooted = {name: reference_root(Path(root), patterns) for name, patterns in registry.layouts()}
    bounded = []
    for n in HELD:
        with held(n):
            assert list(walk_logs(root, suffixes)) == walked
            for name, patterns in registry.layouts():
                found = root_logs(Path(root), patterns)
                assert list(found) == rooted[name]
                assert bool(found) == bool(rooted[name]) and len(found) == len(rooted[name])
            logs, bound = bounded_walk(root, suffixes)
            bounded.append((list(logs), bound))
    assert all(b == bounded[0] for b in bounded)
    if os.path.isabs(root) and not bounded[0][1].skipped:  # a link looping on itself: a folder
        assert bounded[0][0] == walked  # it cannot read; os.scandir's text is pathlib's (not for ".")


@given(tree, links)
def test_the_walks_are_pathlibs_in_memory_and_spilled(
    files: list[tuple[list[bytes], bytes]], kinds: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as where:
        root = os.path.join(os.fsencode(where), b"root")
        os.mkdir(root)
        build(root, files, kinds)
        check_tree(os.fsdecode(root))
        check_tree(os.fsdecode(root) + "/")  # as the user typed it: the same text as pathlib's
        cwd = os.getcwd()
        os.chdir(root)
        try:
            check_tree(".")  # children named without a leading ./, as pathlib names them
        finally:
            os.chdir(cwd)


@given(st.lists(st.text(st.characters(blacklist_categories=())), max_size=40))
def test_sorted_paths_are_pythons_sorted_set(texts: list[str]) -> None:
    """Any text, lone surrogates included, in any order and repeated: the walk of a
    ``SortedPaths`` is ``sorted(set(...))``, held or spilled, and as often as wanted."""
    for n in HELD:
        with held(n):
            found = SortedPaths(texts)
            assert list(found) == sorted(set(texts)) == list(found)
            assert found.spilled == (len(set(texts)) > n)
            assert bool(found) == bool(texts)
            found.close()


def counted_walks(found: SortedPaths) -> list[int]:
    """A list that grows by one at each walk of ``found``'s order."""
    walks: list[int] = []
    real = found._order.sorted

    def counted() -> Iterator[tuple[object, ...]]:
        walks.append(1)
        return real()

    found._order.sorted = counted  # type: ignore[method-assign]
    return walks


@given(
    st.lists(st.text(st.characters(blacklist_categories=()), max_size=8), max_size=40),
    st.lists(st.text(st.characters(blacklist_categories=()), max_size=8), max_size=10),
)
def test_the_count_and_membership_never_sort(texts: list[str], others: list[str]) -> None:
    """``len`` is kept as the paths are added (a path added twice counts once) and ``in`` is a
    look-up: neither walks the order (before, each re-ran the sort, spilled: SQLite's sorter, and
    ``list(found)`` sorted twice, once for its length hint)."""
    for n in HELD:
        with held(n):
            found = SortedPaths()
            for i, text in enumerate(texts):
                found.add(text)
                assert len(found) == len(set(texts[: i + 1]))
            walks = counted_walks(found)
            assert len(found) == len(set(texts))
            probes: list[object] = [*texts, *others, b"x", None]
            for probe in probes:
                assert (probe in found) == (probe in set(texts))
            assert not walks
            assert list(found) == sorted(set(texts)) and len(walks) == 1
            found.close()


def test_the_bytes_of_the_paths_spill_them_too() -> None:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(paths, "PATHS_BYTES", 100)
        found = SortedPaths(["x" * 60])
        assert not found.spilled
        found.add("y" * 60)
        assert found.spilled and list(found) == ["x" * 60, "y" * 60]


def test_a_bounded_walk_spilled_stops_where_it_stopped_in_memory(tmp_path: Path) -> None:
    """The entries limit cuts the same files whether the levels and files are held or spilled:
    the levels are walked in the same (sorted) order."""
    for i in range(30):
        folder = tmp_path / f"d{i % 5}" / f"e{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"-{i}\n.jsonl").write_bytes(b"{}\n")
    answers = []
    for n in HELD:
        with held(n):
            logs, bound = bounded_walk(tmp_path, registry.log_suffixes(), max_depth=4, max_entries=40)
            answers.append((list(logs), bound))
    assert all(a == answers[-1] for a in answers) and answers[-1][1].stopped


def test_a_held_walk_loads_no_sqlite() -> None:
    """A walk's paths are keyed by ``store.paging.text_key`` (the one definition, re-exported by
    ``store.spill``): a walk that stays in memory never imports sqlite3 (start-up, issue 14)."""
    probe = (
        "import sys\n"
        "from sesstool.store.paths import SortedPaths\n"
        "found = SortedPaths(['b', 'a\\udcff', 'b'])\n"
        "assert len(found) == 2 and 'b' in found and list(found) == ['a\\udcff', 'b']\n"
        "print('sqlite3' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n", done.stderr
