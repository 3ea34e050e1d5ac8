"""Issue 11 item 1: ``report`` drew a timeline item (and listed the id) of every call the model
advertised but never started, built after the scan from all its pending calls — a mini-agent
log of 40,000 of them took 132 MB against 56 MB at 10,000. The page now draws the first
``ReportLimits.timeline_tail`` (1,500) and counts the rest in its list of them ("… and N
more"), walking the (spilled) pending calls once (docs/format.md
"Reports"). Peak RSS of a child under an address-space limit, never timed: N to 4N within 2 MiB
(measured +0.7 MiB; on the code before +76.8)."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from sesstool.engine.report import ReportLimits
from tests.adversarial.hostile_logs import run_measured
from tests.conftest import ROOT, Sesstool

MiB = 1 << 20
SPILL_AT = 4096
CAP = ReportLimits().timeline_tail
WHEN = "2026-01-01T00:00:00.000Z"


def never_started(where: Path, calls: int) -> Path:
    """A mini-agent log of ``calls`` assistant messages, each advertising one tool call that no
    tool/call ever starts."""
    path = where / f"never-started-{calls}.jsonl"
    with open(path, "wb") as f:
        header = {"version": 1, "delegationDepth": 0, "id": "s"}
        f.write(orjson.dumps({"seq": 0, "time": WHEN, "type": "session/header", "data": header}) + b"\n")
        for n in range(calls):
            call = {"id": f"call_{n}", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            line = {"seq": n + 1, "time": WHEN, "type": "assistant/message", "data": {"message": message}}
            f.write(orjson.dumps(line) + b"\n")
    return path


def _listed(page: str) -> tuple[list[str], str]:
    """The ids the page lists as never started, and what follows them."""
    found = re.search(r"<p class='meta' id='not-started'>Advertised but never started: (.*?)\.</p>", page)
    assert found is not None
    ids, _, more = found.group(1).partition(" … ")
    return ids.split(", "), more


@pytest.mark.parametrize("calls", [1, CAP, CAP + 1, CAP + 7])
def test_a_report_draws_at_most_the_cap_of_never_started_calls(
    sesstool: Sesstool, tmp_path: Path, calls: int
) -> None:
    log = never_started(tmp_path, calls)
    page = tmp_path / "page.html"
    result = sesstool("report", "-o", str(page), str(log))
    assert result.exit_code == 0, result.stderr
    text = page.read_text()
    ids, more = _listed(text)
    shown = min(calls, CAP)
    assert ids == [f"call_{n}" for n in range(shown)]
    assert more == ("" if calls <= CAP else f"and {calls - CAP} more (sesstool inspect lists them all)")
    assert text.count("✕ never started") == shown


@pytest.mark.slow
def test_report_memory_does_not_grow_with_never_started_calls(tmp_path: Path) -> None:
    peaks = []
    for calls in (10_000, 40_000):
        log = never_started(tmp_path, calls)
        page = tmp_path / f"page-{calls}.html"
        run = run_measured(
            ["report", "-o", str(page), str(log)],
            address_space=2 << 30,
            cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT)},
            module=("tests.adversarial._spilling_child", str(SPILL_AT)),
        )
        assert run.exit_code == 0, run.stderr
        assert f"and {calls - CAP} more" in page.read_text()
        peaks.append(run.peak_rss)
    assert peaks[1] - peaks[0] < 2 * MiB, [round(p / MiB, 2) for p in peaks]
