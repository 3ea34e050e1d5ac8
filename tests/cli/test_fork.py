"""`sesstool fork` end to end on copies of the fixture logs (spec §8; DESIGN §3, §4, §6).

Every test forks a copy in tmp_path: the repository's fixtures are never written to.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.closer_list import Closers
from sesstool.engine import fork as fork_engine
from sesstool.store import publish as publish_module
from sesstool.store.publish import Sink
from tests.conftest import FIXTURES, ROOT, UPDATE_GOLDENS, Sesstool, examples

DSH = FIXTURES / "dsh"
CREATED = "1760000100000"
SCENARIOS = ["clean-multiturn", "forked-child", "v2-tiny", "v4-tiny"]


def fixture_log(name: str, zstd: bool = False) -> Path:
    d = DSH / name
    return next(
        p for p in sorted(d.iterdir()) if p.name.startswith("session") and p.name.endswith(".zstd") == zstd
    )


def copy_log(name: str, tmp: Path, zstd: bool = False) -> Path:
    src = fixture_log(name, zstd)
    target = tmp / src.name
    shutil.copy(src, target)
    return target


def plaintext(path: Path) -> bytes:
    data = path.read_bytes()
    if not data.startswith(b"\x28\xb5\x2f\xfd"):
        return data
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    return reader.read()


def record_lines(path: Path) -> list[bytes]:
    """The records (with their newlines) after the header line."""
    return plaintext(path).splitlines(keepends=True)[1:]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(directory.rglob("*"))
    }


def fork_json(sesstool: Sesstool, *args: str) -> dict[str, Any]:
    result = sesstool("fork", "--json", *args)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def assert_validates(sesstool: Sesstool, path: Path) -> None:
    result = sesstool("validate", "--fail-on", "warning", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr


# -- the fixtures, raw and zstd ------------------------------------------------------------------


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_fork_fixture(sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool) -> None:
    source = copy_log(name, tmp_path, zstd)
    before = sha256(source)
    doc = fork_json(sesstool, str(source), "--id", "child-1", "--created-at", CREATED)
    target = tmp_path / ("child-1.jsonl.zstd" if zstd else "child-1.jsonl")
    assert doc["output"]["path"] == str(target)
    assert doc["output"]["layout"] == "beside-source"
    assert doc["output"]["encoding"] == ("zstd" if zstd else "raw")
    assert doc["output"]["size"] == target.stat().st_size
    assert doc["output"]["sha256"] == sha256(target)
    assert doc["source"]["sha256"] == doc["source"]["sha256_after"] == before == sha256(source)
    assert doc["source"]["unchanged"] is True
    assert doc["schema_version"] == 2 and doc["command"] == "fork" and doc["dry_run"] is False

    assert_validates(sesstool, target)
    boundary = doc["boundary"]["seq"]
    assert doc["boundary"]["chosen"] == "default"
    seed = record_lines(source)[: boundary + 1]
    child = record_lines(target)
    assert child[: boundary + 1] == seed  # byte for byte
    assert doc["child"]["seed_bytes"] == sum(map(len, seed))
    version = doc["child"]["version"]
    marker = json.loads(child[boundary + 1])
    assert marker["type"] == "session/end-seed" and marker["seq"] == boundary + 1
    assert marker["data"] == ({} if version <= 1 else {"inherited": True})
    assert len(child) == doc["child"]["events"] == boundary + 2

    inspect = json.loads(sesstool("inspect", "--json", str(target)).stdout)
    assert inspect["verdict"]["verdict"] == "clean"
    assert inspect["header"] == doc["child"]["header"]
    assert inspect["header"]["parentSession"] == doc["source"]["session"]
    assert inspect["header"]["delegationDepth"] == 0
    assert inspect["stats"]["lineage"]["inherited_events"] == boundary + 1
    if zstd:
        assert inspect["file"]["frames"] == 2  # the header frame and one body frame
        header_frame = zstandard.ZstdDecompressor().decompress(target.read_bytes()[: _first_frame(target)])
        assert header_frame.count(b"\n") == 1


def _first_frame(path: Path) -> int:
    data = path.read_bytes()
    second = data.find(b"\x28\xb5\x2f\xfd", 4)
    assert second > 0
    return second


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_fork_twice_is_refused_and_changes_nothing(
    sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool
) -> None:
    source = copy_log(name, tmp_path, zstd)
    out = tmp_path / "out.jsonl"
    for args in (["--id", "twin"], ["--id", "other", "-o", str(out)]):
        first = sesstool("fork", str(source), *args)
        assert first.exit_code == 0, first.stderr
        state = snapshot(tmp_path)
        again = sesstool("fork", str(source), *args)
        assert again.exit_code == 6, again.stderr
        assert "target exists" in again.stderr
        assert snapshot(tmp_path) == state


def test_explicit_at_and_encoding_conversion(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("clean-multiturn", tmp_path)
    out = tmp_path / "child.zst"
    doc = fork_json(sesstool, str(source), "--at", "31", "--encoding", "zstd", "-o", str(out))
    assert doc["boundary"] == {"seq": 31, "chosen": "at", "open_turn": None, "open_turn_seq": None}
    assert doc["output"]["layout"] == "option" and doc["output"]["encoding"] == "zstd"
    assert out.read_bytes().startswith(b"\x28\xb5\x2f\xfd")
    assert record_lines(out)[:32] == record_lines(source)[:32]
    assert_validates(sesstool, out)
    back = tmp_path / "back.jsonl"
    doc = fork_json(sesstool, str(out), "--at", "32", "--encoding", "raw", "-o", str(back))
    assert not back.read_bytes().startswith(b"\x28\xb5\x2f\xfd")
    # a fork of a v0 fork whose seed ends with its end-seed adds no second marker (§4.4)
    assert doc["marker"] is None and doc["child"]["events"] == 33
    assert doc["child"]["header"]["seedLength"] == 33
    assert_validates(sesstool, back)


def test_v4_fork_inside_the_open_turn(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("v4-tiny", tmp_path)
    doc = fork_json(sesstool, str(source), "--at", "13", "--id", "c", "--created-at", CREATED)
    assert doc["boundary"]["open_turn"] == 2 and doc["boundary"]["open_turn_seq"] == 9
    assert [c["type"] for c in doc["closers"]] == ["tool/result", "step/end", "turn/end"]
    assert doc["closers"][0]["data"]["message"]["id"] == "forked-tool-result-c1-15"
    assert doc["closers"][0]["sourceEventSeqs"] == [13]
    assert doc["marker"]["time"] == 2107 == doc["closers"][-1]["time"]  # the time of seq 13
    target = tmp_path / "c.jsonl"
    assert_validates(sesstool, target)
    assert record_lines(target)[:14] == record_lines(source)[:14]


# -- dsh root layout -----------------------------------------------------------------------------


def _dsh_root(tmp_path: Path, zstd: bool = False) -> Path:
    session_dir = tmp_path / "root" / "--home-dev-invoice-parser--" / "s-clean-multiturn"
    session_dir.mkdir(parents=True)
    src = fixture_log("clean-multiturn", zstd)
    shutil.copy(src, session_dir / src.name)
    return session_dir


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_fork_in_a_dsh_root_gets_its_own_session_directory(
    sesstool: Sesstool, tmp_path: Path, zstd: bool
) -> None:
    session_dir = _dsh_root(tmp_path, zstd)
    project = session_dir.parent
    doc = fork_json(sesstool, str(session_dir), "--id", "../child/é")  # a directory argument
    encoded = "..~002Fchild~002F~00E9"
    name = "session.jsonl.zstd" if zstd else "session.jsonl"
    target = project / encoded / name
    assert doc["output"]["path"] == str(target) and doc["output"]["layout"] == "dsh-root"
    assert doc["output"]["created_directory"] == str(project / encoded)
    assert sorted(p.name for p in project.iterdir()) == [encoded, "s-clean-multiturn"]
    assert os.listdir(project / encoded) == [name]
    assert (project / encoded).stat().st_mode & 0o777 == 0o700
    assert_validates(sesstool, target)
    inspect = json.loads(sesstool("inspect", "--json", str(project / encoded)).stdout)
    assert inspect["header"]["id"] == "../child/é"
    # again: the session directory exists -> refused, nothing changes
    state = snapshot(tmp_path)
    again = sesstool("fork", str(session_dir), "--id", "../child/é")
    assert again.exit_code == 6
    assert snapshot(tmp_path) == state


def test_no_cwd_project_directory(sesstool: Sesstool, tmp_path: Path) -> None:
    session_dir = tmp_path / "root" / "_no-cwd" / "s1"  # v4-tiny has no cwd
    session_dir.mkdir(parents=True)
    shutil.copy(fixture_log("v4-tiny", zstd=True), session_dir / "session.v4.jsonl.zstd")
    doc = fork_json(sesstool, str(session_dir / "session.v4.jsonl.zstd"), "--id", "s2", "--at", "13")
    target = tmp_path / "root" / "_no-cwd" / "s2" / "session.v4.jsonl.zstd"
    assert doc["output"]["path"] == str(target)
    assert "cwd" not in doc["child"]["header"]
    assert_validates(sesstool, target.parent)


def test_dsh_root_keeps_a_single_encoding(sesstool: Sesstool, tmp_path: Path) -> None:
    session_dir = _dsh_root(tmp_path)
    state = snapshot(tmp_path)
    result = sesstool("fork", str(session_dir), "--encoding", "zstd")
    assert result.exit_code == 2 and "single-encoding" in result.stderr
    assert snapshot(tmp_path) == state
    out = tmp_path / "elsewhere.jsonl.zstd"
    assert sesstool("fork", str(session_dir), "--encoding", "zstd", "-o", str(out)).exit_code == 0


def test_a_session_directory_not_named_for_its_id_is_not_a_root(sesstool: Sesstool, tmp_path: Path) -> None:
    session_dir = tmp_path / "root" / "--p--" / "someone-else"
    session_dir.mkdir(parents=True)
    shutil.copy(fixture_log("clean-multiturn"), session_dir / "session.jsonl")
    doc = fork_json(sesstool, str(session_dir / "session.jsonl"), "--id", "kid")
    assert doc["output"]["layout"] == "beside-source"
    assert doc["output"]["path"] == str(session_dir / "kid.jsonl")


@pytest.mark.parametrize("child_id", ["../../escape", "/abs/path", "a\0b", "new\nline", ".", ".."])
def test_ids_never_steer_the_path(sesstool: Sesstool, tmp_path: Path, child_id: str) -> None:
    source = copy_log("v2-tiny", tmp_path)
    doc = fork_json(sesstool, str(source), "--id", child_id)
    target = Path(doc["output"]["path"])
    assert target.parent == tmp_path and target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, target.name])
    assert doc["child"]["header"]["id"] == child_id


def test_fresh_ids_are_unique(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("v2-tiny", tmp_path)
    ids = {fork_json(sesstool, str(source))["child"]["id"] for _ in range(3)}
    assert len(ids) == 3 and all(i.startswith("session-") for i in ids)
    assert len(list(tmp_path.iterdir())) == 4


# -- dry run and refusals ------------------------------------------------------------------------


def test_dry_run_writes_nothing(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("v4-tiny", tmp_path, zstd=True)
    state = snapshot(tmp_path)
    doc = fork_json(sesstool, str(source), "--at", "13", "--dry-run", "--id", "d")
    assert doc["dry_run"] is True
    assert doc["output"]["size"] is None and doc["output"]["exists"] is False
    assert doc["source"]["sha256_after"] is None
    assert doc["marker"]["seq"] == 14 and len(doc["closers"]) == 3
    human = sesstool("fork", str(source), "--at", "13", "--dry-run", "--id", "d")
    assert human.exit_code == 0 and "dry run: nothing written" in human.stdout
    assert "forked-tool-result-c1-15" in human.stdout
    assert snapshot(tmp_path) == state


def test_v0_refuses_a_boundary_inside_an_open_turn(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("clean-multiturn", tmp_path)
    state = snapshot(tmp_path)
    result = sesstool("fork", str(source), "--at", "40")
    assert result.exit_code == 4
    assert "inside open turn 2" in result.stderr and "turn/start is seq 32" in result.stderr
    # the refusal names the nearest boundaries that would be accepted (issue 15 item 15)
    assert "; nearest valid boundaries: seq 31 (before its turn/start) and seq 48 (its turn/end) (" in (
        result.stderr
    )
    assert snapshot(tmp_path) == state
    for boundary in ("31", "48"):
        assert sesstool("fork", str(source), "--at", boundary, "--dry-run").exit_code == 0


def test_a_refusal_in_a_turn_never_closed_says_so(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("crash-dangling-call", tmp_path)
    result = sesstool("fork", str(source), "--at", "3", "--dry-run")
    assert result.exit_code == 4
    assert "; nearest valid boundary: none after it (turn 1 is never closed in this log) (" in result.stderr


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_corrupt_log_exits_3(sesstool: Sesstool, tmp_path: Path, zstd: bool) -> None:
    source = copy_log("corrupt-middle", tmp_path, zstd)
    state = snapshot(tmp_path)
    result = sesstool("fork", str(source), "--at", "3")
    assert result.exit_code == 3
    assert "corrupt" in result.stderr and "line 8" in result.stderr
    assert snapshot(tmp_path) == state


def test_unsupported_logs_exit_4(sesstool: Sesstool, tmp_path: Path) -> None:
    for name in ("unknown-required", "newer-version"):
        source = copy_log(name, tmp_path)
        assert sesstool("fork", str(source), "--at", "1").exit_code == 4


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_at_past_the_end_exits_2(sesstool: Sesstool, tmp_path: Path, zstd: bool) -> None:
    source = copy_log("clean-multiturn", tmp_path, zstd)
    result = sesstool("fork", str(source), "--at", "62")
    assert result.exit_code == 2
    assert "last committed event is seq 61" in result.stderr
    assert len(list(tmp_path.iterdir())) == 1


def test_usage_errors(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("clean-multiturn", tmp_path)
    assert sesstool("fork", "-").exit_code == 2
    assert sesstool("fork", str(source), "--id", "").exit_code == 2
    assert sesstool("fork", str(source), "--at", "-1").exit_code == 2
    assert sesstool("fork", str(source), "--created-at", str(2**53)).exit_code == 2
    assert sesstool("fork", str(tmp_path / "missing.jsonl")).exit_code == 3
    assert len(list(tmp_path.iterdir())) == 1


def test_torn_and_interrupted_logs_fork_their_committed_events(sesstool: Sesstool, tmp_path: Path) -> None:
    torn = copy_log("torn-tail", tmp_path)
    doc = fork_json(sesstool, str(torn), "--id", "t")
    assert doc["source"]["verdict"]["verdict"] == "torn"
    assert doc["source"]["verdict"]["address"]["line"] is not None  # where the torn tail starts
    assert_validates(sesstool, tmp_path / "t.jsonl")
    crashed = copy_log("crash-dangling-call", tmp_path, zstd=True)
    result = sesstool("fork", str(crashed))  # no completed turn
    assert result.exit_code == 2 and "--at" in result.stderr
    result = sesstool("fork", str(crashed), "--at", "4")
    assert result.exit_code == 4  # v0: inside the open turn
    result = sesstool("fork", str(crashed), "--at", "5")
    assert result.exit_code == 2  # seq 5 is the torn record: not committed


def test_human_output_escapes_log_and_option_text(sesstool: Sesstool, tmp_path: Path) -> None:
    source = copy_log("v2-tiny", tmp_path)
    result = sesstool("fork", str(source), "--id", "evil\x1b[31m\u202e")
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b[31m\\u202e" in result.stdout
    assert "unchanged" in result.stdout


# -- verification and a source that changes ------------------------------------------------------


def test_a_failed_verification_publishes_nothing(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_dir = _dsh_root(tmp_path)
    stray = b'{"type":"step/end","seq":999,"time":1,"data":{"turn":1,"step":1}}\n'
    real_init = fork_engine._ChildWriter.__init__

    def init(self: fork_engine._ChildWriter, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        # what the writer appends is not what the plan says
        self.suffix = Closers.joined(self.suffix, (stray,))
        self.suffix_size += len(stray)

    monkeypatch.setattr(fork_engine._ChildWriter, "__init__", init)
    state = snapshot(tmp_path)
    result = sesstool("fork", str(session_dir), "--id", "bad")
    assert result.exit_code == 6
    assert "verification failed" in result.stderr
    assert snapshot(tmp_path) == state  # no temp, no file, and the new session directory is gone


def test_a_source_changed_during_the_fork_publishes_nothing(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = copy_log("clean-multiturn", tmp_path)
    real = fork_engine._ChildWriter.produce

    def produce(self: fork_engine._ChildWriter, sink: Sink) -> None:
        real(self, sink)
        with open(source, "r+b") as f:  # same size, new bytes: only the digest can tell
            f.seek(-2, os.SEEK_END)
            f.write(b" \n")

    monkeypatch.setattr(fork_engine._ChildWriter, "produce", produce)
    result = sesstool("fork", str(source), "--id", "x")
    assert result.exit_code == 6
    assert "source changed" in result.stderr
    assert sorted(os.listdir(tmp_path)) == [source.name]


def test_a_source_changed_between_scan_and_copy_is_refused(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_dir = _dsh_root(tmp_path)
    source = session_dir / "session.jsonl"
    real = publish_module.publish

    def publish(target: Path, produce: Any, **kwargs: Any) -> Any:
        with open(source, "ab") as f:
            f.write(b"\n")
        return real(target, produce, **kwargs)

    monkeypatch.setattr("sesstool.engine.fork.publish", publish)
    result = sesstool("fork", str(session_dir), "--id", "x")
    assert result.exit_code == 5
    assert "changed while it was read" in result.stderr
    assert sorted(p.name for p in session_dir.parent.iterdir()) == ["s-clean-multiturn"]
    assert os.listdir(session_dir) == ["session.jsonl"]


# -- the prefix property -------------------------------------------------------------------------

CLEAN_LINES = record_lines(fixture_log("clean-multiturn"))
CLEAN_TURN_ENDS = {31, 48, 61}


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(boundary=st.integers(0, len(CLEAN_LINES) - 1), zstd=st.booleans())
def test_fork_prefix_property(sesstool: Sesstool, tmp_path: Path, boundary: int, zstd: bool) -> None:
    """Any boundary of clean-multiturn: v0 forks exactly at the turn ends (else exit 4), and a
    fork's first boundary+1 records are the source's, byte for byte."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        source = copy_log("clean-multiturn", Path(scratch), zstd)
        out = Path(scratch) / "child"
        result = sesstool("fork", str(source), "--at", str(boundary), "-o", str(out))
        if boundary not in CLEAN_TURN_ENDS:
            assert result.exit_code == 4, result.stderr
            assert not out.exists()
            return
        assert result.exit_code == 0, result.stderr
        child = record_lines(out)
        assert child[: boundary + 1] == CLEAN_LINES[: boundary + 1]
        assert len(child) == boundary + 2


