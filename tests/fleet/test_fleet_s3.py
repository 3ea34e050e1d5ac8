"""The fleet against a real S3 API on loopback, on a 2-worker LocalCluster: every row equals
what the single-file command reports for that file; migrate publishes exactly the expected new
objects and touches no existing one; a second run writes nothing; a killed worker loses no row
and duplicates no object."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from sesstool.fleet.entry import FleetOutput, FleetReport, run_fleet
from sesstool.fleet.rows import Row
from sesstool.fleet.run import FleetRequest
from sesstool.fleet.work import FleetSettings
from sesstool.store.summary import read_jsonl
from tests.conftest import FIXTURES, run_sesstool
from tests.fleet.conftest import S3, WRITE_DIRS, corpus_files, rel, write_corpus

pytestmark = pytest.mark.fleet


def fleet(
    s3: S3, cluster: Any, command: str, urls: tuple[str, ...], summary: Path, **kw: Any
) -> tuple[FleetReport, list[Row]]:
    batch = kw.pop("batch", None)
    on_plan = kw.pop("on_plan", None)
    settings = FleetSettings(command, storage_options=s3.storage_options(), **kw)
    request = FleetRequest(urls, settings, scheduler=cluster.scheduler.address, batch=batch)
    report = run_fleet(request, FleetOutput(summary, None, None), on_plan=on_plan)
    rows = [Row.from_dict(d) for d in read_jsonl(summary)]
    return report, rows


def by_path(rows: list[Row], bucket: str) -> dict[str, Row]:
    out = {r.path.removeprefix(f"s3://{bucket}/"): r for r in rows}
    assert len(out) == len(rows), "one row per file"
    return out


def cli_json(*args: str) -> tuple[int, dict[str, Any]]:
    run = run_sesstool(*args)
    return run.exit_code, json.loads(run.stdout)


@pytest.fixture(scope="module")
def corpus(s3: S3) -> tuple[str, list[Path]]:
    bucket = s3.new_bucket()
    files = corpus_files()
    s3.upload(bucket, files)
    return bucket, files


def test_fleet_validate_equals_single_file_validate(
    s3: S3, cluster: Any, corpus: tuple[str, list[Path]], tmp_path: Path
) -> None:
    bucket, files = corpus
    report, rows = fleet(s3, cluster, "validate", (f"s3://{bucket}/",), tmp_path / "v.jsonl")
    got = by_path(rows, bucket)
    assert sorted(got) == sorted(rel(p) for p in files)
    assert report.files == len(files) and report.processed == len(files)
    verdicts = {r.verdict for r in rows}
    assert {"clean", "interrupted", "torn", "corrupt", "unsupported"} <= verdicts
    assert {r.version for r in rows} >= {0, 1, 2, 3, 4}
    assert {r.dialect for r in rows} >= {"dsh", "mini"}
    for path in files:
        code, doc = cli_json("validate", "--format", "json", str(path))
        (single,) = doc["files"]
        row = got[rel(path)]
        findings = single["findings"]
        assert row.exit == code, rel(path)
        assert row.status == ("findings" if code == 1 else "ok")
        assert (row.verdict, row.version, row.events) == (
            single["verdict"]["verdict"],
            single["version"],
            single["events"],
        )
        assert row.rules == tuple(sorted({f["rule"] for f in findings})), rel(path)
        assert (row.errors, row.warnings, row.infos) == tuple(
            sum(1 for f in findings if f["severity"] == s) for s in ("error", "warning", "info")
        )
        assert row.findings_dropped == single["findings_dropped"]
        assert row.bytes == path.stat().st_size
        assert row.output is None


def test_fleet_inspect_equals_single_file_inspect(
    s3: S3, cluster: Any, corpus: tuple[str, list[Path]], tmp_path: Path
) -> None:
    bucket, files = corpus
    _, rows = fleet(
        s3, cluster, "inspect", (f"s3://{bucket}/dsh/", f"s3://{bucket}/mini/"), tmp_path / "i.jsonl"
    )
    got = by_path(rows, bucket)
    expected = [p for p in files if rel(p).startswith(("dsh/", "mini/"))]
    assert sorted(got) == sorted(rel(p) for p in expected)
    for path in expected:
        code, doc = cli_json("inspect", "--json", str(path))
        row = got[rel(path)]
        assert (row.exit, row.status) == (code, "ok")
        assert row.verdict == doc["verdict"]["verdict"], rel(path)
        assert row.version == doc["version"]
        assert row.events == doc["stats"]["events"]
        assert row.rules == tuple(sorted({f["rule"] for f in doc["findings"]}))


def _mirror(files: list[Path], root: Path) -> dict[str, Path]:
    out = {}
    for path in files:
        dest = root / rel(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        out[rel(path)] = dest
    return out


def _tree(root: Path) -> dict[str, str]:
    import hashlib

    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and p.name != "session.lock"
    }


@pytest.mark.parametrize("command", ["migrate", "repair"])
def test_fleet_write_publishes_exactly_the_single_file_outputs(
    s3: S3, cluster: Any, tmp_path: Path, command: str
) -> None:
    files = write_corpus()
    assert len(files) >= len(WRITE_DIRS)  # at least one log per directory, both encodings
    bucket = s3.new_bucket()
    s3.upload(bucket, files)
    before = s3.etags(bucket)
    # the single-file command on a local mirror, file by file: the expected new files and codes
    mirror = _mirror(files, tmp_path / "mirror")
    untouched = _tree(tmp_path / "mirror")
    codes = {key: run_sesstool(command, str(path)).exit_code for key, path in mirror.items()}
    expected_new = {k: v for k, v in _tree(tmp_path / "mirror").items() if k not in untouched}
    assert expected_new, "the corpus has logs this command writes for"

    report, rows = fleet(s3, cluster, command, (f"s3://{bucket}/",), tmp_path / "w1.jsonl")
    got = by_path(rows, bucket)
    after = s3.etags(bucket)
    assert {k: v for k, v in after.items() if k in before} == before, "no existing object changed"
    created = {k.removeprefix(f"{bucket}/"): s3.sha256(k) for k in after.keys() - before.keys()}
    assert created == expected_new
    assert sorted(got) == sorted(mirror)
    for key, row in got.items():
        assert row.exit == codes[key], (key, row.message)
        if row.output is not None:
            assert row.output_sha256 == expected_new[row.output.removeprefix(f"s3://{bucket}/")]
    assert report.failed == sum(1 for c in codes.values() if c != 0)

    # a second run writes nothing: the same outputs are found in place, byte for byte
    _, again = fleet(s3, cluster, command, (f"s3://{bucket}/",), tmp_path / "w2.jsonl")
    assert s3.etags(bucket) == after
    second = by_path(again, bucket)
    for key, row in got.items():
        if row.output is not None:
            assert (second[key].status, second[key].output) == ("exists", row.output), key
        else:
            assert (second[key].status, second[key].exit) == (row.status, row.exit), key


def test_killing_a_worker_loses_no_row_and_duplicates_no_object(s3: S3, cluster: Any, tmp_path: Path) -> None:
    files = write_corpus(
        (
            "dsh/v0-tiny",
            "dsh/v1-tiny",
            "dsh/v2-tiny",
            "dsh/v3-tiny",
            "dsh/torn-tail",
            "dsh/crash-dangling-call",
        )
    )
    bucket = s3.new_bucket()
    s3.upload(bucket, files)
    before = s3.etags(bucket)
    killed: list[int] = []

    def on_plan(plan: Any) -> Any:
        def progress(done: int, size: int) -> None:
            if not killed and done >= 2:
                pids = cluster.run(os.getpid)
                victim = sorted(pids.values())[0]
                os.kill(victim, signal.SIGKILL)
                killed.append(done)

        return progress

    _, rows = fleet(
        s3, cluster, "migrate", (f"s3://{bucket}/",), tmp_path / "k.jsonl", batch=1, on_plan=on_plan
    )
    assert killed and killed[0] < len(files), "the worker died mid-run"
    got = by_path(rows, bucket)
    assert sorted(got) == sorted(rel(p) for p in files)
    assert all(r.status != "crashed" for r in rows), [r.message for r in rows if r.status == "crashed"]
    after = s3.etags(bucket)
    assert {k: v for k, v in after.items() if k in before} == before
    outputs = [r.output for r in rows if r.output is not None]
    assert len(outputs) == len(set(outputs))
    assert {f"s3://{k}" for k in after.keys() - before.keys()} == set(outputs)
    for r in rows:
        if r.output is not None:
            assert s3.sha256(r.output.removeprefix("s3://")) == r.output_sha256


def test_fleet_cli_embedded_cluster_parquet_and_resume(s3: S3, cluster: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    bucket = s3.new_bucket()
    s3.upload(bucket, [p for p in corpus_files() if rel(p).startswith("dsh/v")])
    opts = [
        f"--storage-option={k}={json.dumps(v) if not isinstance(v, str) else v}"
        for k, v in s3.options.items()
    ]
    summary, parquet = tmp_path / "s.jsonl", tmp_path / "s.parquet"
    run = run_sesstool(
        "fleet", "validate", f"s3://{bucket}/dsh/", "--workers", "2", "--summary", str(summary),
        "--parquet", str(parquet), "--json", *opts,
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    totals = json.loads(run.stdout)
    rows = list(read_jsonl(summary))
    assert totals["files"] == len(rows) > 4 and totals["failed"] == 0
    assert pq.read_table(parquet).to_pylist() == rows

    # resume: a partial summary (plus a crashed row, which is retried) carries over
    partial = tmp_path / "partial.jsonl"
    kept = rows[:3]
    crashed = dict(rows[3], status="crashed", exit=None, message="worker lost")
    partial.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in [*kept, crashed]))
    resumed = tmp_path / "r.jsonl"
    run = run_sesstool(
        "fleet", "validate", f"s3://{bucket}/dsh/", "--scheduler", cluster.scheduler.address,
        "--summary", str(resumed),
        "--resume", str(partial), "--json", *opts,
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    totals = json.loads(run.stdout)
    assert (totals["carried_over"], totals["processed"]) == (3, len(rows) - 3)
    again = list(read_jsonl(resumed))
    assert again[:3] == kept
    strip = lambda r: {k: v for k, v in r.items() if k != "seconds"}  # noqa: E731
    assert sorted(map(json.dumps, map(strip, again))) == sorted(map(json.dumps, map(strip, rows)))


def test_a_store_without_conditional_create_is_refused_before_any_work(tmp_path: Path) -> None:
    import fsspec

    mem = fsspec.filesystem("memory")
    source = FIXTURES / "dsh" / "v0-tiny" / "session.jsonl"
    mem.pipe_file("/fleet-refuse/v0/session.jsonl", source.read_bytes())
    before = mem.find("/fleet-refuse", detail=False)
    try:
        run = run_sesstool(
            "fleet", "migrate", "memory://fleet-refuse/", "--summary", str(tmp_path / "m.jsonl"),
            "--workers", "1",
        )  # fmt: skip
        assert run.exit_code == 6, run.stderr
        assert "conditional create" in run.stderr and "nothing was written" in run.stderr
        assert mem.find("/fleet-refuse", detail=False) == before
        assert not (tmp_path / "m.jsonl").exists()
    finally:
        mem.rm("/fleet-refuse", recursive=True)


def test_a_store_that_ignores_if_none_match_is_refused(s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:
    from sesstool.core.errors import WriteRefusedError
    from sesstool.store import object_publish

    bucket = s3.new_bucket()
    real = s3.fs()

    class Careless:
        """An S3 front that drops the conditional header, like stores without the feature."""

        def pipe_file(self, path: str, data: bytes, mode: str = "overwrite") -> None:
            real.pipe_file(path, data)

        def rm_file(self, path: str) -> None:
            real.rm_file(path)

    monkeypatch.setattr(object_publish, "filesystem", lambda url, options=None: Careless())
    with pytest.raises(WriteRefusedError, match="ignores"):
        object_publish.check_conditional_create(f"s3://{bucket}/x/new.jsonl")
    assert s3.etags(bucket) == {}, "the probe object is removed again"


def test_fleet_migrate_on_local_paths_uses_the_hardlink_publisher(cluster: Any, tmp_path: Path) -> None:
    files = write_corpus(("dsh/v0-tiny", "dsh/v2-tiny", "mini/basic", "dsh/corrupt-middle"))
    fleet_root, single_root = tmp_path / "fleet", tmp_path / "single"
    _mirror(files, fleet_root)
    single = _mirror(files, single_root)
    codes = {key: run_sesstool("migrate", str(path)).exit_code for key, path in single.items()}
    settings = FleetSettings("migrate")
    request = FleetRequest((str(fleet_root),), settings, scheduler=cluster.scheduler.address)
    report = run_fleet(request, FleetOutput(tmp_path / "l1.jsonl", None, None))
    assert _tree(fleet_root) == _tree(single_root)
    rows = {
        Path(r["path"]).relative_to(fleet_root).as_posix(): Row.from_dict(r)
        for r in read_jsonl(tmp_path / "l1.jsonl")
    }
    assert {k: r.exit for k, r in rows.items()} == codes
    assert report.failed == sum(1 for c in codes.values() if c)
    migrated = {k for k, r in rows.items() if r.status == "migrated"}
    assert migrated and all(os.stat(rows[k].output or "").st_nlink == 1 for k in migrated)

    tree = {p: p.stat().st_ino for p in fleet_root.rglob("*") if p.is_file()}
    run_fleet(request, FleetOutput(tmp_path / "l2.jsonl", None, None))
    assert {p: p.stat().st_ino for p in fleet_root.rglob("*") if p.is_file()} == tree, "nothing written"
    again = {Path(r["path"]).relative_to(fleet_root).as_posix(): r for r in read_jsonl(tmp_path / "l2.jsonl")}
    assert {k for k, r in again.items() if r["status"] == "exists"} == migrated


def test_without_the_extra_fleet_commands_exit_2_with_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sesstool.cli import fleet_cmd

    monkeypatch.setattr(fleet_cmd, "missing_extra", lambda: ["dask", "pyarrow"])
    run = run_sesstool("fleet", "validate", "fixtures", "--summary", "-")
    assert run.exit_code == 2
    assert "pip install 'sesstool[fleet]'" in run.stderr and "dask, pyarrow" in run.stderr
    assert run_sesstool("fleet", "--help").exit_code == 0


def test_fleet_write_refuses_a_second_encoding_in_a_remote_session_directory(
    s3: S3, cluster: Any, tmp_path: Path
) -> None:
    """A prefix holding a session's log raw and zstd (the fixture layout) gets no v4 generation
    of either encoding, exactly as the local directory does not (docs/format.md, issue 11 item
    10): each row is the single-file refusal (exit 6, "two encodings"), nothing is created.
    The scratch copy alone (one file) could not see the other encoding: the prefix is listed."""
    bucket = s3.new_bucket()
    directory = FIXTURES / "dsh" / "v0-tiny"
    names = ("session.jsonl", "session.jsonl.zstd")
    s3.fs().pipe({f"{bucket}/s/{n}": (directory / n).read_bytes() for n in names})
    local = tmp_path / "s"
    local.mkdir()
    for n in names:
        shutil.copy(directory / n, local / n)
    for n in names:
        single = run_sesstool("migrate", str(local / n))
        assert single.exit_code == 6 and "two encodings" in single.stderr, single.stderr
    before = s3.etags(bucket)

    _, rows = fleet(s3, cluster, "migrate", (f"s3://{bucket}/s/",), tmp_path / "sum.jsonl")
    assert [(r.status, r.exit) for r in rows] == [("error", 6)] * 2, [r.message for r in rows]
    assert all(r.message is not None and "two encodings" in r.message for r in rows)
    assert s3.etags(bucket) == before

    alone = s3.new_bucket()  # one encoding in the prefix: published as before
    s3.fs().pipe({f"{alone}/s/session.jsonl.zstd": (directory / "session.jsonl.zstd").read_bytes()})
    _, rows = fleet(s3, cluster, "migrate", (f"s3://{alone}/s/",), tmp_path / "one.jsonl")
    assert [(r.status, r.exit) for r in rows] == [("migrated", 0)], [r.message for r in rows]
    assert sorted(s3.etags(alone)) == [f"{alone}/s/session.jsonl.zstd", f"{alone}/s/session.v4.jsonl.zstd"]


@pytest.mark.parametrize("name", ["UPPER.JSONL", "rollout.jsonl.zst", "Mixed.Jsonl.Zstd"])
def test_a_prefix_walk_finds_every_log_suffix_in_any_case(s3: S3, tmp_path: Path, name: str) -> None:
    """Remote prefixes are walked as local directories are (``layout.suffixes``, any case)."""
    from sesstool.dialects import registry
    from sesstool.store.remote import list_logs, using_storage_options

    bucket = s3.new_bucket()
    s3.fs().pipe({f"{bucket}/p/{name}": b"", f"{bucket}/p/notes.txt": b""})
    local = tmp_path / "p"
    local.mkdir()
    (local / name).write_bytes(b"")
    (local / "notes.txt").write_bytes(b"")
    with using_storage_options(s3.options):
        found = [e.url for e in list_logs((f"s3://{bucket}/p/",), suffixes=registry.log_suffixes())]
    assert found == [f"s3://{bucket}/p/{name}"]
    from sesstool.engine.validate import expand_paths

    assert list(expand_paths((str(local),))) == [str(local / name)]


def test_a_claude_sessions_subagent_files_are_rows_of_their_own(cluster: Any, tmp_path: Path) -> None:
    """Single-file validate and inspect read a Claude session's subagent files with it; the fleet
    lists those files as items of their own, so each of its rows is about one file — the
    session's row is the session's alone, and nothing is counted twice."""
    home = tmp_path / "kill-subagent"
    shutil.copytree(FIXTURES / "claude" / "projects" / "kill-subagent", home)
    files = sorted(str(p) for p in home.rglob("*.jsonl"))
    assert len(files) == 2
    for command in ("validate", "inspect"):
        summary = tmp_path / f"{command}.jsonl"
        request = FleetRequest((str(home),), FleetSettings(command), scheduler=cluster.scheduler.address)
        report = run_fleet(request, FleetOutput(summary, None, None))
        rows = [Row.from_dict(d) for d in read_jsonl(summary)]
        assert sorted(r.path for r in rows) == files and report.processed == 2, command
        for row in rows:
            _, doc = cli_json("validate", "--format", "json", row.path)
            single = next(f for f in doc["files"] if f["path"] == row.path)
            assert row.status != "crashed", row
            assert row.verdict == single["verdict"]["verdict"]
            assert row.rules == tuple(sorted({f["rule"] for f in single["findings"]}))
