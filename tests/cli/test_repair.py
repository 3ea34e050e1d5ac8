"""`sesstool repair`: closers exactly as §7.1, the source never touched, refusals, salvage."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_read_commands import fixture_log
from tests.conftest import FIXTURES, UPDATE_GOLDENS, Sesstool, examples, run_sesstool
from tests.core.test_closers_spec import E2_CLOSERS, E3_CLOSERS

CRASHES = ["crash-dangling-call", "crash-not-started", "torn-tail", "bad-nul-run"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_fixture(name: str, tmp_path: Path, zstd: bool = False) -> Path:
    src = fixture_log(name, zstd)
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    return dst


def repair_json(sesstool: Sesstool, *args: str) -> dict[str, Any]:
    result = sesstool("repair", "--json", *args)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def validate_doc(path: Path) -> dict[str, Any]:
    result = run_sesstool("validate", "--format", "json", str(path))
    doc: dict[str, Any] = json.loads(result.stdout)["files"][0]
    return doc


def compact(records: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(c, separators=(",", ":"), ensure_ascii=False) for c in records]


# -- the crash fixtures, raw and zstd ---------------------------------------------------------


CRASH_LOGS = [(n, z) for n in CRASHES for z in (False, True)] + [("torn-frame", True)]


@pytest.mark.parametrize(
    ("name", "zstd"), CRASH_LOGS, ids=[f"{n}-{'zstd' if z else 'raw'}" for n, z in CRASH_LOGS]
)
def test_repair_crash_fixture(sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool) -> None:
    src = copy_fixture(name, tmp_path, zstd)
    before = sha(src)
    doc = repair_json(sesstool, str(src))
    assert doc["status"] == "repaired"
    assert doc["source"]["sha256"] == before == sha(src)
    out = Path(doc["output"]["path"])
    assert out.name == ("session.repaired.jsonl.zstd" if zstd else "session.repaired.jsonl")
    assert doc["output"]["sha256"] == sha(out)
    checked = validate_doc(out)
    assert checked["verdict"]["verdict"] == "clean" and checked["findings"] == []
    # the carried prefix is the source's committed bytes, verbatim
    plan = doc["plan"]
    if not zstd:
        assert out.read_bytes()[: plan["committed_bytes"]] == src.read_bytes()[: plan["committed_bytes"]]
    else:
        copied = plan["copied_verbatim_bytes"]
        assert copied > 0 and out.read_bytes()[:copied] == src.read_bytes()[:copied]
    golden = FIXTURES / "dsh" / name / "expected" / "repair" / out.name
    if UPDATE_GOLDENS:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(out.read_bytes())
    assert out.read_bytes() == golden.read_bytes(), f"differs from {golden}"


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize(
    ("name", "closers"), [("crash-dangling-call", E2_CLOSERS), ("crash-not-started", E3_CLOSERS)]
)
def test_repair_appends_exactly_the_spec_closers(
    sesstool: Sesstool, tmp_path: Path, name: str, closers: list[str], zstd: bool
) -> None:
    src = copy_fixture(name, tmp_path, zstd)
    doc = repair_json(sesstool, str(src))
    assert compact(doc["plan"]["closers"]) == closers
    out = Path(doc["output"]["path"])
    derived = run_sesstool("derive", "--format", "jsonl", str(out))
    assert derived.exit_code == 0
    if not zstd:
        tail = out.read_bytes().decode().splitlines()[-3:]
        assert tail == closers  # the bytes on disk, not just the plan


def test_torn_frame_recovers_its_complete_lines(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("torn-frame", tmp_path, zstd=True)
    doc = repair_json(sesstool, str(src))
    plan = doc["plan"]
    assert plan["recovered_lines"] == 6
    assert [c["type"] for c in plan["closers"]] == ["step/end", "turn/end"]
    assert plan["copied_verbatim_bytes"] == 7264  # tornStart: every complete frame
    before = json.loads(run_sesstool("inspect", "--json", str(src)).stdout)
    inspect = json.loads(run_sesstool("inspect", "--json", doc["output"]["path"]).stdout)
    assert inspect["stats"]["events"] == 70 and inspect["verdict"]["verdict"] == "clean"
    assert inspect["file"]["frames"] == before["file"]["frames"] + 1  # the one new frame


# -- nothing to do, refusals --------------------------------------------------------------------


def test_balanced_log_writes_nothing(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("clean-multiturn", tmp_path)
    result = sesstool("repair", str(src))
    assert result.exit_code == 0, result.stderr
    assert "already balanced" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.lock"]


@pytest.mark.parametrize(
    ("name", "code", "text"),
    [
        ("corrupt-middle", 3, "refusing to repair a corrupt log"),
        ("seq-gap", 3, "not contiguous"),
        ("unknown-required", 4, "acme/widget-state"),
        ("newer-version", 4, "newer harness"),
    ],
)
def test_refusals_write_nothing(sesstool: Sesstool, tmp_path: Path, name: str, code: int, text: str) -> None:
    src = copy_fixture(name, tmp_path)
    before = sha(src)
    result = sesstool("repair", str(src))
    assert result.exit_code == code, result.stderr
    assert text in result.stderr and result.stdout == ""
    assert sha(src) == before
    assert not [p for p in tmp_path.iterdir() if "repaired" in p.name or p.suffix == ".tmp"]


def test_second_run_never_overwrites(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("crash-dangling-call", tmp_path)
    first = repair_json(sesstool, str(src))
    out = Path(first["output"]["path"])
    content = out.read_bytes()
    # the same output again: already there, nothing linked (issue 15 item 12)
    second = sesstool("repair", str(src))
    assert second.exit_code == 0 and "already published, identical" in second.stdout
    assert out.read_bytes() == content
    out.write_bytes(content + b"\n")  # other bytes under the name: never overwritten
    third = sesstool("repair", str(src))
    assert third.exit_code == 6 and "never overwrites" in third.stderr
    assert out.read_bytes() == content + b"\n"


def test_dry_run_writes_nothing(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("crash-not-started", tmp_path)
    doc = repair_json(sesstool, "--dry-run", str(src))
    assert doc["status"] == "planned" and doc["output"] is None
    assert compact(doc["plan"]["closers"]) == E3_CLOSERS
    assert not (tmp_path / "session.repaired.jsonl").exists()


def test_output_option_and_encoding_change(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("crash-dangling-call", tmp_path)
    raw = repair_json(sesstool, str(src), "-o", str(tmp_path / "a.jsonl"))
    zst = repair_json(sesstool, str(src), "-o", str(tmp_path / "b.jsonl.zstd"), "--encoding", "zstd")
    assert zst["output"]["size"] < raw["output"]["size"]
    assert repair_json(sesstool, "--dry-run", zst["output"]["path"])["status"] == "balanced"
    derived = [
        run_sesstool("derive", "--format", "jsonl", p).stdout
        for p in (raw["output"]["path"], zst["output"]["path"])
    ]
    assert derived[0] == derived[1] != ""
    zsrc_dir = tmp_path / "z"
    zsrc_dir.mkdir()
    zsrc = copy_fixture("crash-dangling-call", zsrc_dir, zstd=True)
    back = repair_json(sesstool, str(zsrc), "-o", str(tmp_path / "c.jsonl"), "--encoding", "raw")
    assert Path(back["output"]["path"]).read_bytes() == Path(raw["output"]["path"]).read_bytes()


# -- salvage -------------------------------------------------------------------------------------


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_salvage_keeps_the_prefix_and_records_every_dropped_byte(
    sesstool: Sesstool, tmp_path: Path, zstd: bool
) -> None:
    src = copy_fixture("corrupt-middle", tmp_path, zstd)
    before = sha(src)
    doc = repair_json(sesstool, "--salvage", str(src))
    assert sha(src) == before
    sv = doc["salvage"]
    assert sv["defect"]["rule"] == "invalid-json" and sv["defect"]["line"] == 8
    sidecar = Path(sv["sidecar"])
    dropped = sidecar.read_bytes()
    assert dropped == src.read_bytes()[sv["dropped_file_offset"] :]
    assert len(dropped) == sv["dropped_file_bytes"]
    assert hashlib.sha256(dropped).hexdigest() == sv["dropped_sha256"]
    report = json.loads(Path(sv["report"]).read_text())
    assert report["dropped_sha256"] == sv["dropped_sha256"]
    out = Path(doc["output"]["path"])
    checked = validate_doc(out)
    assert checked["verdict"]["verdict"] == "clean"
    # kept: exactly the records before the defect (line 8 holds seq 6), then the closers
    events = json.loads(run_sesstool("inspect", "--json", str(out)).stdout)["stats"]["events"]
    assert events == 6 + len(doc["plan"]["closers"])


def test_salvage_inside_a_v0_seed_keeps_the_seed_warning(sesstool: Sesstool, tmp_path: Path) -> None:
    """A v0 fork damaged inside its inherited seed: the kept prefix is shorter than seedLength,
    a warning in v0 (docs/format.md, interop 5). That warning is the source's, not the
    closers', so the salvage publishes (found by the line-mutation property test)."""
    src = copy_fixture("forked-child", tmp_path)
    lines = src.read_bytes().split(b"\n")
    lines[3] = b"\0" * len(lines[3])
    src.write_bytes(b"\n".join(lines))
    doc = repair_json(sesstool, "--salvage", str(src))
    assert doc["salvage"]["defect"]["rule"] == "nul-bytes" and doc["salvage"]["defect"]["line"] == 4
    checked = validate_doc(Path(doc["output"]["path"]))
    assert checked["verdict"]["verdict"] == "clean"
    assert [(f["rule"], f["severity"]) for f in checked["findings"]] == [("header-seed-length", "warning")]