V4_LINES = record_lines(fixture_log("v4-tiny"))


@settings(
    max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(boundary=st.integers(0, len(V4_LINES) - 1))
def test_v4_forks_anywhere(sesstool: Sesstool, tmp_path: Path, boundary: int) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        source = copy_log("v4-tiny", Path(scratch))
        out = Path(scratch) / "child.jsonl"
        result = sesstool("fork", str(source), "--at", str(boundary), "-o", str(out))
        assert result.exit_code == 0, result.stderr
        assert record_lines(out)[: boundary + 1] == V4_LINES[: boundary + 1]
        assert_validates(sesstool, out)


# -- golden children -----------------------------------------------------------------------------

GOLDENS = [
    ("clean-multiturn", False, None, "session.jsonl.fork.jsonl"),
    ("clean-multiturn", True, None, "session.jsonl.zstd.fork.jsonl.zstd"),
    ("v4-tiny", False, 13, "session.v4.jsonl.fork-at-13.jsonl"),
    ("v4-tiny", True, 13, "session.v4.jsonl.zstd.fork-at-13.jsonl.zstd"),
]


@pytest.mark.parametrize(("name", "zstd", "at", "golden"), GOLDENS, ids=[g[3] for g in GOLDENS])
def test_golden_child(
    sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool, at: int | None, golden: str
) -> None:
    source = copy_log(name, tmp_path, zstd)
    out = tmp_path / golden
    args = ["--id", "session-fork", "--created-at", CREATED, "-o", str(out)]
    if at is not None:
        args += ["--at", str(at)]
    result = sesstool("fork", str(source), *args)
    assert result.exit_code == 0, result.stderr
    path = DSH / name / "expected" / "fork" / golden
    if UPDATE_GOLDENS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(out.read_bytes())
        return
    assert path.exists(), f"missing golden {path.relative_to(ROOT)}: run make goldens"
    assert out.read_bytes() == path.read_bytes(), f"output differs from {path.relative_to(ROOT)}"


@pytest.mark.parametrize("created_at", [0, 9007199254740991])
def test_created_at_limits_through_the_cli(sesstool: Sesstool, tmp_path: Path, created_at: int) -> None:
    source = copy_log("clean-multiturn", tmp_path)
    doc = fork_json(sesstool, str(source), "--id", "c", "--created-at", str(created_at))
    child = tmp_path / "c.jsonl"
    assert doc["child"]["header"]["createdAt"] == created_at
    assert json.loads(child.read_bytes().split(b"\n")[0])["createdAt"] == created_at
    assert_validates(sesstool, child)


def test_mini_fork_at_1_and_its_created_at_limit(sesstool: Sesstool, tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "mini" / "basic" / "session.jsonl", source)
    doc = fork_json(sesstool, str(source), "--at", "1", "--id", "c", "--created-at", "253402300799999")
    header = doc["child"]["header"]
    assert header["time"] == "9999-12-31T23:59:59.999Z" and header["data"]["forkedAt"] == 1
    assert_validates(sesstool, tmp_path / "c.jsonl")
    # past year 9999 a mini-agent header time cannot be written: a usage error, never a traceback
    result = sesstool("fork", str(source), "--at", "1", "--id", "d", "--created-at", "9007199254740991")
    assert result.exit_code == 2, result.stderr
    assert "cannot be a mini-agent header time" in result.stderr
    assert not (tmp_path / "d.jsonl").exists()
