"""Issue 11 item 1, the audit of stop 30: the fleet driver's memory does not grow with the
files' rows. ``run_fleet`` once kept every row it wrote (``seen``, for the totals) and every
row of a ``--resume`` summary (``carried``) until the run ended: about 0.5 KiB a file on top of
what the listing holds. The totals are now counted as the rows pass, and a resumed summary is
read twice (the paths to skip, then the rows to carry), its rows never held and its paths in a
``core.held_map.HeldMap`` (past 4,096 of them in a spill file).

Peak RSS of a child (``hostile_logs.run_measured``, never timed) running the driver on N and
4N rows, N = 10,000, with the cluster replaced by the rows (``_driver_child``): the workers and
the scheduler are not what is measured. On main's code before (a74b652) N → 4N grew 29.64 →
45.35 MiB (rows) and 37.46 → 76.76 (resumed): both fail there; now 24.95 → 24.99 and 28.89 →
28.97."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.adversarial.hostile_logs import MiB, assert_flat, run_measured
from tests.conftest import ROOT

pytest.importorskip("distributed")

N = 10_000


def _driver(where: Path, rows: int, resume: Path | None = None) -> tuple[int, list[bytes], bytes]:
    summary = where / f"rows-{rows}-{resume is not None}.jsonl"
    summary.unlink(missing_ok=True)
    measured = run_measured(
        [str(rows), str(summary), *([str(resume)] if resume else [])],
        address_space=2 << 30,
        cwd=where,
        env={"PYTHONPATH": str(ROOT)},
        module=("tests.fleet._driver_child",),
    )
    assert measured.exit_code == 0, measured.stderr
    return measured.peak_rss, summary.read_bytes().splitlines(), measured.stdout


@pytest.mark.slow  # four children (the resumed case: four more to write its summaries)
@pytest.mark.parametrize("resumed", [False, True], ids=["rows", "resumed"])
def test_the_driver_holds_no_row_per_file(tmp_path: Path, resumed: bool) -> None:
    peaks = []
    for rows in (N, 4 * N):
        resume = None
        if resumed:  # an earlier summary of ``rows`` rows, each carried into the new one
            _, _, _ = _driver(tmp_path, rows)
            resume = tmp_path / f"rows-{rows}-False.jsonl"
        peak, written, said = _driver(tmp_path, rows, resume)
        carried = rows if resumed else 0
        assert len(written) == rows + carried
        assert orjson.loads(written[-1])["path"].startswith(f"/fleet/{rows - 1:08d}/")
        findings = -(-rows // 3)  # every third row a "findings" row
        totals = f"{rows + carried} {carried} {findings * (2 if resumed else 1)} "
        assert said.decode().startswith(totals), said
        peaks.append(peak)
    print([round(p / MiB, 2) for p in peaks])
    assert_flat(*peaks)


def test_a_resumed_run_skips_exactly_the_done_files_past_the_spill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paths of a --resume summary past ``core.held_map.HELD_AT`` (lowered to 2): in a
    spill file, and the plan still skips exactly the done ones (a crashed row is retried)."""
    from sesstool.core import held_map
    from sesstool.fleet.entry import _done_paths
    from sesstool.fleet.run import FleetRequest, plan
    from sesstool.fleet.work import FleetSettings
    from tests.conftest import FIXTURES

    monkeypatch.setattr(held_map, "HELD_AT", 2)
    tiny = (FIXTURES / "dsh" / "v4-tiny" / "session.v4.jsonl").read_bytes()
    logs = [tmp_path / "logs" / f"s{n}.v4.jsonl" for n in range(10)]
    logs[0].parent.mkdir()
    for log in logs:
        log.write_bytes(tiny)
    summary = tmp_path / "earlier.jsonl"
    rows: list[dict[str, object]] = [
        {"path": str(log), "status": "crashed" if n == 5 else "ok", "rules": []}
        for n, log in enumerate(logs[:7])
    ]
    summary.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    done = _done_paths(summary)
    assert done._table is not None and len(done) == 6  # spilled
    todo = plan(FleetRequest((str(logs[0].parent),), FleetSettings("validate"), done=done))
    assert sorted(i.path for i in todo.items) == sorted(map(str, [logs[5], *logs[7:]]))
    assert todo.skipped == 6
