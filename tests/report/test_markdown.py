"""derive --format markdown: no content can leave its fenced block or turn into markup
(checked with a CommonMark parser, markdown-it-py), for any text and for the hostile log."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sesstool.render.derive_markdown import fence_for, fenced, inline
from sesstool.render.escape import safe
from tests.adversarial.test_terminal_safety import crashed_log
from tests.conftest import Sesstool
from tests.report.hostile import HOSTILE

MD = MarkdownIt("commonmark")
TEXT = st.text(st.sampled_from("`~\n \\<>*_#-abc")) | st.text()


@given(TEXT, st.sampled_from(["", "text", "json"]))
def test_a_fenced_block_holds_exactly_its_text(raw: str, info: str) -> None:
    text = safe(raw)  # what the renderer fences: terminal-unsafe characters already visible
    tokens = MD.parse("before\n\n" + fenced(text, info) + "\nafter\n")
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1
    expected = text if text.endswith("\n") or not text else text + "\n"
    assert fences[0].content == expected
    assert fences[0].info == info
    assert [t.content for t in tokens if t.type == "inline"] == ["before", "after"]


@given(TEXT)
def test_inline_text_is_never_markup(text: str) -> None:
    tokens = MD.parse("## " + inline(text) + "\n")
    assert [t.type for t in tokens] == ["heading_open", "inline", "heading_close"]
    children = tokens[1].children or []
    assert all(c.type in ("text", "softbreak", "text_special") for c in children), [c.type for c in children]


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fence_for("no ticks") == "```"
    assert fence_for("a ```` b `` c") == "`````"


def test_hostile_transcript(sesstool: Sesstool, tmp_path: Path) -> None:
    log = crashed_log(tmp_path, HOSTILE)
    result = sesstool("derive", "--format", "markdown", str(log))
    assert result.exit_code == 0, result.stderr
    tokens = MD.parse(result.stdout)
    assert not [t for t in tokens if t.type.startswith("html")]
    for t in tokens:
        assert not [c for c in t.children or [] if c.type.startswith("html") or c.type == "link_open"]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert len(headings) == 1 + 2  # the title, then one per derived message (user, assistant)
    fences = [t.content for t in tokens if t.type == "fence"]
    assert any("window.__pwned=1" in f and "# injected heading" in f for f in fences)
    for ch in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x00"):
        assert ch not in result.stdout
