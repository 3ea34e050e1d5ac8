"""The entry graph spilled to disk (store/spill.py, issue 17) answers exactly what the graph in
memory answers: every Claude fixture (raw and zstd, subagent files too) scanned with the spill
threshold forced to one entry, a few items per move and pages of four, compared with the scan in
memory; the command tests and property tests of the graph run again on the spilled path (the
imported tests below, under the autouse fixture); and the spill file is private, unnamed and
gone however the process ends, a full disk a clean exit 3."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.dialects.claude import entry_graph, held, key_index
from sesstool.dialects.claude.key_index import KeyIndex
from sesstool.store import spill
from sesstool.store.spill import SpilledArray, SpillFile
from tests.claude._support import PROJECTS, scan_bytes, zstd_twin
from tests.claude.test_cli import (  # noqa: F401 - collected again here, on the spilled path
    test_derive,
    test_fork,
    test_inspect,
    test_inspect_shows_a_sessions_subagent_files_with_it,
    test_repair,
    test_validate,
    test_validate_reads_a_transcripts_subagent_files_with_it_once,
)
from tests.claude.test_compact_graph import (  # noqa: F401
    test_key_index_answers_like_a_dict,
    test_the_compact_scan_agrees_with_the_plain_model,
)
from tests.claude.test_transcript import (  # noqa: F401
    test_a_copy_continues_from_the_same_state_without_findings,
    test_verdict_dangling_and_rules,
)
from tests.conftest import ROOT

TINY = {"SPILL_AT": 1, "FLUSH_AT": 2, "PAGE": 4, "CACHED_PAGES": 2}
_SPILLED_BY_KEY_INDEX = {"test_key_index_answers_like_a_dict"}  # spills its own index (below)
_NO_SCAN_HERE = {  # tests that scan no transcript in this process
    *_SPILLED_BY_KEY_INDEX,
    "test_a_spilled_array_answers_like_a_list",
    "test_the_spilled_key_index_copy_is_independent",
    "test_the_spill_file_has_no_name_and_leaves_nothing",
    "test_a_full_disk_is_a_clean_error",
}


def _force_tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry_graph, "SPILL_AT", TINY["SPILL_AT"])
    monkeypatch.setattr(key_index, "FLUSH_AT", TINY["FLUSH_AT"])
    monkeypatch.setattr(spill, "PAGE", TINY["PAGE"])
    monkeypatch.setattr(spill, "CACHED_PAGES", TINY["CACHED_PAGES"])


@pytest.fixture(autouse=True)
def _spill_everything(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every scan in this module spills from its second entry on; a test that scans a graph
    must have opened a spill file (else it would prove nothing here)."""
    _force_tiny(monkeypatch)
    opened: list[SpillFile] = []

    class Counted(SpillFile):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(held, "SpillFile", Counted)  # the scan opens its spill file there
    if request.node.originalname in _SPILLED_BY_KEY_INDEX:
        original = KeyIndex.__init__

        def spilled_index(self: KeyIndex, slot_hash: Any = None) -> None:
            original(self, slot_hash)
            self.spill(SpillFile(), 64)  # a filter of 64 bits: full, so the file answers

        monkeypatch.setattr(KeyIndex, "__init__", spilled_index)
    yield
    if request.node.originalname not in _NO_SCAN_HERE:
        assert opened, "the graph never spilled"


def _transcripts() -> list[Path]:
    return sorted(PROJECTS.rglob("*.jsonl"))


def _ids() -> list[str]:
    return [str(p.relative_to(PROJECTS)) for p in _transcripts()]


