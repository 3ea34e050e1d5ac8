"""validate: scan many logs (files, directories, globs) and collect their findings; a log's side
files (a Claude session's subagent transcripts, ``engine.companions``) are checked with it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sesstool.core.errors import InputError, NotASessionLog, UsageError
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.dialects import registry
from sesstool.engine.companions import companion_paths
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.store.generations import parse_generation_name
from sesstool.store.paths import glob_matches, is_directory, is_glob, walk_logs
from sesstool.store.source import ReadLimits


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


def expand_paths(args: tuple[str, ...]) -> list[str]:
    """Files as given; directories walked for logs (``store.paths.walk_logs``: a registered
    suffix in any case, sorted); unexpanded globs expanded.

    In a directory every log file counts (a fixture tree), not just the highest generation; a
    log is a file ending in a registered dialect's suffix (``.jsonl``, ``.jsonl.zst``,
    ``.jsonl.zstd``), in any case. A directory holding no log, or a glob matching nothing, is a
    usage error (exit 2): a mistyped path must not pass CI by checking nothing.
    """
    out: list[str] = []
    for arg in args:
        if is_glob(arg):
            matches = glob_matches(arg)
            if not matches:
                raise UsageError(f"no file matches {arg!r}")
            out.extend("./-" if m == "-" else m for m in matches)  # a file named -, not stdin
        elif is_directory(arg):
            found = walk_logs(arg, registry.log_suffixes())
            if not found:
                endings = ", ".join("*" + s for s in registry.log_suffixes())
                raise UsageError(
                    f"no session log found in directory {arg!r} (looked for {endings}, in any case)"
                )
            out.extend(found)
        else:
            out.append(arg)
    return list(dict.fromkeys(out))


def run_validate(request: ValidateRequest, progress: Progress | None = None) -> ValidateReport:
    """Every path given (directories walked), each reported once under its own path; a log's
    side files (``Dialect.companion_patterns``) are checked right after it."""
    results: list[FileResult] = []
    paths = expand_paths(request.paths)
    done: set[str] = set()
    while paths:
        path = paths.pop(0)
        key = path if path == "-" else os.path.normpath(path)
        if key in done:
            continue
        done.add(key)
        options = ScanOptions(
            fixture=request.fixture,
            assume_version=request.assume_version,
            max_findings=request.max_findings,
            strict=request.strict,
        )
        try:
            report = scan_source(path, options, request.limits, progress)
        except (InputError, NotASessionLog) as err:  # reported per file: the run goes on
            results.append(FileResult(path, None, err.message, isinstance(err, NotASessionLog)))
            continue
        results.append(FileResult(path, report, None))
        if request.companions:
            sides = companion_paths(path, report.dialect)
            paths[:0] = [p for p in sides if os.path.normpath(p) not in done]
    return ValidateReport(tuple(results), request.fail_on)


def is_generation_name(name: str) -> bool:
    return parse_generation_name(name) is not None
