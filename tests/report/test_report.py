"""`sesstool report`: the model from one streaming pass, and the page it becomes (structure,
escaping, CSP, bounds). The browser lane (test_browser.py) opens the same pages in Chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sesstool.core.timeline_envelope import EnvelopeTimeline
from sesstool.dialects import registry
from sesstool.engine.report import ReportLimits, ReportRequest, run_report
from sesstool.render.report_assets import CSS, JS
from sesstool.render.report_html import render_html
from tests.adversarial.test_terminal_safety import crashed_log
from tests.conftest import FIXTURES, Sesstool
from tests.report.hostile import HOSTILE, MARKUP

# Every crash fixture of every dialect sesstool reads, raw and zstd.
CRASHES = [
    p
    for scenario in (
        "dsh/crash-dangling-call",
        "dsh/crash-not-started",
        "dsh/torn-tail",
        "mini/dangling-call",
        "mini/not-started",
        "mini/torn-tail",
    )
    for p in sorted((FIXTURES / scenario).glob("session*.jsonl*"))
]
# The crash fixtures of the dialects with their own scanners, with the calls left dangling
# (recorded from the real CLIs: fixtures/codex/README.md, tests/claude_lane/README.md). They
# join the lists as soon as their dialect is registered (issues 16 and 17).
OTHER_CRASHES: dict[str, dict[str, int]] = {
    "codex": {
        "codex/kill-during-command": 1,
        "codex/kill-parallel-half": 1,
        "codex/sigterm-during-command": 1,
    },
    "claude": {"claude/projects/kill-tool": 1, "claude/projects/kill-parallel-one-answered": 1},
}
DANGLING: dict[Path, int] = {
    p: dangling
    for name, scenarios in OTHER_CRASHES.items()
    if name in registry.names()
    for scenario, dangling in scenarios.items()
    for p in sorted((FIXTURES / scenario).glob("*.jsonl*"))
}
CRASH_IDS = [str(p.relative_to(FIXTURES)) for p in CRASHES]
OTHER_IDS = [str(p.relative_to(FIXTURES)) for p in DANGLING]


class Page(HTMLParser):
    """Every element with its attributes, and the text inside <script> and <style>."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in = tag
            (self.scripts if tag == "script" else self.styles).append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in == "style":
            self.styles[-1] += data

    def by_id(self, ident: str) -> dict[str, str | None] | None:
        return next((a for _, a in self.elements if a.get("id") == ident), None)

    def with_class(self, cls: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.elements if cls in (a.get("class") or "").split()]


