"""validate output formats: text (human), json, github (workflow annotations), junit (XML), sarif."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, BinaryIO, TextIO
from urllib.parse import quote

from rich.console import Console
from rich.text import Text

from sesstool import __version__
from sesstool.core.closer_list import Closers
from sesstool.core.documents import verdict_doc
from sesstool.core.rules import RULES, Finding, Rule, Severity
from sesstool.engine.validate import Checked, Validated
from sesstool.render.escape import safe_line
from sesstool.render.inspect_view import SEVERITY_STYLE, VERDICT_STYLE
from sesstool.render.json_stream import pretty_pieces


def _where(f: Finding) -> str:
    a = f.address
    bits = [safe_line(a.file or "?")]
    if a.line is not None:
        bits.append(str(a.line))
    head = ":".join(bits)
    extra = []
    if a.offset is not None:
        extra.append(a.offset_label())
    if a.frame is not None:
        extra.append(f"frame {a.frame}")
    if a.seq is not None:
        extra.append(f"seq {a.seq}")
    return head + (f" ({', '.join(extra)})" if extra else "")


def unscanned_text(fr: Checked) -> str:
    """Why a file was not scanned, as every format labels it (issue 15 items 2 and 9): ``not a
    session log: it looks like …`` for a file that is not one, ``unreadable: …`` for one that
    could not be opened. Its path is not repeated when the message starts with it."""
    why = fr.error or ""
    if fr.not_a_log:
        return why.removeprefix(f"{fr.path}: ")
    return f"unreadable: {why}"


def render_text(rep: Validated, console: Console, quiet: bool = False) -> None:
    totals = rep.totals
    for fr in rep.files:
        if not fr.scanned:
            line = Text(f"{safe_line(fr.path)}: ")
            line.append("error", "red")
            line.append(f" {safe_line(unscanned_text(fr))}")
            console.print(line)
            continue
        s = fr
        status = Text(f"{safe_line(fr.path)}: ")
        status.append(s.verdict, VERDICT_STYLE[s.verdict])
        status.append(f" (v{s.version}, {s.events} events)" if s.version is not None else "")
        if fr.live:
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
    failed = rep.failed_files  # totals: dropped past --max-findings too
    summary = (
        f"{len(rep.files)} file(s) checked, {failed} failing (--fail-on "
        f"{rep.fail_on.label}): {totals[Severity.ERROR]} error(s), "
        f"{totals[Severity.WARNING]} warning(s), {totals[Severity.INFO]} info"
    )
    console.print(Text(summary, style="bold red" if rep.failed else "bold green"))


def _gh_escape(text: str, prop: bool = False) -> str:
    """Workflow-command escaping (the runner's own rules): ``%``, CR and LF in the message, and
    also ``:`` and ``,`` in a property value. The text is escaped for the log first
    (``safe_line``): the annotation is shown in a terminal-like log view."""
    text = safe_line(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


_GH_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(rep: Validated, out: TextIO) -> None:
    """GitHub Actions workflow commands: one annotation per finding."""
    for fr in rep.files:
        if not fr.scanned:
            title = "sesstool not a session log" if fr.not_a_log else "sesstool unreadable"
            out.write(
                f"::error file={_gh_escape(fr.path, True)},title={_gh_escape(title, True)}::"
                f"{_gh_escape(fr.error or '')}\n"
            )
            continue
        for f in fr.findings:
            props = [f"file={_gh_escape(f.address.file or fr.path, True)}"]
            if f.address.line is not None:
                props.append(f"line={f.address.line}")
            props.append(f"title={_gh_escape('sesstool ' + f.rule, True)}")
            out.write(f"::{_GH_LEVEL[f.severity]} {','.join(props)}::{_gh_escape(f.message)}\n")


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


def render_junit(rep: Validated, out: TextIO) -> None:
    """JUnit XML: one testcase per file; findings at or above --fail-on are failures (counted
    while the files were checked: the root element states them before the files)."""
    failures = rep.failed_files
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


def _junit_case(fr: Checked, fail_on: Severity, out: TextIO) -> None:
    if not fr.scanned:
        out.write(
            f'\n      <failure message={quoteattr(safe_line(fr.error or ""))} type="{fr.verdict}"/>\n    '
        )
        return
    # the first dropped of each kind too: a file failing only on findings past --max-findings
    # still has its failure
    failing = [f for f in fr.weighed if f.severity >= fail_on]
    if not failing:
        return
    first = failing[0]
    # one escaped line per finding: a log's own newlines never start a line of their own
    body = "\n".join(_xml_text(f"{_where(f)}: {f.severity.label} [{f.rule}] {f.message}") for f in failing)
    out.write(
        f"\n      <failure message={quoteattr(safe_line(first.message))} "
        f"type={quoteattr(first.rule)}>{body}"
        "</failure>\n    "
    )


# -- SARIF 2.1.0 ---------------------------------------------------------------------------------

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# Synthetic rules for a path that could not be read at all, and for a file that is not a
# session log (issue 15 item 9); they exist only in SARIF output (text, JSON, GitHub and JUnit
# report such a path without a rule id).
UNREADABLE_RULE = "file-unreadable"
NOT_A_LOG_RULE = "file-not-a-log"
_UNSCANNED_RULES = {
    UNREADABLE_RULE: (
        "path could not be opened (missing, permission denied, empty glob)",
        "A path given to sesstool validate that it could not open; it always fails.",
    ),
    NOT_A_LOG_RULE: (
        "not a session log (a binary, a compressed file, a JSON document, another kind of JSON Lines)",
        "A file given to sesstool validate that is no agent's session log; the message says what "
        "it looks like. It always fails.",
    ),
}
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# Characters kept as they are in an artifact URI; everything else is percent-encoded (UTF-8).
_URI_SAFE = "/!$&'()*+,;=@~"


def sarif_uri(path: str) -> str:
    """The path as given, as a URI reference: forward slashes, percent-encoded where needed.

    A relative path stays relative (GitHub code scanning resolves it against the checkout);
    an absolute one becomes a ``file://`` URI.
    """
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    try:  # a file name's undecodable bytes come back as they were
        quoted = quote(path, safe=_URI_SAFE, errors="surrogateescape")
    except UnicodeEncodeError:  # any other lone surrogate: still a well-formed URI
        quoted = quote(path, safe=_URI_SAFE, errors="surrogatepass")
    return "file://" + quoted if path.startswith("/") else quoted


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "shortDescription": {"text": rule.title},
        "help": {"text": f"See docs/rules.md#{rule.id} in the sesstool documentation."},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {
            "section": rule.section,
            "severity": rule.severity.label,
            "verdict": rule.verdict,
        },
    }


def _unscanned_rule(rule_id: str) -> dict[str, Any]:
    title, help_text = _UNSCANNED_RULES[rule_id]
    return {
        "id": rule_id,
        "shortDescription": {"text": title},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": "error"},
        "properties": {"severity": "error"},
    }


def _unscanned_rule_id(fr: Checked) -> str:
    return NOT_A_LOG_RULE if fr.not_a_log else UNREADABLE_RULE


def _sarif_location(uri: str, index: int, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "index": index}}
    if line is not None:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _sarif_artifact(fr: Checked, fail_on: Severity) -> dict[str, Any]:
    artifact: dict[str, Any] = {"location": {"uri": sarif_uri(fr.path)}}
    if not fr.scanned:
        artifact["roles"] = ["analysisTarget"]
        artifact["properties"] = {
            "error": fr.error,
            "verdict": verdict_doc(fr.verdict, fr.error, None),
            "failed": True,
        }
        return artifact
    if fr.size is not None:
        artifact["length"] = fr.size
    artifact["roles"] = ["analysisTarget"]
    s = fr
    props: dict[str, Any] = {
        "encoding": fr.encoding,
        "verdict": verdict_doc(s.verdict, s.verdict_reason, s.verdict_address),
        "version": s.version,
        "events": s.events,
        "live": fr.live,
        "findings_dropped": s.findings_dropped,
        "failed": fr.failing(fail_on),
    }
    artifact["properties"] = props
    return artifact


def _sarif_result(f: Finding, rule_index: int, uri: str, index: int, zstd: bool) -> dict[str, Any]:
    a = f.address
    # A region is a place in the artifact itself: for zstd input the line is a line of the
    # decompressed text, so it goes to the properties with the other address parts.
    props: dict[str, Any] = {}
    if a.offset is not None:
        props["offset"] = a.offset
    if zstd and a.line is not None:
        props["line"] = a.line
    if a.frame is not None:
        props["frame"] = a.frame
    if a.frame_offset is not None:
        props["frame_offset"] = a.frame_offset
    if a.seq is not None:
        props["seq"] = a.seq
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [_sarif_location(uri, index, None if zstd else a.line)],
    }
    if props:
        result["properties"] = props
    return result


def sarif_log(rep: Validated) -> dict[str, Any]:
    """The report as one SARIF 2.1.0 log: one run, rules used, one artifact per file checked.

    Every finding is a result (not only those at or above --fail-on); its level is the
    finding's severity (error, warning, note). Keys are in a fixed order. The artifacts and
    results are ``Closers`` made as they are walked from the spool of files (``pretty_pieces``
    writes them in place); the rules used were gathered while the files were checked.
    """
    used = set(rep.rules)
    used.update(NOT_A_LOG_RULE if verdict == "not-a-log" else UNREADABLE_RULE for verdict in rep.unscanned)
    descriptors = [_sarif_rule(rule) for rule in RULES.values() if rule.id in used]
    # a finding whose id the registry does not know would still get a (bare) descriptor
    known = {d["id"] for d in descriptors}
    descriptors.extend({"id": rid} for rid in sorted(used - known - set(_UNSCANNED_RULES)))
    descriptors.extend(_unscanned_rule(rid) for rid in _UNSCANNED_RULES if rid in used)
    rule_index = {d["id"]: i for i, d in enumerate(descriptors)}
    results = Closers(lambda: _sarif_results(rep, rule_index), rep.findings + rep.unscanned_files)
    artifacts = Closers(lambda: (_sarif_artifact(fr, rep.fail_on) for fr in rep.files), len(rep.files))

    driver: dict[str, Any] = {"name": "sesstool", "version": __version__, "rules": descriptors}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [{"executionSuccessful": True, "exitCode": 1 if rep.failed else 0}],
                "artifacts": artifacts,
                "results": results,
                "properties": {"fail_on": rep.fail_on.label, "failed": rep.failed},
            }
        ],
    }


def _sarif_results(rep: Validated, rule_index: dict[str, int]) -> Iterator[dict[str, Any]]:
    for index, fr in enumerate(rep.files):
        uri = sarif_uri(fr.path)
        if not fr.scanned:
            rid = _unscanned_rule_id(fr)
            yield {
                "ruleId": rid,
                "ruleIndex": rule_index[rid],
                "level": "error",
                "message": {"text": fr.error or f"{fr.path}: unreadable"},
                "locations": [_sarif_location(uri, index, None)],
            }
            continue
        zstd = fr.encoding == "zstd"
        for f in fr.findings:
            yield _sarif_result(f, rule_index[f.rule], uri, index, zstd)


def render_sarif(rep: Validated, out: BinaryIO) -> None:
    """SARIF 2.1.0 (GitHub code scanning and other SARIF viewers): exact JSON, no escaping,
    written in pieces (``json_stream.pretty_pieces``: ``dumps_pretty``'s bytes)."""
    for piece in pretty_pieces(sarif_log(rep)):
        out.write(piece)
    out.write(b"\n")
