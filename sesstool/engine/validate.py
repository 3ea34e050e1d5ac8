"""validate: scan many logs (files, directories, globs) and collect their findings; a log's side
files (a Claude session's subagent transcripts, ``engine.companions``) are checked with it.

``check_all`` (the command) keeps no scan: each file's result is cut down as it is made to what
the formats print of it (a ``Checked``: verdict, version, events, the findings kept and the first
dropped of each kind) and appended to a ``store.spool.ItemSpool`` (in memory up to a fixed
number of bytes, then an unnamed temporary file), while the totals every format states before
or after the files (counts by severity, files failing, rules used) are added up; the renderers
walk the spool (issue 11 item 1: memory flat in the number of files). ``run_validate`` (the
fleet, one file at a time) gives the whole ``FileResult``s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain

from sesstool.core.errors import Address, InputError, NotASessionLog, UsageError
from sesstool.core.held_map import HeldMap
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Finding, Severity
from sesstool.dialects import registry
from sesstool.engine.companions import companion_paths
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.store.generations import parse_generation_name
from sesstool.store.paths import glob_matches, is_directory, is_glob, walk_logs, walk_spill
from sesstool.store.run_spill import strings_in
from sesstool.store.source import ReadLimits
from sesstool.store.spilling_list import SharedSpill
from sesstool.store.spool import ItemSpool


@dataclass(frozen=True, slots=True)
class ValidateRequest:
    paths: tuple[str, ...]
    fail_on: Severity = Severity.ERROR
    limits: ReadLimits = field(default_factory=ReadLimits)
    fixture: bool = False
    assume_version: int = 0
    max_findings: int = 1000
    strict: bool = False
    companions: bool = True  # a log's side files too (the fleet lists them as items of their own)


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    report: ScanReport | None
    error: str | None  # the file could not be scanned: unreadable, or not a session log
    not_a_log: bool = False  # ``error`` is a NotASessionLog (what the file looks like)

    @property
    def verdict(self) -> str:
        """The scan's verdict, or ``not-a-log`` / ``unreadable`` for a file not scanned."""
        if self.report is not None:
            return self.report.scan.verdict
        return "not-a-log" if self.not_a_log else "unreadable"

    def failing(self, fail_on: Severity) -> bool:
        if self.report is None:
            return True
        return any(f.severity >= fail_on for f in self.report.scan.weighed)


@dataclass(frozen=True, slots=True)
class ValidateReport:
    files: tuple[FileResult, ...]
    fail_on: Severity

    @property
    def failed(self) -> bool:
        return any(f.failing(self.fail_on) for f in self.files)


def expand_paths(args: tuple[str, ...]) -> Iterator[str]:
    """Every path ``iter_paths`` gives, each once, the first time, as it is given (the fleet's
    listing of a local directory): the paths given are a ``HeldMap`` in the walk's spill file
    past ``HELD_AT`` (issue 11 item 1: nothing held per path). The usage errors of
    ``iter_paths`` are raised at the call, before any path is given."""
    spill = walk_spill("the paths the fleet lists")
    return _each_once(iter_paths(args, spill), HeldMap(EXPANDED_HELD, strings_in(spill)))


EXPANDED_HELD = "the paths a fleet listing gave"  # a ``HeldMap``'s purpose


def _each_once(paths: Iterator[str], given: HeldMap) -> Iterator[str]:
    for path in paths:
        if path not in given:
            given.put(path, "")
            yield path


def iter_paths(args: tuple[str, ...], spill: SharedSpill | None = None) -> Iterator[str]:
    """Files as given; directories walked for logs (``store.paths.walk_logs``: a registered
    suffix in any case, sorted); unexpanded globs expanded (sorted). A path may come twice.

    In a directory every log file counts (a fixture tree), not just the highest generation; a
    log is a file ending in a registered dialect's suffix (``.jsonl``, ``.jsonl.zst``,
    ``.jsonl.zstd``), in any case. A directory holding no log, or a glob matching nothing, is a
    usage error (exit 2), raised here before any path is given: a mistyped path must not pass CI
    by checking nothing. A directory's or a glob's paths are a ``store.paths.SortedPaths`` (in
    memory up to ``PATHS_HELD``, then sorted in ``spill``'s file: issue 11 item 1).
    """
    spill = spill or walk_spill()
    found: list[Iterable[str]] = []
    for arg in args:
        if is_glob(arg):
            matches = glob_matches(arg, spill)
            if not matches:
                raise UsageError(f"no file matches {arg!r}")
            found.append("./-" if m == "-" else m for m in matches)  # a file named -, not stdin
        elif is_directory(arg):
            logs = walk_logs(arg, registry.log_suffixes(), spill)
            if not logs:
                endings = ", ".join("*" + s for s in registry.log_suffixes())
                raise UsageError(
                    f"no session log found in directory {arg!r} (looked for {endings}, in any case)"
                )
            found.append(logs)
        else:
            found.append((arg,))
    return chain.from_iterable(found)


def run_validate(request: ValidateRequest, progress: Progress | None = None) -> ValidateReport:
    """Every path given (directories walked), each reported once under its own path; a log's
    side files (``Dialect.companion_patterns``) are checked right after it."""
    return ValidateReport(tuple(validate_each(request, progress)), request.fail_on)


DONE_HELD = "the paths validate checked"  # a ``HeldMap``'s purpose: in memory up to ``HELD_AT``