def _scan(path: Path, data: bytes) -> Any:
    subagent = path.parent.name == "subagents"
    session = path.parent.parent.name if subagent else path.name.removesuffix(".jsonl")
    return scan_bytes(data, str(path), session, subagent)


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
@pytest.mark.parametrize("path", _transcripts(), ids=_ids())
def test_every_fixture_scans_the_same_spilled(
    path: Path, encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole scan (verdict, findings with their addresses, chain, dangling calls, …) of a
    transcript or subagent file: spilled from its second entry equals in memory."""
    data = path.read_bytes()
    if encoding == "zstd":
        with zstd_twin(path).open(
            "rb"
        ) as raw:  # the plaintext of its whole frames (a torn one's twin is cut)
            data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read()
    spilled = _scan(path, data)
    assert isinstance(spilled.chain, SpilledArray) or len(spilled.chain) == 0
    monkeypatch.setattr(entry_graph, "SPILL_AT", 1 << 30)
    in_memory = _scan(path, data)
    assert not isinstance(in_memory.chain, SpilledArray)
    assert spilled == in_memory
    assert list(spilled.chain) == list(in_memory.chain)


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 200)),
        st.tuples(st.just("set"), st.integers(0, 1000), st.integers(0, 200)),
        st.tuples(st.just("copy"), st.booleans()),
        st.tuples(st.just("reverse"), st.just(0)),
    ),
    max_size=80,
)


@settings(max_examples=60)
@given(ops=_OPS, probe=st.integers(-1, 210))
def test_a_spilled_array_answers_like_a_list(ops: list[tuple[Any, ...]], probe: int) -> None:
    """Pages of four, two of them cached: appends, writes anywhere, copy-on-write copies (either
    side written afterwards), reversal and iteration agree with a list; a sorted one bisects."""
    store = SpillFile()
    array, model = SpilledArray("i", store.pages()), []
    twin, twin_model = SpilledArray("i", store.pages()), []
    for op in ops:
        if op[0] == "append":
            array.append(op[1])
            model.append(op[1])
        elif op[0] == "set" and model:
            array[op[1] % len(model)] = op[2]
            model[op[1] % len(model)] = op[2]
        elif op[0] == "copy":
            twin, twin_model = array.copy(), list(model)
            if op[1]:
                array, twin, model, twin_model = twin, array, twin_model, model
        elif op[0] == "reverse":
            array.reverse()
            model.reverse()
    assert list(array) == model and len(array) == len(model)
    assert [array[i] for i in range(-len(model), len(model))] == model + model
    assert list(reversed(array)) == model[::-1]
    assert list(twin) == twin_model
    ordered = SpilledArray("i", store.pages(), sorted(model), sorted=True)
    import bisect

    assert ordered.bisect_left(probe) == bisect.bisect_left(sorted(model), probe)
    assert list(SpilledArray.zeros("B", store.pages(), len(model))) == [0] * len(model)


def test_the_spilled_key_index_copy_is_independent() -> None:
    """A copy shares the keys moved so far; what either side adds later, the other never sees."""
    index = KeyIndex()
    index.spill(SpillFile(), 1 << 10)
    for n in range(10):
        index.add(f"k{n}")
    twin = index.copy()
    twin.add("twin only")
    index.add("original only")
    assert (index.find("twin only"), twin.find("original only")) == (-1, -1)
    assert index.find("original only") == twin.find("twin only") == 10
    assert (
        [index.key(i) for i in range(10)] == [twin.key(i) for i in range(10)] == [f"k{n}" for n in range(10)]
    )


# -- the spill file on disk ------------------------------------------------------------------

_DRIVER = """
import sys
from sesstool.dialects.claude import entry_graph
from sesstool.store import spill
entry_graph.SPILL_AT = 1
spill.CACHE_KIB = int(sys.argv[1])
from sesstool.cli.main import main
main(sys.argv[2:])
"""


def _transcript(turns: int) -> bytes:
    """A long, valid session: the ``tool-one`` fixture's turn repeated (bench/claude_memory.py)."""
    sys.path.insert(0, str(ROOT))
    try:
        from bench.claude_memory import SEED, _turn
    finally:
        sys.path.remove(str(ROOT))
    import io
    import json

    entries = [json.loads(line) for line in SEED.read_bytes().split(b"\n")[:-1]]
    out, last = io.BytesIO(), None
    for turn in range(turns):
        _, last = _turn(out, entries, turn, last)
    return out.getvalue()


def _driver(tmp: Path, *args: str, **popen: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp), "SQLITE_TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", _DRIVER, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def _spill_fds(pid: int, tmp: Path) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(tmp)):
            found.append(target)
    return found


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["KILL", "TERM", "INT"])
def test_the_spill_file_has_no_name_and_leaves_nothing(tmp_path: Path, how: signal.Signals) -> None:
    """While a scan spills, its spill file is open but unlinked: nothing in the temporary
    directory has a name; after SIGKILL, SIGTERM or SIGINT mid-scan there is still nothing."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    log = tmp_path / "long.jsonl"
    log.write_bytes(_transcript(6000))  # 17 MB: seconds of scanning, every entry spilled
    proc = _driver(scratch, "16", "validate", str(log))
    try:
        # SQLite creates its temporary file and unlinks it at once: a look between the two can
        # see its name, so wait (boundedly) for a look at the file open and nameless.
        deadline = time.monotonic() + 60
        while True:
            fds, names = _spill_fds(proc.pid, scratch), list(scratch.iterdir())
            if fds and all(t.endswith("(deleted)") for t in fds) and names == []:
                break
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"never open and nameless: {fds}, {names}"
            time.sleep(0.01)
        proc.send_signal(how)
        proc.communicate(timeout=60)
        assert proc.returncode != 0  # it was stopped mid-scan, not finished
        assert list(scratch.iterdir()) == []
    finally:
        if proc.poll() is None:  # an assertion failed mid-scan: leave no process behind
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize(("command", "status"), [("inspect", 3), ("validate", 1)])
def test_a_full_disk_is_a_clean_error(tmp_path: Path, command: str, status: int) -> None:
    """Files limited to 16 KiB (RLIMIT_FSIZE, SIGXFSZ ignored: what a full disk looks like to a
    writer) and a page cache of 16 KiB: the spill file cannot grow. ``inspect`` exits 3 (input
    unreadable, DESIGN §6); ``validate`` reports the file unreadable in its row and fails (1),
    as it does for any unreadable file. No traceback, nothing left on disk."""
    import resource

    log = tmp_path / "long.jsonl"
    log.write_bytes(_transcript(2000))
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 10, 16 << 10))

    proc = _driver(scratch, "16", command, str(log), preexec_fn=limit)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == status, (out, err)
    assert b"Traceback" not in err
    assert b"scratch space for a large transcript's graph" in out + err
    assert list(scratch.iterdir()) == []
