"""``inspect --timeline`` of a Claude Code session with subagent files: their rows merged by time
into the session's own, each file in its own order, marked with its file (docs/format.md
"Subagent rows"; engine/timeline_merge.py). Goldens (text and ``--json``) of the hand-built
fixture fixtures/claude/timeline/two-subagents (two subagents interleaving, times missing and
malformed, a torn subagent file; written by tests/claude/timeline_fixture.py), raw and zstd;
the recorded scenarios' goldens are in test_inspect_timeline.py. The merge's rule checked on
every scenario with subagent files; ``--turn``/``--last``; a side file that is no transcript;
hostile file names and times; the spilled merge equal to a sort in memory, byte for byte. The
memory test: tests/adversarial/test_timeline_subagents.py."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sesstool.engine import companions, timeline_merge
from sesstool.engine.timeline_merge import LAST, row_time
from sesstool.store import paths
from sesstool.store.paths import SortedPaths
from tests.claude import timeline_fixture
from tests.claude._support import EXPECTED_DIR, SCENARIOS, Scenario, zstd_twin
from tests.claude.test_inspect_timeline import json_timeline, rows, text_timeline
from tests.conftest import ROOT, Sesstool, check_golden

WITH_SUBAGENTS = [name for name in SCENARIOS if Scenario(name).subagents]
TWO = timeline_fixture.transcript()


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _zstd_copy(log: Path, where: Path) -> Path:
    """The session folder of ``log`` copied with every transcript made a one-frame zstd file."""
    home = where / "zstd"
    shutil.copytree(log.parent, home)
    for raw in sorted(home.rglob("*.jsonl")):
        data = zstandard.ZstdCompressor(write_checksum=True).compress(raw.read_bytes())
        raw.with_name(raw.name + ".zstd").write_bytes(data)
        raw.unlink()
    return home / (log.name + ".zstd")


def test_two_subagents_golden(sesstool: Sesstool, tmp_path: Path) -> None:
    """The merged timeline's bytes, text and JSON, equal the goldens for the raw session and
    for its zstd copy alike (the mark names the file without its suffix)."""
    assert WITH_SUBAGENTS == ["kill-subagent", "subagent"]  # both have goldens (test_inspect_timeline)
    golden = EXPECTED_DIR / "timeline-two-subagents"
    for log in (TWO, _zstd_copy(TWO, tmp_path)):
        human = sesstool("inspect", "--timeline", _rel(log))
        assert human.exit_code == 0, human.stderr
        assert "\x1b" not in human.stdout
        check_golden(golden / "raw.timeline.txt", text_timeline(human.stdout))
        doc = sesstool("inspect", "--json", "--timeline", _rel(log))
        assert doc.exit_code == 0, doc.stderr
        check_golden(golden / "raw.timeline.json", json_timeline(doc.stdout))


def _own_rows(sesstool: Sesstool, side: Path) -> list[dict[str, Any]]:
    """A subagent file's rows when it is inspected on its own."""
    return rows(sesstool, "--timeline", _rel(side))


def _places(found: list[dict[str, Any]]) -> list[int | None]:
    """Each row's place in time in its file: the latest usable time up to it; a subagent
    file's rows before its first usable time take that time, a file with none comes last
    (docs/format.md "Subagent rows"); the session's rows before its first have none."""
    latest: int | None = None
    places: list[int | None] = []
    for r in found:
        t = row_time(r["time"])
        latest = t if t is not None and (latest is None or t > latest) else latest
        places.append(latest)
    if found and "agent" in found[0]:
        first = next((p for p in places if p is not None), LAST)
        places = [first if p is None else p for p in places]
    return places


@pytest.mark.parametrize(
    "log", [Scenario(n).transcript for n in WITH_SUBAGENTS] + [TWO], ids=lambda p: p.parent.name
)
def test_the_merge_rule(sesstool: Sesstool, log: Path) -> None:
    """Each file's rows in its own order and as it has them alone (turn aside); a subagent row
    after every session row whose place in time is not later than its own and before the first
    one that is, among the other subagent rows there by place then file; its turn the session
    row's before it."""
    found = rows(sesstool, "--timeline", _rel(log))
    sides = sorted((log.parent / log.name.removesuffix(".jsonl") / "subagents").glob("agent-*.jsonl"))
    assert sides
    place: dict[int, int | None] = {}
    for mark in [None, *(side.name.removesuffix(".jsonl") for side in sides)]:
        mine = [i for i, r in enumerate(found) if r.get("agent") == mark]
        place.update(zip(mine, _places([found[i] for i in mine]), strict=True))
    for side in sides:
        mark = side.name.removesuffix(".jsonl")
        merged = [
            {k: v for k, v in r.items() if k not in ("agent", "turn")}
            for r in found
            if r.get("agent") == mark
        ]
        alone = [{k: v for k, v in r.items() if k != "turn"} for r in _own_rows(sesstool, side)]
        assert merged == alone and merged, side.name
    before: int | None = None  # the place of the session row before
    turn = None
    pending: list[tuple[int, int]] = []  # (place, file) of the subagent rows since the last session row
    ranks = {side.name.removesuffix(".jsonl"): n for n, side in enumerate(sides)}
    for i, r in enumerate(found):
        if "agent" not in r:
            at = place[i]
            assert all(at is not None and p < at for p, _ in pending), (r, pending)
            assert pending == sorted(pending), pending  # by place, then the files' path order
            before, turn, pending = at, r["turn"], []
            continue
        assert r["turn"] == turn
        at_side = place[i]
        assert at_side is not None and before is not None and at_side >= before, r
        pending.append((at_side, ranks[r["agent"]]))