def validate_each(request: ValidateRequest, progress: Progress | None = None) -> Iterator[FileResult]:
    """The ``FileResult`` of every path given (``run_validate``), one at a time as it is made: a
    path is checked once (by ``os.path.normpath``; the paths checked are a ``core.held_map.HeldMap``,
    past ``HELD_AT`` in a spill file), a log's side files right after it (pushed ahead of the
    paths still to come, walked as they were found). The walks' sorts and the paths checked
    share one spill file, made when the first outgrows memory and given back at the end."""
    spill = walk_spill("the paths validate walks and checks")
    ahead: list[Iterator[str]] = [iter_paths(request.paths, spill)]
    done = HeldMap(DONE_HELD, strings_in(spill))
    options = ScanOptions(
        fixture=request.fixture,
        assume_version=request.assume_version,
        max_findings=request.max_findings,
        strict=request.strict,
    )
    try:
        while ahead:
            path = next(ahead[-1], None)
            if path is None:
                ahead.pop()
                continue
            key = path if path == "-" else os.path.normpath(path)
            if key in done:
                continue
            done.put(key, "")
            try:
                report = scan_source(path, options, request.limits, progress)
            except (InputError, NotASessionLog) as err:  # reported per file: the run goes on
                yield FileResult(path, None, err.message, isinstance(err, NotASessionLog))
                continue
            yield FileResult(path, report, None)
            if request.companions:
                sides = companion_paths(path, report.dialect)
                if sides:
                    ahead.append(iter(sides))
    finally:
        if spill.file is not None:
            spill.file.close()


@dataclass(frozen=True, slots=True)
class Checked:
    """What the formats print of one file checked (a ``FileResult`` without its scan): its
    verdict and where, version, events, encoding, size, the findings kept, how many were dropped
    and the first dropped of each kind, and the count of each severity (kept and dropped)."""

    path: str
    error: str | None  # not scanned: unreadable, or not a session log
    not_a_log: bool = False
    scan_verdict: str | None = None
    verdict_reason: str | None = None
    verdict_address: Address | None = None
    version: int | None = None
    version_label: str | None = None
    events: int = 0
    encoding: str | None = None
    size: int | None = None
    live: bool = False
    findings: tuple[Finding, ...] = ()
    findings_dropped: int = 0
    dropped_firsts: tuple[Finding, ...] = ()
    counts: tuple[int, int, int] = (0, 0, 0)  # by ``Severity``: info, warning, error

    @property
    def scanned(self) -> bool:
        return self.error is None

    @property
    def verdict(self) -> str:
        if self.scan_verdict is not None:
            return self.scan_verdict
        return "not-a-log" if self.not_a_log else "unreadable"

    @property
    def weighed(self) -> tuple[Finding, ...]:
        """As ``ScanResult.weighed``: the kept findings, then the first dropped of each kind."""
        return (*self.findings, *self.dropped_firsts) if self.dropped_firsts else self.findings

    def count(self, severity: Severity) -> int:
        return self.counts[severity]

    def failing(self, fail_on: Severity) -> bool:
        return not self.scanned or any(f.severity >= fail_on for f in self.weighed)


def checked(fr: FileResult) -> Checked:
    """``fr`` cut down to what the formats print of it."""
    if fr.report is None:
        return Checked(fr.path, fr.error or "", fr.not_a_log)
    s, src = fr.report.scan, fr.report.source
    return Checked(
        fr.path,
        None,
        False,
        s.verdict,
        s.verdict_reason,
        s.verdict_address,
        s.version,
        s.version_label,
        s.stats.events,
        src.encoding,
        src.size,
        fr.report.live,
        s.findings,
        s.findings_dropped,
        s.dropped_firsts,
        (s.count(Severity.INFO), s.count(Severity.WARNING), s.count(Severity.ERROR)),
    )


@dataclass(slots=True)
class Validated:
    """``validate``'s run: every file's ``Checked`` in a spool, walked in the order checked, and
    the totals the formats state (``check_all``)."""

    fail_on: Severity
    files: ItemSpool[Checked] = field(default_factory=ItemSpool)
    failed_files: int = 0
    totals: list[int] = field(default_factory=lambda: [0, 0, 0])  # by ``Severity``
    rules: set[str] = field(default_factory=set)  # the rule ids of the findings kept
    unscanned: set[str] = field(default_factory=set)  # "not-a-log", "unreadable": seen
    findings: int = 0  # kept, in all files
    unscanned_files: int = 0

    @property
    def failed(self) -> bool:
        return self.failed_files > 0

    def add(self, c: Checked) -> None:
        self.files.append(c)
        self.failed_files += c.failing(self.fail_on)
        if not c.scanned:
            self.totals[Severity.ERROR] += 1
            self.unscanned.add(c.verdict)
            self.unscanned_files += 1
            return
        for sev in Severity:
            self.totals[sev] += c.count(sev)
        self.rules.update(f.rule for f in c.findings)
        self.findings += len(c.findings)

    def __iter__(self) -> Iterator[Checked]:
        return iter(self.files)

    def close(self) -> None:
        """Give the spool back (its temporary file, when it spilled)."""
        self.files.close()


def check_all(request: ValidateRequest, progress: Progress | None = None) -> Validated:
    """``validate``: every file checked (as ``run_validate``), kept as a ``Checked`` in a spool."""
    run = Validated(request.fail_on)
    try:
        for fr in validate_each(request, progress):
            run.add(checked(fr))
    except BaseException:
        run.close()
        raise
    return run


def is_generation_name(name: str) -> bool:
    return parse_generation_name(name) is not None
