"""A directory's paths held bounded (issue 11 item 1): ``list`` and ``inspect`` of a root or a
directory of logs, and ``validate DIR``, find the logs by a walk whose paths are a
``store.paths.SortedPaths`` (sorted in memory up to ``PATHS_HELD``, past it in a spill file), and
``validate`` remembers the paths it checked in a ``core.held_map.HeldMap`` (past ``HELD_AT``,
a spill file). Spilled from the first path, after one, or never, every output is the same byte
for byte, with the same exit status and the same standard error: every fixture tree, a Claude
Code and a Codex home, and a tree of logs with odd names (an undecodable byte, a newline, a
leading dash, ESC), in memory and as a glob."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sesstool.core import held_map
from sesstool.store import paths
from tests.conftest import FIXTURES, Run, Sesstool

TREES = ["claude", "codex", "codex/home", "dsh", "mini", "migrate", "not-a-log"]
# (paths sorted in memory, paths checked held in memory): spilled at once, after one, never
BOUNDS = [(0, 0), (1, 1), (1 << 30, 1 << 30)]


def _runs(sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, *args: str) -> list[Run]:
    found = []
    for walked, checked in BOUNDS:
        monkeypatch.setattr(paths, "PATHS_HELD", walked)
        monkeypatch.setattr(held_map, "HELD_AT", checked)
        found.append(sesstool(*args))
    return found


def _same(runs: list[Run]) -> None:
    *spilled, held = runs
    for run in spilled:
        assert (run.exit_code, run.stderr) == (held.exit_code, held.stderr)
        assert run.stdout_bytes == held.stdout_bytes
    assert held.stdout_bytes or held.stderr


COMMANDS = [["list"], ["list", "--json"], ["inspect"], ["validate"], ["validate", "--format", "json"]]
IDS = ["-".join(a.lstrip("-") for a in c) for c in COMMANDS]


@pytest.mark.parametrize("args", COMMANDS, ids=IDS)
@pytest.mark.parametrize("tree", TREES)
def test_every_fixture_tree_is_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, tree: str, args: list[str]
) -> None:
    _same(_runs(sesstool, monkeypatch, *args, str(FIXTURES / tree)))


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies of two dsh fixtures under names a walk must keep exactly and sort by code point:
    an undecodable byte, a newline, a leading dash, ESC, a character past the BMP, an upper-case
    suffix, in folders named alike; and one directory link the walk does not follow."""
    where = tmp_path_factory.mktemp("odd")
    root = os.fsencode(where / "logs")
    seeds = [
        FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl",
        FIXTURES / "dsh" / "bad-bom" / "session.jsonl",
    ]
    names = [
        b"-a.jsonl",
        b"--x--.JSONL",
        b"\xff.jsonl",
        b"line\nbreak.jsonl",
        b"\x1b[31mred.jsonl",
        b"\xc3\xa9.jsonl",
    ]
    folders = [b"", b"-d", b"\xfe\n", b"\xf0\x9f\x98\x80"]
    for i, name in enumerate(names * 2):
        folder = os.path.join(root, folders[i % len(folders)])
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(seeds[i % 2], os.path.join(folder, name))
    os.symlink(root, os.path.join(root, b"-d", b"up"))
    return Path(os.fsdecode(root))


@pytest.mark.parametrize("args", COMMANDS, ids=IDS)
def test_odd_names_are_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, odd: Path, args: list[str]
) -> None:
    runs = _runs(sesstool, monkeypatch, *args, str(odd))
    _same(runs)
    assert runs[-1].exit_code in (0, 1)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_glob_and_repeated_paths_are_the_same_spilled(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, odd: Path, fmt: str
) -> None:
    """A glob (expanded here, as a shell would not), the directory again and a file of it again:
    each log checked once, in the order first named."""
    pattern = str(odd / "**" / "*.jsonl")
    again = next(p for p in sorted(odd.iterdir()) if p.is_file())
    runs = _runs(sesstool, monkeypatch, "validate", "--format", fmt, pattern, str(odd), str(again))
    _same(runs)