def test_turn_and_last_count_the_merged_rows(sesstool: Sesstool) -> None:
    log = _rel(TWO)
    every = rows(sesstool, "--timeline", log)
    assert rows(sesstool, "--turn", "1", log) == [r for r in every if r["turn"] == 1]
    assert any("agent" in r for r in every if r["turn"] == 1)
    assert rows(sesstool, "--last", "5", log) == every[-5:]
    assert rows(sesstool, "--turn", "1", "--last", "4", log) == [r for r in every if r["turn"] == 1][-4:]


def test_a_side_file_that_is_no_transcript_has_no_rows(sesstool: Sesstool, tmp_path: Path) -> None:
    home = tmp_path / "project"
    shutil.copytree(TWO.parent, home)
    (home / TWO.stem / "subagents" / "agent-zz.jsonl").write_bytes(b"not json\n\x00\x01\n")
    log = str(home / TWO.name)
    found = rows(sesstool, "--timeline", log)
    assert found == rows(sesstool, "--timeline", _rel(TWO))
    assert not any(r.get("agent") == "agent-zz" for r in found)


HOSTILE = "agent-\x1b]0;x\x07\u202e"


def test_hostile_file_names_and_times_are_escaped(sesstool: Sesstool, tmp_path: Path) -> None:
    """A subagent file named with an escape sequence, whose entry's time holds one: the text
    view escapes both, the JSON has them exact."""
    home = tmp_path / "project"
    shutil.copytree(TWO.parent, home)
    subagents = home / TWO.stem / "subagents"
    entry = json.loads(timeline_fixture.agent_lines(timeline_fixture.AGENTS[0])[0])
    entry["timestamp"] = (
        "2026-12-01T10:00:03.200Z\x1b[2J"  # does not parse: placed after its file's row before
    )
    first = json.loads(timeline_fixture.agent_lines(timeline_fixture.AGENTS[0])[1])
    (subagents / f"{HOSTILE}.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(entry) + "\n")
    log = str(home / TWO.name)
    text = text_timeline(sesstool("inspect", "--timeline", log).stdout)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    marked = [line for line in text.splitlines() if line.endswith("[agent-\\x1b]0;x\\x07\\u202e]")]
    assert len(marked) == 2 and "2026-12-01T10:00:03.200Z\\x1b[2J" in marked[1]
    found = [r for r in rows(sesstool, "--timeline", log) if r.get("agent") == HOSTILE]
    assert [r["line"] for r in found] == [1, 2] and found[1]["time"] == entry["timestamp"]


def test_a_stream_has_no_subagent_rows(sesstool: Sesstool) -> None:
    """Standard input has no side files: its rows are the session's own."""
    piped = sesstool("inspect", "--json", "--timeline", "-", input=TWO.read_bytes())
    assert piped.exit_code == 0, piped.stderr
    own = [r for r in rows(sesstool, "--timeline", _rel(TWO)) if "agent" not in r]
    assert json.loads(piped.stdout)["timeline"] == own


class _SortedInMemory:
    """The reference for the spill table: the rows kept in a list and sorted in memory."""

    def __init__(self, purpose: str) -> None:
        self.rows: list[tuple[int, int, bytes]] = []
        self.waiting: list[tuple[int, bytes]] = []
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def add(self, key: int | None, row: bytes) -> None:
        if key is None:
            self.waiting.append((self.count, row))
        else:
            self.rows.append((key, self.count, row))
        self.count += 1

    def settle(self, key: int) -> None:
        self.rows += [(key, position, row) for position, row in self.waiting]
        self.waiting = []

    def drop(self, since: int) -> None:
        self.rows = [r for r in self.rows if r[1] < since]
        self.waiting = [w for w in self.waiting if w[0] < since]
        self.count = since

    def sorted(self) -> Iterator[tuple[int, bytes]]:
        return iter([(key, row) for key, _, row in sorted(self.rows, key=lambda r: r[:2])])

    def close(self) -> None:
        pass


SPILL_CASES = [Scenario(n).transcript for n in WITH_SUBAGENTS] + [TWO]


@pytest.mark.parametrize("log", SPILL_CASES, ids=lambda p: p.parent.name)
def test_the_spilled_merge_prints_what_a_sort_in_memory_does(
    sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, log: Path
) -> None:
    """Text and ``--json``, raw and zstd: the spill table's order is the in-memory sort's."""
    twin = zstd_twin(log) if log != TWO else _zstd_copy(TWO, tmp_path)
    for path in (log, twin):
        for args in (["inspect", "--timeline"], ["inspect", "--json", "--timeline"]):
            spilled = sesstool(*args, _rel(path))
            with monkeypatch.context() as m:
                m.setattr(timeline_merge, "SpilledRows", _SortedInMemory)
                held = sesstool(*args, _rel(path))
            assert spilled.exit_code == held.exit_code == 0, spilled.stderr
            assert spilled.stdout == held.stdout and "agent-" in spilled.stdout


def test_the_side_files_are_found_once(sesstool: Sesstool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``inspect --timeline`` walks the session's folder for its side files once: the timeline
    merges and the summary scans the same ``SortedPaths`` (before, ``companion_paths`` for the
    merge and ``scan_companions`` for the summary walked it twice). Text and JSON alike."""
    walks: list[str] = []
    real = paths.root_logs

    def counted(root: Path, patterns: tuple[str, ...]) -> SortedPaths:
        walks.append(str(root))
        return real(root, patterns)

    monkeypatch.setattr(companions, "root_logs", counted)
    for args in (("--timeline",), ("--json", "--timeline"), ()):
        walks.clear()
        done = sesstool("inspect", *args, _rel(TWO))
        assert done.exit_code == 0, done.stderr
        assert "agent-" in done.stdout
        assert walks == [str(Path(_rel(TWO)).parent)], args
