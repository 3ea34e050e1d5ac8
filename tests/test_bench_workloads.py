"""The benchmark's generated workloads are valid logs (issue 14): `make bench` counts a finding on
a generated log as a failure, so the small-event workload is checked here on real bytes — raw,
its zstd twin and its torn twin — by sesstool and by the generator's own independent checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import genlog
from sesstool.engine.scan import scan_source


@pytest.fixture(scope="module")
def small_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("small-events")
    raw = tmp / "small.jsonl"
    genlog.generate(raw, 1 << 20, seed=5, workload="small")
    zst = tmp / "small.jsonl.zstd"
    genlog.compress(raw, zst)
    torn = tmp / "small-torn.jsonl"
    genlog.generate(torn, 1 << 20, seed=5, torn=True, workload="small")
    return {"raw": raw, "zstd": zst, "torn": torn}


@pytest.mark.parametrize("kind", ["raw", "zstd"])
def test_small_event_log_is_clean(small_logs: dict[str, Path], kind: str) -> None:
    report = scan_source(small_logs[kind])
    assert report.scan.findings == (), report.scan.findings
    assert report.scan.verdict == "clean"
    events = genlog.verify(small_logs[kind]).events
    assert report.scan.stats.events == events


def test_small_event_torn_log_is_torn_after_a_tool_call(small_logs: dict[str, Path]) -> None:
    report = scan_source(small_logs["torn"])
    assert report.scan.verdict == "torn", report.scan.findings
    assert report.read.partial_line is not None
    genlog.verify(small_logs["torn"], torn=True)
    # the committed prefix of the torn log is the clean log plus the torn turn's records
    assert small_logs["torn"].read_bytes().startswith(small_logs["raw"].read_bytes())


def test_small_event_line_sizes() -> None:
    """The workload's promise: mostly small events (median ~100 B) with a long tail (p90 ~1.2 KB),
    much smaller than the chunk-heavy workload's lines and unlike them mostly not chunks."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "s.jsonl"
        genlog.generate(small, 2 << 20, seed=1, workload="small")
        dist = genlog.line_stats(small)
    assert 90 <= dist["p50"] <= 140, dist
    assert 900 <= dist["p90"] <= 1600, dist
    assert dist["types"]["assistant/chunk"] < dist["lines"] / 2, dist


def test_chunk_workload_bytes_unchanged_by_the_workload_knobs(tmp_path: Path) -> None:
    """The chunk-heavy workload's bytes did not move when the small-event knobs were added:
    run.py reuses kept logs by generator version. A fixed digest of a 256 KiB log pins them."""
    import hashlib

    log = tmp_path / "c.jsonl"
    genlog.generate(log, 256 << 10, seed=1)
    assert hashlib.sha256(log.read_bytes()).hexdigest() == CHUNK_256K_SHA256


CHUNK_256K_SHA256 = "1420c3aee9f00b0475ae7c443e3791eb290e8460badf7c3bb01a45da38f3d695"


def test_the_bench_lists_exactly_the_cli_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make bench` runs only the subcommands `sesstool --help` lists: the help's epilog
    (examples, exit statuses) is not read as more commands."""
    import importlib.util
    import sys

    from sesstool.cli.main import COMMANDS

    bench = Path(genlog.__file__).parent
    monkeypatch.syspath_prepend(str(bench))  # run.py imports its siblings by their own names
    spec = importlib.util.spec_from_file_location("bench_run_under_test", bench / "run.py")
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, run)  # its dataclasses look their module up
    spec.loader.exec_module(run)
    commands, note = run.sesstool_commands([sys.executable, "-m", "sesstool"])
    assert note == ""
    assert commands == set(COMMANDS)