def _sha(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def check_page_is_inert(page: Page) -> None:
    """One script and one style, exactly ours, allowed by hash and nothing else; no element that
    loads or runs anything."""
    assert page.scripts == [JS] and page.styles == [CSS]
    csp = [
        a["content"]
        for t, a in page.elements
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert len(csp) == 1 and csp[0] is not None
    policy = dict(d.strip().split(" ", 1) for d in csp[0].split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == f"'{_sha(JS)}'" and policy["style-src"] == f"'{_sha(CSS)}'"
    for tag, attrs in page.elements:
        assert tag not in ("iframe", "img", "link", "object", "embed", "base", "form"), tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("src", "href", "style"):
            value = attrs.get(name)
            assert value is None or (name == "href" and value.startswith("#")), (tag, name, value)


@pytest.mark.parametrize("log", CRASHES, ids=CRASH_IDS)
def test_crash_fixture_page(sesstool: Sesstool, log: Path) -> None:
    inspected = json.loads(sesstool("inspect", "--json", str(log)).stdout)
    result = sesstool("report", str(log))
    assert result.exit_code == 0, result.stderr
    page = Page(result.stdout)
    check_page_is_inert(page)
    verdict = page.by_id("verdict")
    assert verdict is not None and verdict["data-verdict"] == inspected["verdict"]["verdict"]
    findings = page.with_class("finding")
    assert len(findings) == len(inspected["findings"]) > 0
    for n, _ in enumerate(findings):
        link = [a for t, a in page.elements if t == "a" and a.get("href") == f"#mark-{n}"]
        assert link, f"finding {n} not linked"
        mark = page.by_id(f"mark-{n}")
        assert mark is not None and mark.get("href") == f"#finding-{n}", "the mark links back"
    opened = page.with_class("open")
    assert any("turn" in (a.get("class") or "").split() for a in opened) == (
        inspected["open"]["turn"] is not None
    )
    pending = inspected["open"]["pending_calls"]
    dangling = [a for a in opened if a.get("data-status") == "dangling"]
    never = [a for a in opened if a.get("data-status") == "not-started"]
    assert len(dangling) == sum(1 for p in pending if p["call_seq"] is not None)
    assert len(never) == sum(1 for p in pending if p["call_seq"] is None)
    closers = re.search(r"<pre class='closers'>(.*?)</pre>", result.stdout, re.S)
    expected = inspected["repair"]["closers"]
    assert (closers.group(1).count("\n") + 1 if closers else 0) == len(expected)


@pytest.mark.parametrize("log", list(DANGLING), ids=OTHER_IDS)
def test_other_dialects_crash_page(sesstool: Sesstool, log: Path) -> None:
    inspected = json.loads(sesstool("inspect", "--json", str(log)).stdout)
    result = sesstool("report", str(log))
    assert result.exit_code == 0, result.stderr
    page = Page(result.stdout)
    check_page_is_inert(page)
    verdict = page.by_id("verdict")
    assert verdict is not None and verdict["data-verdict"] == inspected["verdict"]["verdict"] == "interrupted"
    assert len(page.with_class("finding")) == len(inspected["findings"])
    for n in range(len(inspected["findings"])):
        assert page.by_id(f"mark-{n}") is not None
    dangling = [a for a in page.with_class("open") if a.get("data-status") == "dangling"]
    assert len(dangling) == DANGLING[log]
    assert [a for a in page.with_class("turn") if "open" in (a.get("class") or "").split()]


def test_dangling_call_is_open_ended_past_the_crash_point() -> None:
    report = run_report(ReportRequest(str(FIXTURES / "dsh/crash-dangling-call/session.jsonl")))
    (call,) = [i for i in report.items if i.kind == "tool"]
    assert (call.label, call.end, call.status, call.first_seq) == ("bash", None, "dangling", 4)
    assert report.crash and report.end == call.start == 1760000000301
    page = Page(render_html(report).decode())
    bar = page.by_id(call.key)
    crash = page.by_id("crash-point")
    assert bar is not None and crash is not None
    x, width = float(bar["x"] or 0), float(bar["width"] or 0)
    assert x <= float(crash["x1"] or 0) < x + width, "the open bar runs on past the crash line"


def test_answered_calls_are_bars_from_call_to_result() -> None:
    report = run_report(ReportRequest(str(FIXTURES / "dsh/clean-multiturn/session.jsonl")))
    tools = [i for i in report.items if i.kind == "tool"]
    assert tools and all(i.end is not None and i.end >= i.start for i in tools)
    assert {i.status for i in tools} <= {"answered", "error"}
    turns = [i for i in report.items if i.kind == "turn"]
    assert [i.label for i in turns] == ["turn 1", "turn 2", "turn 3"]
    assert all(i.status == "completed" for i in turns)
    assert report.gaps, "the long pauses between turns are marked"
    assert not report.crash and report.closers == ()


def test_collector_pairs_by_cited_seq_then_by_call_id_and_reopens_past_the_commit() -> None:
    lines = [
        {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
        {"type": "tool/call", "seq": 1, "time": 11, "data": {"callId": "a", "name": "x"}},
        {"type": "tool/call", "seq": 2, "time": 12, "data": {"callId": "b", "name": "y"}},
        {"type": "tool/result", "seq": 3, "time": 20, "data": {"message": {"tool_call_id": "zzz"}},
         "sourceEventSeqs": [2]},
        {"type": "tool/result", "seq": 4, "time": 30, "data": {"message": {"tool_call_id": "a"}}},
        {"type": "turn/end", "seq": 5, "time": 40, "data": {"turn": 1, "reason": "completed"}},
    ]  # fmt: skip
    raw = [json.dumps(x).encode() for x in lines]
    c = EnvelopeTimeline()
    c.feed_lines(raw, 0, 1, None)
    got = {i.label: (i.start, i.end, i.status) for i in c.finish().items}
    assert got == {"turn 1": (10, 40, "completed"), "x": (11, 30, "answered"), "y": (12, 20, "answered")}
    c = EnvelopeTimeline()
    c.feed_lines(raw, 0, 1, None)
    cut = sum(len(r) + 1 for r in raw[:4])  # the last two records were not committed
    cut_items = {i.label: (i.end, i.status) for i in c.finish(cut).items}
    assert cut_items == {"turn 1": (None, "open"), "x": (None, "dangling"), "y": (20, "answered")}


def test_hostile_text_is_inert_in_the_page(sesstool: Sesstool, tmp_path: Path) -> None:
    log = crashed_log(tmp_path, HOSTILE)
    result = sesstool("report", str(log))
    assert result.exit_code == 0, result.stderr
    page = Page(result.stdout)
    check_page_is_inert(page)
    assert "window.__pwned" in result.stdout  # the text is there, as text
    assert "<script>window" not in result.stdout and "<img" not in result.stdout
    for ch in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x00"):
        assert ch not in result.stdout
    assert MARKUP.split("<", 1)[0] == ""  # sanity: the markup starts with a tag


def test_bounded_page_for_a_long_log(tmp_path: Path) -> None:
    from bench.genlog import generate

    log = tmp_path / "big.jsonl"
    generate(log, 3 << 20, seed=5)
    bounds = ReportLimits(
        timeline_head=40, timeline_tail=40, messages_head=5, messages_tail=10, part_chars=300
    )
    report = run_report(ReportRequest(str(log), bounds=bounds))
    assert report.verdict == "clean"
    assert len(report.items) <= 80 and report.elision.timeline_items > 0
    assert len(report.messages) == 15 and report.elision.messages == report.messages_total - 15
    assert report.elision.characters > 0
    assert all(len(p.text) <= 300 for m in report.messages for p in m.parts)
    page = render_html(report).decode()
    assert "id='elision'" in page and "id='messages-elided'" in page
    # the full-size page of the same log is bounded by the defaults, far below the log's size
    assert len(render_html(run_report(ReportRequest(str(log))))) < log.stat().st_size


def test_output_file_is_published_and_never_overwritten(sesstool: Sesstool, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    log = str(FIXTURES / "dsh/crash-dangling-call/session.jsonl")
    first = sesstool("report", log, "-o", str(out))
    assert first.exit_code == 0, first.stderr
    assert out.read_text() == sesstool("report", log).stdout
    again = sesstool("report", log, "-o", str(out))  # the same page: already there (issue 15 item 12)
    assert again.exit_code == 0 and "already published, identical" in again.stderr
    other = sesstool("report", str(FIXTURES / "dsh/v0-tiny/session.jsonl"), "-o", str(out))
    assert other.exit_code == 6 and re.search("exist", other.stderr)
    assert out.read_text() == sesstool("report", log).stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_corrupt_log_report_names_the_refusals(sesstool: Sesstool) -> None:
    result = sesstool("report", str(FIXTURES / "dsh/corrupt-middle/session.jsonl"))
    assert result.exit_code == 0, result.stderr
    assert "data-verdict='corrupt'" in result.stdout
    assert "no conversation: the log is corrupt" in result.stdout
    assert "a repair refuses this log" in result.stdout
