"""``sesstool report``: the report model as one self-contained HTML page.

Pure: a ``Report`` in, bytes out. Every piece of log text goes through ``_esc`` (terminal-unsafe
characters made visible, then HTML-escaped, quotes included), the only script and stylesheet
are the constants of ``report_assets`` pinned by hash in a Content-Security-Policy, and the
timeline is inline SVG drawn to scale (the script only re-lays it out when zooming).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import UTC, datetime

from sesstool.core.report_model import Report, ReportFinding, TimelineItem
from sesstool.render.escape import safe
from sesstool.render.report_assets import CSP, CSS, JS

WIDTH = 1000  # SVG user units across the time axis
ROW = 18
TOOL_LANES = 6
CLAMP_CHARS = 600  # parts longer than this start clamped, with "show all"
LABEL_UNITS = 6.2  # SVG units one label character needs
_W = Callable[[str], None]


def _esc(text: object) -> str:
    return html.escape(safe(str(text)), quote=True)


def _when(ms: int | None) -> str:
    if ms is None:
        return "—"
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"


def _duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    if ms < 7_200_000:
        return f"{ms / 60_000:.1f} min"
    return f"{ms / 3_600_000:.1f} h"


def _address(f: ReportFinding) -> str:
    a = f.address
    parts = []
    if a.line is not None:
        parts.append(f"line {a.line}")
    if a.offset is not None:
        parts.append(a.offset_label())
    if a.frame is not None:
        parts.append(f"frame {a.frame}")
    if a.seq is not None:
        parts.append(f"seq {a.seq}")
    return ", ".join(parts) or "whole file"


def render_html(report: Report) -> bytes:
    out: list[str] = []
    w = out.append
    w("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>")
    w(f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">")
    w("<meta name='referrer' content='no-referrer'>")
    w("<meta name='viewport' content='width=device-width, initial-scale=1'>")
    w(f"<title>sesstool report · {_esc(report.path)}</title><style>{CSS}</style></head><body>")
    _header(report, w)
    w("<main>")
    _notes(report, w)
    _findings(report, w)
    _timeline(report, w)
    _conversation(report, w)
    _repair(report, w)
    w("</main>")
    w(f"<script>{JS}</script></body></html>\n")
    return "".join(out).encode("utf-8", "surrogatepass")


def _header(r: Report, w: _W) -> None:
    w("<header>")
    w(f"<h1>sesstool report · {_esc(r.path)}</h1>")
    w(f"<div><span id='verdict' class='verdict v-{_esc(r.verdict)}' data-verdict='{_esc(r.verdict)}'>")
    w(f"{_esc(r.verdict)}</span>{_esc(r.verdict_reason)}")
    if r.verdict_address is not None:
        w(f" <span class='addr'>({_esc(r.verdict_address.describe())})</span>")
    w("</div><div class='meta'>")
    size = f"{r.file_bytes} bytes" if r.file_bytes is not None else "size unknown"
    version = f"v{r.version}" if r.version is not None else _esc(r.version_label or "version unknown")
    session = f" · session {_esc(r.session)}" if r.session else ""
    events = f" · {r.events} events" if r.events else ""  # a dialect without numbered events: none
    w(f"{_esc(r.dialect)} {version} · {_esc(r.encoding)} · {size}{events}{session}")
    if r.start is not None and r.end is not None:
        w(f" · {_when(r.start)} → {_when(r.end)} ({_duration(max(0, r.end - r.start))})")
    w("</div></header>")


def _notes(r: Report, w: _W) -> None:
    e = r.elision
    pieces = []
    if e.timeline_items:
        pieces.append(f"{e.timeline_items} timeline span(s) in the middle of the session")
    if e.messages:
        pieces.append(f"{e.messages} of {r.messages_total} derived message(s)")
    if e.characters:
        pieces.append(f"{e.characters} characters of long message parts")
    if e.findings:
        pieces.append(f"{e.findings} finding(s) beyond the scanner's cap")
    if pieces:
        w("<p class='note' id='elision'>This page is bounded and leaves out: ")
        w("; ".join(pieces) + ". <code>sesstool inspect --timeline</code>, <code>sesstool derive</code> "
          "and <code>sesstool validate</code> show everything.</p>")  # fmt: skip
    if r.live:
        w("<p class='note'>The file changed while it was read: this report covers the stable prefix.</p>")
    if r.redactions:
        counts = ", ".join(f"{_esc(kind)} {n}" for kind, n in r.redactions)
        w(f"<p class='note' id='redactions'>Redacted values: {counts}.</p>")


def _findings(r: Report, w: _W) -> None:
    w(f"<section id='findings-section'><h2>Findings ({len(r.findings)})</h2>")
    if not r.findings:
        w("<p class='meta'>none</p>")
    w("<ol class='findings' id='findings'>")
    for f in r.findings:
        w(f"<li id='finding-{f.index}' class='finding sev-{_esc(f.severity)}' data-rule='{_esc(f.rule)}'>")
        w(f"<span class='sev'>{_esc(f.severity)}</span>")
        w(f"<a class='to-timeline' href='#mark-{f.index}'>[{_esc(f.rule)}]</a> {_esc(f.message)}")
        w(f"<span class='addr'>{_esc(_address(f))}</span></li>")
    w("</ol></section>")


def _lanes(items: tuple[TimelineItem, ...], end: int) -> dict[str, int]:
    """Tool calls onto a few lanes so that overlapping calls do not hide each other."""
    free_at = [-(1 << 62)] * TOOL_LANES
    lanes: dict[str, int] = {}
    for item in items:
        if item.kind != "tool":
            continue
        stop = item.end if item.end is not None else end
        lane = next((i for i, t in enumerate(free_at) if t <= item.start), TOOL_LANES - 1)
        free_at[lane] = stop + 1
        lanes[item.key] = lane
    return lanes


def _timeline(r: Report, w: _W) -> None:
    w("<section id='timeline-section'><h2>Timeline</h2>")
    if r.start is None or r.end is None:
        w("<p class='meta'>No timed events.</p>")
        for f in r.findings:
            w(f"<span id='mark-{f.index}'></span>")
        w("</section>")
        return
    t0 = r.start
    span = max(r.end - r.start, 1)
    # room past the last event: what never closed is drawn running on past the crash point
    t1 = r.end + max(span // 12, 1) if r.crash or any(i.end is None for i in r.items) else r.start + span
    k = WIDTH / (t1 - t0)
    lanes = _lanes(r.items, t1)
    used = max(lanes.values(), default=-1) + 1
    y_turn, y_step, y_tool = 18, 18 + ROW, 18 + 2 * ROW
    y_marks = y_tool + max(used, 1) * ROW + 4
    height = y_marks + ROW + 4
    turns = [i for i in r.items if i.kind == "turn"]
    w("<div class='tl-controls'><button id='zoom-all' type='button'>whole session</button>")
    if turns:
        w("<label>zoom to <select id='zoom-turn'><option value=''>—</option>")
        for i in turns[:500]:
            e = i.end if i.end is not None else t1
            w(f"<option value='{_esc(i.key)}' data-s='{i.start}' data-e='{e}'>{_esc(i.label)}</option>")
        w("</select></label>")
    w(" <span id='zoom-label' class='meta'>whole session</span></div>")
    w(f"<svg id='timeline' class='tl' viewBox='0 -4 {WIDTH + 60} {height}' data-width='{WIDTH}' ")
    w(f"data-t0='{t0}' data-t1='{t1}' role='img' aria-label='session timeline'>")
    w("<defs><pattern id='hatch' width='6' height='6' patternUnits='userSpaceOnUse' "
      "patternTransform='rotate(45)'><rect width='6' height='6' fill='#f6d5cf'/>"
      "<line x1='0' y1='0' x2='0' y2='6' stroke='#c2412d' stroke-width='2'/></pattern>"
      "<clipPath id='clip'><rect x='0' y='-4' width='1000' height='2000'/></clipPath></defs>")  # fmt: skip
    w("<g clip-path='url(#clip)'>")
    for g in r.gaps:
        x, wd = (g.start - t0) * k, max(0.6, (g.end - g.start) * k)
        took = _duration(g.end - g.start)
        w(f"<rect class='gap' data-s='{g.start}' data-e='{g.end}' x='{x:.2f}' y='0' width='{wd:.2f}' "
          f"height='{height - 8}'><title>no events for {took}</title></rect>")  # fmt: skip
        w(f"<text class='lane-label' data-s='{g.start}' x='{x + 2:.2f}' y='{height - 10}'>"
          f"gap {_duration(g.end - g.start)}</text>")  # fmt: skip
    for item in r.items:
        y = (
            y_turn
            if item.kind == "turn"
            else y_step
            if item.kind == "step"
            else y_tool + lanes[item.key] * ROW
        )
        _bar(item, y, t0, t1, k, w)
    for f in r.findings:
        if f.time is None:
            continue
        x = (f.time - t0) * k
        w(f"<a href='#finding-{f.index}' id='mark-{f.index}' class='mark-link'>")
        sev = _esc(f.severity)
        w(f"<circle class='mark sev-{sev}' data-s='{f.time}' cx='{x:.2f}' cy='{y_marks + 6}' r='5'>")
        w(f"<title>{_esc(f.rule)}: {_esc(f.message)}</title></circle></a>")
    if r.crash:
        x = (r.end - t0) * k
        w(f"<line id='crash-point' class='crash' data-s='{r.end}' x1='{x:.2f}' x2='{x:.2f}' y1='0' "
          f"y2='{height - 8}'><title>the log ends here: {_esc(r.verdict)}</title></line>")  # fmt: skip
    w("</g>")
    for label, y in (("turns", y_turn), ("steps", y_step), ("tools", y_tool), ("findings", y_marks)):
        w(f"<text class='lane-label' x='{WIDTH + 4}' y='{y + 11}'>{label}</text>")
    w("</svg>")
    for f in r.findings:
        if f.time is None:
            w(f"<span id='mark-{f.index}'></span>")
    w("<div class='legend'><span>bands: turns and steps</span><span>bars: tool calls, call → result</span>")
    w("<span>hatched: never closed (open-ended to where the log stops)</span>")
    w("<span>dots: findings (click one)</span><span>click a turn to zoom</span></div>")
    if r.not_started:
        w(_not_started(r))
    w("</section>")


def _not_started(r: Report) -> str:
    """The calls advertised but never started, by id; past the first the page draws, a count."""
    ids = ", ".join(_esc(c) for c in r.not_started)
    if r.not_started_hidden:
        ids += f" … and {r.not_started_hidden} more (sesstool inspect lists them all)"
    return f"<p class='meta' id='not-started'>Advertised but never started: {ids}.</p>"


def _bar(item: TimelineItem, y: int, t0: int, t1: int, k: float, w: _W) -> None:
    is_open = item.end is None
    end = t1 if is_open else item.end
    assert end is not None
    x, wd = (item.start - t0) * k, max(0.6, (end - item.start) * k)
    classes = f"bar {item.kind}" + (" open" if is_open else "") + (" error" if item.error else "")
    classes += " not-started" if item.status == "not-started" else ""
    took = "never closed" if is_open else _duration(end - item.start)
    seqs = f"seq {item.first_seq}" if item.first_seq is not None else f"line {item.first_line}"
    w(f"<rect id='{_esc(item.key)}' class='{classes}' data-status='{_esc(item.status)}' ")
    w(f"data-s='{item.start}' data-e='{end}' x='{x:.2f}' y='{y}' width='{wd:.2f}' height='{ROW - 4}'>")
    w(f"<title>{_esc(item.label)} · {_esc(item.status)} · {took} · {seqs}, line {item.first_line}, ")
    w(f"byte {item.first_offset}</title></rect>")
    label = item.label + (
        " ✕ never started" if item.status == "not-started" else " ▶ open" if is_open else ""
    )
    # a label shows only where its bar has room for it (the script re-decides when zooming)
    room = "" if wd >= len(label) * LABEL_UNITS else " visibility='hidden'"
    w(f"<text data-s='{item.start}' data-e='{end}' data-n='{len(label)}' x='{x + 2:.2f}' y='{y + 10}'"
      f"{room}>{_esc(label)}</text>")  # fmt: skip


def _conversation(r: Report, w: _W) -> None:
    w(f"<section id='conversation'><h2>Conversation after a resume ({r.messages_total} messages)</h2>")
    if r.messages_note:
        w(f"<p class='meta'>{_esc(r.messages_note)}</p>")
    for n, m in enumerate(r.messages):
        if n == r.messages_gap_at:
            w(f"<p class='note' id='messages-elided'>… {r.elision.messages} message(s) not shown …</p>")
        role = m.role if m.role.isalnum() else "other"
        w(f"<details class='msg role-{_esc(role)}' id='msg-{n}' open><summary>{_esc(m.role)}</summary>")
        for j, p in enumerate(m.parts):
            if m.parts_hidden and j == len(m.parts) // 2:  # the first and last few of a long one
                w(f"<p class='note'>… {m.parts_hidden} part(s) not shown (sesstool derive lists "
                  "them all) …</p>")  # fmt: skip
            at = j + m.parts_hidden if m.parts_hidden and j >= len(m.parts) // 2 else j  # its own index
            cls = " result-error" if p.error else ""
            w(f"<div class='part part-{_esc(p.kind)}{cls}'><span class='kind'>{_esc(p.kind)}")
            if p.name is not None:
                w(f" · {_esc(p.name)}")
            if p.call_id is not None:
                w(f" · {_esc(p.call_id)}")
            if p.error:
                w(" · error")
            w("</span>")
            pid = f"p-{n}-{at}"
            if len(p.text) > CLAMP_CHARS:
                w(f"<pre class='clamp' id='{pid}'>{_esc(p.text)}</pre>")
                w(f"<button class='show-all' type='button' data-for='{pid}'>show all "
                  f"({len(p.text)} characters)</button>")  # fmt: skip
            else:
                w(f"<pre id='{pid}'>{_esc(p.text)}</pre>")
            w("</div>")
        if m.truncated:
            w(f"<p class='meta'>… {m.truncated} more characters (see <code>sesstool derive</code>)</p>")
        w("</details>")
    w("</section>")


def _repair(r: Report, w: _W) -> None:
    w("<section id='repair'><h2>What a repair would append</h2>")
    w(f"<p>{_esc(r.repair_note)}</p>")
    if r.closers:
        lines = [_esc(c) for c in r.closers]
        if r.closers_hidden:  # the first and last few of a long list (docs/format.md "Reports")
            half = len(lines) // 2
            gap = f"… {r.closers_hidden} more closers (sesstool repair --dry-run lists them all)"
            lines[half:half] = [gap]
        w("<pre class='closers'>" + "\n".join(lines) + "</pre>")
    w("</section>")