def test_salvage_that_would_end_a_v0_seed_without_its_marker_is_refused(
    sesstool: Sesstool, tmp_path: Path
) -> None:
    """forked-child (seedLength 24) with turn/end 23 and step/end 22 swapped: the salvage keeps
    seq 0–21 and its closers would be seq 22–23, the last seed event, with no session/end-seed
    after it. sesstool does not invent the marker: it refuses, and writes nothing."""
    src = copy_fixture("forked-child", tmp_path)
    lines = src.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"seq":22,' in line)
    lines[at], lines[at + 1] = lines[at + 1], lines[at]
    src.write_bytes(b"\n".join(lines))
    before = sha(src)
    result = sesstool("repair", "--salvage", str(src))
    assert result.exit_code == 6 and "[seed-length-marker]" in result.stderr
    assert sha(src) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.lock"]


def test_closers_refused_before_a_salvage_publishes_anything(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection: when the closers are refused, neither the repaired file nor the salvage
    sidecar and its report are left behind."""
    from sesstool.core.errors import WriteRefusedError
    from sesstool.engine import repair

    def refuse(*args: object) -> None:
        raise WriteRefusedError("verification: the closers do not validate: [injected] fault")

    monkeypatch.setattr(repair, "_check_closers", refuse)
    src = copy_fixture("corrupt-middle", tmp_path)
    result = sesstool("repair", "--salvage", str(src))
    assert result.exit_code == 6 and "injected" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.lock"]


def test_salvage_refuses_a_broken_header(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("bad-bom", tmp_path)
    result = sesstool("repair", "--salvage", str(src))
    assert result.exit_code == 3 and "header" in result.stderr


# -- liveness (DESIGN §5) -------------------------------------------------------------------


def test_held_session_lock_refuses(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("crash-dangling-call", tmp_path)
    lock = tmp_path / "session.lock"
    lock.touch()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time\nf=open(sys.argv[1],'rb')\nfcntl.flock(f,fcntl.LOCK_EX)\n"
            "print('locked',flush=True)\ntime.sleep(30)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        result = sesstool("repair", str(src))
        assert result.exit_code == 5 and "session.lock" in result.stderr
        assert not (tmp_path / "session.repaired.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    assert lock.exists()  # never deleted
    with open(lock, "rb") as f:  # and released by us
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_live_writer_refuses(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy_fixture("crash-dangling-call", tmp_path)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time\nf=open(sys.argv[1],'ab')\nprint('open',flush=True)\n"
            "while True:\n  time.sleep(0.05)",
            str(src),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == b"open"
        result = sesstool("repair", str(src))
        assert result.exit_code == 5, result.stderr
        assert str(writer.pid) in result.stderr
    finally:
        writer.kill()
        writer.wait()
        assert writer.stdout is not None
        writer.stdout.close()


def test_appending_writer_refuses(sesstool: Sesstool, tmp_path: Path) -> None:
    # a writer that opens, appends and closes every 50 ms: caught by the identity check
    src = copy_fixture("crash-not-started", tmp_path)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time\nwhile True:\n  f=open(sys.argv[1],'ab'); f.write(b' '); f.close()\n"
            "  time.sleep(0.05)",
            str(src),
        ],
    )
    try:
        deadline = time.monotonic() + 10
        codes = set()
        while time.monotonic() < deadline and 5 not in codes:
            codes.add(sesstool("repair", "--dry-run", str(src)).exit_code)
        assert 5 in codes
        assert not (tmp_path / "session.repaired.jsonl").exists()
    finally:
        writer.kill()
        writer.wait()


# -- properties ------------------------------------------------------------------------------


CLEAN = (FIXTURES / "dsh" / "clean-multiturn" / "session.jsonl").read_bytes()


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.integers(min_value=CLEAN.index(b"\n") + 1, max_value=len(CLEAN)))
def test_any_cut_repairs_to_a_balanced_idempotent_log(tmp_path_factory: Any, cut: int) -> None:
    work = tmp_path_factory.mktemp("cut")
    src = work / "session.jsonl"
    src.write_bytes(CLEAN[:cut])
    first = run_sesstool("repair", "--json", str(src))
    assert first.exit_code == 0, first.stderr
    doc = json.loads(first.stdout)
    if doc["status"] == "balanced":
        assert CLEAN[:cut].endswith(b"\n")
        return
    out = Path(doc["output"]["path"])
    committed = CLEAN[:cut][: CLEAN[:cut].rfind(b"\n") + 1]
    assert out.read_bytes().startswith(committed)
    assert validate_doc(out)["verdict"]["verdict"] == "clean"
    again = json.loads(run_sesstool("repair", "--json", "--dry-run", str(out)).stdout)
    assert again["status"] == "balanced"  # idempotent: nothing left to plan
    assert src.read_bytes() == CLEAN[:cut]
    for p in work.iterdir():
        if p.name != "session.lock":
            os.unlink(p)
