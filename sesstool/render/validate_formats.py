"""validate output formats: text (human), json, github (workflow annotations), junit (XML)."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.text import Text

from sesstool.core.rules import Finding, Severity
from sesstool.engine.validate import FileResult, ValidateReport
from sesstool.render.escape import safe_line
from sesstool.render.inspect_view import SEVERITY_STYLE, VERDICT_STYLE


def _where(f: Finding) -> str:
    a = f.address
    bits = [a.file or "?"]
    if a.line is not None:
        bits.append(str(a.line))
    head = ":".join(bits)
    extra = []
    if a.offset is not None:
        extra.append(f"byte {a.offset}")
    if a.frame is not None:
        extra.append(f"frame {a.frame}")
    if a.seq is not None:
        extra.append(f"seq {a.seq}")
    return head + (f" ({', '.join(extra)})" if extra else "")


def render_text(rep: ValidateReport, console: Console, quiet: bool = False) -> None:
    totals = {sev: 0 for sev in Severity}
    for fr in rep.files:
        if fr.report is None:
            totals[Severity.ERROR] += 1
            line = Text(f"{safe_line(fr.path)}: ")
            line.append("error", "red")
            line.append(f" unreadable: {safe_line(fr.error or '')}")
            console.print(line)
            continue
        s = fr.report.scan
        for f in s.findings:
            totals[f.severity] += 1
        status = Text(f"{safe_line(fr.path)}: ")
        status.append(s.verdict, VERDICT_STYLE[s.verdict])
        status.append(f" (v{s.version}, {s.stats.events} events)" if s.version is not None else "")
        if fr.report.live:
            status.append(" [live: stable prefix only]", "yellow")
        if not quiet or fr.failing(rep.fail_on):
            console.print(status)
        for f in s.findings:
            if quiet and f.severity < rep.fail_on:
                continue
            line = Text("  ")
            line.append(f"{_where(f)}: ")
            line.append(f.severity.label, SEVERITY_STYLE[f.severity])
            line.append(f" [{f.rule}] {safe_line(f.message)}")
            console.print(line)
        if s.findings_dropped:
            console.print(f"  … {s.findings_dropped} more findings not kept (--max-findings)")
    failed = sum(1 for fr in rep.files if fr.failing(rep.fail_on))
    summary = (
        f"{len(rep.files)} file(s) checked, {failed} failing (--fail-on "
        f"{rep.fail_on.label}): {totals[Severity.ERROR]} error(s), "
        f"{totals[Severity.WARNING]} warning(s), {totals[Severity.INFO]} info"
    )
    console.print(Text(summary, style="bold red" if rep.failed else "bold green"))


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


_GH_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(rep: ValidateReport, out: TextIO) -> None:
    """GitHub Actions workflow commands: one annotation per finding."""
    for fr in rep.files:
        if fr.report is None:
            out.write(
                f"::error file={_gh_escape(fr.path, True)},title=sesstool unreadable::"
                f"{_gh_escape(fr.error or '')}\n"
            )
            continue
        for f in fr.report.scan.findings:
            props = [f"file={_gh_escape(f.address.file or fr.path, True)}"]
            if f.address.line is not None:
                props.append(f"line={f.address.line}")
            props.append(f"title={_gh_escape('sesstool ' + f.rule, True)}")
            out.write(f"::{_GH_LEVEL[f.severity]} {','.join(props)}::{_gh_escape(safe_line(f.message))}\n")


def quoteattr(text: str) -> str:
    """An XML attribute value in double quotes (xml.sax.saxutils would pull in urllib)."""
    escaped = (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
        .replace("\t", "&#9;")
    )
    return f'"{escaped}"'


def _xml_text(text: str) -> str:
    return safe_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_junit(rep: ValidateReport, out: TextIO) -> None:
    """JUnit XML: one testcase per file; findings at or above --fail-on are failures."""
    failures = sum(1 for fr in rep.files if fr.failing(rep.fail_on))
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites name="sesstool validate" tests="{len(rep.files)}" failures="{failures}">\n')
    out.write(
        f'  <testsuite name="sesstool validate" tests="{len(rep.files)}" '
        f'failures="{failures}" errors="0" skipped="0">\n'
    )
    for fr in rep.files:
        out.write(f'    <testcase classname="sesstool.validate" name={quoteattr(safe_line(fr.path))}>')
        _junit_case(fr, rep.fail_on, out)
        out.write("</testcase>\n")
    out.write("  </testsuite>\n</testsuites>\n")


def _junit_case(fr: FileResult, fail_on: Severity, out: TextIO) -> None:
    if fr.report is None:
        out.write(
            f'\n      <failure message={quoteattr(safe_line(fr.error or ""))} type="unreadable"/>\n    '
        )
        return
    failing = [f for f in fr.report.scan.findings if f.severity >= fail_on]
    if not failing:
        return
    first = failing[0]
    body = "\n".join(f"{_where(f)}: {f.severity.label} [{f.rule}] {f.message}" for f in failing)
    out.write(
        f"\n      <failure message={quoteattr(safe_line(first.message))} "
        f"type={quoteattr(first.rule)}>{_xml_text(body).replace(chr(92) + 'n', chr(10))}"
        "</failure>\n    "
    )
