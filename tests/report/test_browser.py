"""The report page in a real browser: Debian's Chromium, driven by Playwright.

Each crash fixture's page (every dialect, raw and zstd) is opened from a file: the DOM shows the
verdict, the open calls drawn open, every finding linked to its mark; no request leaves the
page; the script runs (zoom) and nothing else does (hostile text sets no ``window.__pwned``).
A screenshot of each page is kept in ``test-artifacts/browser/`` (git-ignored).

Skipped where Playwright or Chromium is missing; ``make browser-lane`` installs both and sets
SESSTOOL_BROWSER=1, under which a missing browser fails instead (CI runs that lane).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sesstool.engine.report import ReportRequest, run_report
from sesstool.render.report_html import render_html
from tests.adversarial.test_terminal_safety import crashed_log
from tests.conftest import FIXTURES, ROOT
from tests.report.hostile import HOSTILE
from tests.report.test_report import CRASH_IDS, CRASHES, DANGLING, OTHER_IDS

CHROMIUM = os.environ.get("SESSTOOL_CHROMIUM", "/usr/bin/chromium")
REQUIRED = os.environ.get("SESSTOOL_BROWSER") == "1"
ARTIFACTS = ROOT / "test-artifacts" / "browser"


def _browser_or_skip() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("playwright is not installed (make browser-lane installs it)")
    if not shutil.which(CHROMIUM):
        if REQUIRED:
            pytest.fail(f"no Chromium at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM} (make browser-lane installs it)")
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _browser_or_skip()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Opened:
    """A page opened from a file, with every request and console message it made."""

    def __init__(self, browser: Any, html_file: Path) -> None:
        self.url = html_file.as_uri()
        self.requests: list[str] = []
        self.console: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("dialog", self._dialog)
        # anything but the page itself is refused before it leaves (and recorded above)
        self.page.route("**/*", self._only_the_page)
        self.page.goto(self.url)

    def _dialog(self, dialog: Any) -> None:
        self.console.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def _only_the_page(self, route: Any) -> None:
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()

    def offsite(self) -> list[str]:
        return [u for u in self.requests if u != self.url]


def _page_file(tmp_path: Path, log: Path, name: str) -> Path:
    out = tmp_path / f"{name}.html"
    out.write_bytes(render_html(run_report(ReportRequest(str(log)))))
    return out


def _shot(opened: Opened, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    opened.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("log", [*CRASHES, *DANGLING], ids=[*CRASH_IDS, *OTHER_IDS])
def test_crash_fixture_in_chromium(browser: Any, tmp_path: Path, log: Path) -> None:
    name = str(log.relative_to(FIXTURES)).replace("/", "_")
    report = run_report(ReportRequest(str(log)))
    opened = Opened(browser, _page_file(tmp_path, log, name))
    page = opened.page
    _shot(opened, name)
    assert page.text_content("#verdict") == report.verdict
    assert page.get_attribute("#verdict", "data-verdict") == report.verdict
    # open spans are drawn open: hatched, running on past the crash line
    for item in report.items:
        if item.end is None:
            cls = page.get_attribute(f"#{item.key}", "class") or ""
            assert "open" in cls.split(), item
            box = page.locator(f"#{item.key}").bounding_box()
            crash = page.locator("#crash-point").bounding_box()
            assert box is not None and crash is not None and box["x"] + box["width"] > crash["x"], item
    assert page.locator("rect.open[data-status=dangling]").count() == sum(
        1 for p in report.items if p.status == "dangling"
    )
    # every finding is linked to a mark on the timeline, and the mark back to it
    findings = page.locator("li.finding")
    assert findings.count() == len(report.findings) > 0
    for f in report.findings:
        page.click(f"#finding-{f.index} a.to-timeline")
        assert page.evaluate("location.hash") == f"#mark-{f.index}"
        assert page.evaluate(f"document.getElementById('mark-{f.index}').closest('#timeline') !== null")
    assert opened.offsite() == [] and opened.console == []


def test_zoom_to_a_turn_runs_the_pages_own_script(browser: Any, tmp_path: Path) -> None:
    log = FIXTURES / "dsh/clean-multiturn/session.jsonl"
    opened = Opened(browser, _page_file(tmp_path, log, "clean-multiturn"))
    page = opened.page
    before = float(page.get_attribute("#timeline rect.turn >> nth=0", "x") or 0)
    page.locator("#timeline rect.turn").nth(1).click()
    assert page.text_content("#zoom-label", timeout=2000).startswith("zoomed")
    assert float(page.get_attribute("#timeline rect.turn >> nth=0", "x") or 0) < before
    page.click("#zoom-all")
    assert page.text_content("#zoom-label") == "whole session"
    _shot(opened, "clean-multiturn")
    assert opened.offsite() == [] and opened.console == []


def test_hostile_log_runs_no_script_and_loads_nothing(browser: Any, tmp_path: Path) -> None:
    log = crashed_log(tmp_path, HOSTILE)
    opened = Opened(browser, _page_file(tmp_path, log, "hostile"))
    page = opened.page
    page.wait_for_timeout(300)  # give any injected onerror/onload handler its chance
    for button in page.locator("button.show-all").all():
        button.click()
    page.locator("#timeline rect.turn").first.click()
    _shot(opened, "hostile")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img, iframe, link, object, embed").count() == 0
    assert page.locator("script").count() == 1 and page.locator("style").count() == 1
    assert "window.__pwned=1" in (page.text_content("#conversation") or "")
    assert opened.offsite() == [] and opened.console == []
