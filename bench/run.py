"""`make bench`: generate large dsh v0 logs and measure sesstool against simple baselines.

For every size (default 100 MiB and 1 GiB) it generates, into ``bench/out/`` (git-ignored), a raw
log, its zstd twin and a torn raw log (reused on the next run when ``--keep`` kept them and their
sidecar says same size, seed and generator version), then times each command in a subprocess
and takes its peak RSS from ``os.wait4``. It prints a table and writes a JSON report.

It reports; it is not a test: exit 0 even when a target is missed. It exits 1 when a sesstool
command that exists fails (any non-zero status other than ``validate``'s 1 = findings, and
``validate`` exiting 1 on a generated, valid log counts as a failure too: a generator bug or a
validator false positive). Commands that sesstool does not offer yet are skipped with a note.

See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import genlog
import orjson
import zstandard

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = HERE / "out" / "results.json"
SCHEMA_VERSION = 2
MIB = 1 << 20
RSS_LIMIT_BYTES = 150_000_000  # "under 150 MB RSS" (DESIGN §8): decimal megabytes

BARE_LOOP = """\
import sys, orjson
with open(sys.argv[1], "rb") as f:
    for line in f:
        orjson.loads(line)
"""

# Informational: the same loop over the zstd twin, to show what decompression itself costs.
BARE_LOOP_ZSTD = """\
import io, sys, orjson, zstandard
with open(sys.argv[1], "rb") as f:
    reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
    for line in io.BufferedReader(reader, 1 << 20):
        orjson.loads(line)
"""


# --------------------------------------------------------------------------------------------
# Measuring one subprocess
# --------------------------------------------------------------------------------------------


# The measured command is started by this tiny launcher, not by the harness itself: Linux
# carries the RSS high-water mark of the pre-exec address space into the child's ru_maxrss, so
# a child forked straight from the (larger) harness would report at least the harness's RSS.
# The launcher (python -S: ~6.5 MiB) forks, execs the command, times it from fork to reap and
# writes "seconds maxrss_kib exit_code cpu_seconds" to the fd it was given (CPU = user + system
# of the command and its threads: what a loaded, shared machine moves far less than wall time).
LAUNCHER = """\
import os, sys, time
fd = int(sys.argv[1])
os.set_inheritable(fd, False)
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
cpu = usage.ru_utime + usage.ru_stime
os.write(fd, b"%r %d %d %r" % (seconds, usage.ru_maxrss, os.waitstatus_to_exitcode(status), cpu))
"""


@dataclass
class Measurement:
    seconds: float
    peak_rss_kib: int
    exit_code: int
    timed_out: bool
    stderr_tail: str
    cpu_seconds: float = 0.0


def measure(argv: Sequence[str], *, timeout: float) -> Measurement:
    """Run ``argv`` (stdout to /dev/null) through the launcher; wall time from fork to reap,
    peak RSS (KiB, Linux ``ru_maxrss``) from the child's own rusage."""
    rfd, wfd = os.pipe()
    try:
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                [sys.executable, "-S", "-c", LAUNCHER, str(wfd), *argv],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                cwd=ROOT,
                pass_fds=(wfd,),
                start_new_session=True,  # one process group: a timeout kills the command too
            )
            os.close(wfd)
            wfd = -1
            timed_out = False
            pidfd = os.pidfd_open(proc.pid)
            try:
                ready, _, _ = select.select([pidfd], [], [], timeout)
                if not ready:
                    timed_out = True
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            finally:
                os.close(pidfd)
            with os.fdopen(rfd, "rb") as pipe:
                rfd = -1
                result = pipe.read().split()
            err.seek(max(0, err.seek(0, os.SEEK_END) - 16_000))
            tail = err.read().decode("utf-8", "replace")
    finally:
        for fd in (rfd, wfd):
            if fd >= 0:
                os.close(fd)
    if len(result) != 4:
        code = proc.returncode if proc.returncode is not None else -1
        return Measurement(0.0, 0, code if code else -1, timed_out, tail or "launcher failed")
    return Measurement(float(result[0]), int(result[1]), int(result[2]), timed_out, tail, float(result[3]))


# --------------------------------------------------------------------------------------------
# Generated files and their sidecars
# --------------------------------------------------------------------------------------------


def size_label(n: int) -> str:
    for unit, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % mult == 0:
            return f"{n // mult}{unit}"
    return f"{n}B"


@dataclass
class GenFile:
    kind: str  # raw | zstd | torn
    path: Path
    bytes: int
    plain_bytes: int  # uncompressed log bytes (= bytes except for zstd)
    seconds: float | None  # generation time, None when reused
    reused: bool
    created: bool


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def _read_sidecar(path: Path) -> dict[str, Any] | None:
    try:
        value = orjson.loads(_sidecar(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(value, dict):
        return None
    try:
        if path.stat().st_size != value.get("bytes"):
            return None
    except OSError:
        return None
    return value


def _write_sidecar(path: Path, meta: dict[str, Any]) -> None:
    _sidecar(path).write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))


def ensure_raw(out_dir: Path, target: int, seed: int, torn: bool, workload: str = "chunk") -> GenFile:
    prefix = "v0" if workload == "chunk" else f"v0-{workload}"
    name = f"{prefix}-{size_label(target)}-s{seed}{'-torn' if torn else ''}.jsonl"
    path = out_dir / name
    want = {
        "generator_version": genlog.GENERATOR_VERSION,
        "target_bytes": target,
        "seed": seed,
        "torn": torn,
        "packed": False,
        "workload": workload,
    }
    meta = _read_sidecar(path)
    kind = "torn" if torn else "raw"
    if meta is not None and all(meta.get(k) == v for k, v in want.items()):
        size = int(meta["bytes"])
        return GenFile(kind, path, size, size, None, reused=True, created=False)
    print(f"generating {name} ({workload}, {size_label(target)}, seed {seed}) …", flush=True)
    start = time.perf_counter()
    stats = genlog.generate(path, target, seed=seed, torn=torn, workload=workload)
    seconds = time.perf_counter() - start
    dist = {k: v for k, v in genlog.line_stats(path).items() if k != "types"}
    meta = {
        **want,
        "line_stats": dist,
        "bytes": stats.bytes,
        "events": stats.events,
        "turns": stats.turns,
        "compactions": stats.compactions,
        "tool_calls": stats.tool_calls,
        "seconds": round(seconds, 3),
    }
    _write_sidecar(path, meta)
    mib = stats.bytes / MIB
    print(f"  {mib:.1f} MiB in {seconds:.1f} s ({mib / seconds:.1f} MiB/s)")
    return GenFile(kind, path, stats.bytes, stats.bytes, seconds, reused=False, created=True)


def ensure_zstd(raw: GenFile) -> GenFile:
    path = raw.path.with_name(raw.path.name + ".zstd")
    raw_meta = _read_sidecar(raw.path) or {}
    want = {"source": raw.path.name, "source_bytes": raw.bytes, "source_meta": raw_meta}
    meta = _read_sidecar(path)
    if meta is not None and all(meta.get(k) == v for k, v in want.items()):
        return GenFile("zstd", path, int(meta["bytes"]), raw.bytes, None, True, False)
    print(f"compressing {raw.path.name} → {path.name} …", flush=True)
    start = time.perf_counter()
    frames = genlog.compress(raw.path, path)
    seconds = time.perf_counter() - start
    size = path.stat().st_size
    _write_sidecar(path, {**want, "bytes": size, "frames": frames, "seconds": round(seconds, 3)})
    print(f"  {size / MIB:.1f} MiB, {frames} frames in {seconds:.1f} s")
    return GenFile("zstd", path, size, raw.bytes, seconds, reused=False, created=True)


def warm(path: Path) -> None:
    """Read a file once so every measured command sees it in the page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * MIB):
            pass


def remove_generated(files: Sequence[GenFile]) -> None:
    for gf in files:
        if gf.created:
            for p in (gf.path, _sidecar(gf.path)):
                p.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------
# The runs
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    file_kind: str
    argv: list[str]
    plain_bytes: int
    accept: frozenset[int] = frozenset({0})
    sesstool_command: str | None = None
    output: Path | None = None  # a path the command writes, removed after each repetition
    status: str = "pending"  # ok | failed | skipped | findings
    seconds: float | None = None
    all_seconds: list[float] = field(default_factory=list)
    cpu_seconds: float | None = None  # the least CPU time (user + system) of the repetitions
    all_cpu_seconds: list[float] = field(default_factory=list)
    peak_rss_kib: int | None = None
    exit_code: int | None = None
    note: str = ""
    output_bytes: int | None = None  # size of what the command wrote (the report page)

    @property
    def mib_per_s(self) -> float | None:
        if self.seconds is None or self.seconds <= 0 or self.status not in ("ok", "findings"):
            return None
        return self.plain_bytes / MIB / self.seconds

    @property
    def peak_rss_mib(self) -> float | None:
        return None if self.peak_rss_kib is None else self.peak_rss_kib / 1024

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file_kind,
            "argv": self.argv,
            "status": self.status,
            "exit_code": self.exit_code,
            "seconds": _round(self.seconds, 4),
            "all_seconds": [round(s, 4) for s in self.all_seconds],
            "cpu_seconds": _round(self.cpu_seconds, 4),
            "all_cpu_seconds": [round(s, 4) for s in self.all_cpu_seconds],
            "mib_per_s": _round(self.mib_per_s, 2),
            "peak_rss_mib": _round(self.peak_rss_mib, 2),
            "output_bytes": self.output_bytes,
            "note": self.note,
        }


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


@dataclass
class Context:
    commands: set[str] | None  # sesstool subcommands; None = CLI unavailable
    cli_note: str
    repeat: int
    timeout: float
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def sesstool_commands(sesstool: list[str]) -> tuple[set[str] | None, str]:
    """The subcommand names listed by ``sesstool --help`` (or None and why)."""
    try:
        proc = subprocess.run(
            [*sesstool, "--help"],
            capture_output=True,
            cwd=ROOT,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"sesstool --help could not run: {exc}"
    text = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"sesstool --help exited {proc.returncode}: {err[-1] if err else ''}"
    commands: set[str] = set()
    in_section = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            # the command list ends at its first blank line (the epilog's examples follow)
            in_section = in_section and not commands
            continue
        if stripped.rstrip(":").lower() == "commands" or stripped.lower().startswith("commands"):
            in_section = True
            continue
        if in_section:
            if not line.startswith((" ", "\t", "│")):
                in_section = False
                continue
            word = stripped.lstrip("│ ").split()[0] if stripped.lstrip("│ ") else ""
            if word and word[0].isalpha():
                commands.add(word)
    return commands, ("" if commands else "sesstool --help lists no commands")


def execute(ctx: Context, run: Run) -> None:
    if run.sesstool_command is not None:
        if ctx.commands is None:
            run.status, run.note = "skipped", ctx.cli_note
            return
        if run.sesstool_command not in ctx.commands:
            run.status = "skipped"
            run.note = f"sesstool has no `{run.sesstool_command}` command yet"
            return
    for _ in range(ctx.repeat):
        if run.output is not None:
            run.output.unlink(missing_ok=True)
        try:
            m = measure(run.argv, timeout=ctx.timeout)
        except OSError as exc:
            run.status, run.note = "failed", f"could not start: {exc}"
            break
        finally:
            if run.output is not None:
                if run.output.exists():
                    run.output_bytes = run.output.stat().st_size
                run.output.unlink(missing_ok=True)
        run.exit_code = m.exit_code
        if m.timed_out:
            run.status, run.note = "failed", f"killed after the {ctx.timeout:.0f} s timeout"
            break
        run.all_seconds.append(m.seconds)
        run.all_cpu_seconds.append(m.cpu_seconds)
        run.peak_rss_kib = max(run.peak_rss_kib or 0, m.peak_rss_kib)
        crashed = "Traceback (most recent call last)" in m.stderr_tail
        if m.exit_code not in run.accept or crashed:
            run.status = "failed"
            last = m.stderr_tail.strip().splitlines()
            what = "crashed" if crashed else f"exit {m.exit_code}"
            run.note = f"{what}: {last[-1][:300] if last else '(no stderr)'}"
            break
        run.status = "findings" if m.exit_code == 1 and run.name.startswith("validate") else "ok"
    run.seconds = min(run.all_seconds) if run.all_seconds else None
    run.cpu_seconds = min(run.all_cpu_seconds) if run.all_cpu_seconds else None
    if run.status == "failed" and run.sesstool_command is not None:
        ctx.failures.append(f"{run.name} on {run.file_kind}: {run.note}")


def build_runs(
    files: dict[str, GenFile],
    work: Path,
    sesstool: list[str],
    *,
    migrate: bool,
    have_jq: bool,
    node: str | None = None,
) -> list[Run]:
    raw, zst, torn = files["raw"], files["zstd"], files["torn"]
    py = sys.executable
    runs = [
        Run("bare-loop", "raw", [py, "-c", BARE_LOOP, str(raw.path)], raw.plain_bytes),
        Run("bare-loop", "zstd", [py, "-c", BARE_LOOP_ZSTD, str(zst.path)], zst.plain_bytes),
    ]
    jq = Run("jq -c empty", "raw", ["jq", "-c", "empty", str(raw.path)], raw.plain_bytes)
    if not have_jq:
        jq.status, jq.note = "skipped", "jq is not installed"
    runs.append(jq)
    for gf in (raw, zst):
        p = str(gf.path)
        runs += [
            Run(
                "validate",
                gf.kind,
                [*sesstool, "validate", p, "--format", "json"],
                gf.plain_bytes,
                accept=frozenset({0, 1}),  # 1 = findings: reported loudly by explain_findings
                sesstool_command="validate",
            ),
            Run(
                "inspect",
                gf.kind,
                [*sesstool, "inspect", p, "--json"],
                gf.plain_bytes,
                sesstool_command="inspect",
            ),
            Run(
                "derive",
                gf.kind,
                [*sesstool, "derive", p, "--format", "jsonl"],
                gf.plain_bytes,
                sesstool_command="derive",
            ),
            Run(
                "report",
                gf.kind,
                [*sesstool, "report", p, "-o", str(work / f"report-{gf.kind}.html")],
                gf.plain_bytes,
                sesstool_command="report",
                output=work / f"report-{gf.kind}.html",
            ),
        ]
    repaired = work / "repaired.jsonl"
    runs += [
        Run(
            "validate",
            "torn",
            [*sesstool, "validate", str(torn.path), "--format", "json"],
            torn.plain_bytes,
            accept=frozenset({0, 1}),  # an interrupted/torn log may legitimately have findings
            sesstool_command="validate",
        ),
        Run(
            "repair",
            "torn",
            [*sesstool, "repair", str(torn.path), "-o", str(repaired)],
            torn.plain_bytes,
            sesstool_command="repair",
            output=repaired,
        ),
    ]
    if node is not None:
        # the published library (the interop lane's pinned packages) reading the same logs
        loader = str(ROOT / "tests" / "interop" / "bench_load.mjs")
        for gf in (raw, zst):
            runs.append(Run("dsh library inspect", gf.kind, [node, loader, str(gf.path)], gf.plain_bytes))
    if migrate:
        migrated = work / "migrated.v4.jsonl"
        runs.append(
            Run(
                "migrate --to 4",
                "raw",
                [*sesstool, "migrate", str(raw.path), "--to", "4", "-o", str(migrated)],
                raw.plain_bytes,
                sesstool_command="migrate",
                output=migrated,
            )
        )
    return runs


def run_phases(ctx: Context, gf: GenFile, repeat: int) -> dict[str, Any]:
    """bench/phases.py on one file, in its own process (see its docstring for the phases)."""
    argv = [sys.executable, str(HERE / "phases.py"), str(gf.path), "--repeat", str(repeat)]
    try:
        proc = subprocess.run(
            argv, capture_output=True, cwd=ROOT, timeout=ctx.timeout * 4, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        ctx.notes.append(f"phases of {gf.path.name} failed: {exc}")
        return {}
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        ctx.notes.append(f"phases of {gf.path.name} failed: {tail[0]}")
        return {}
    value = orjson.loads(proc.stdout)
    return value if isinstance(value, dict) else {}


def format_phases(ph: dict[str, Any]) -> str:
    if not ph:
        return "(failed)"
    sec, us = ph["seconds"], ph["us_per_line"]
    text = (
        f"start-up {sec['startup']:.3f} s | read {sec['read']:.2f} decode {sec['decode']:.2f} "
        f"prefilter {sec['prefilter']:.2f} scan {sec['scan']:.2f} s | "
        f"µs/line split {us['split']:.2f} parse {us['parse']:.2f} prefilter {us['prefilter']:.2f} "
        f"handlers {us['handlers']:.2f}"
    )
    if "frames" in ph:
        text += f" | {ph['frames']} frames, {ph['plain_bytes_per_frame']} B each"
    return text


def explain_findings(ctx: Context, run: Run, label: str) -> None:
    """validate exit 1 on a generated (valid) log: shout, and show what it found."""
    banner = (
        f"!!! validate reported findings on the generated {label} {run.file_kind} log: "
        "a generator bug (or a validator false positive) — investigate before trusting figures"
    )
    print("\n" + "!" * 100 + f"\n{banner}\n" + "!" * 100, flush=True)
    try:
        proc = subprocess.run(
            run.argv, capture_output=True, cwd=ROOT, timeout=ctx.timeout, stdin=subprocess.DEVNULL
        )
        print(proc.stdout[:3000].decode("utf-8", "replace"))
        print(proc.stderr[-2000:].decode("utf-8", "replace"), file=sys.stderr)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"(could not re-run validate to show the findings: {exc})")
    # the timing stays in the ratios (the run completed); the failure is recorded
    run.note = "exit 1 (findings) on a generated valid log — generator bug?"
    ctx.failures.append(f"validate on generated {label} {run.file_kind} log: {run.note}")


# --------------------------------------------------------------------------------------------
# Ratios and targets
# --------------------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    value: float | None
    target: str
    passed: bool | None  # None = not applicable (a run is missing)
    note: str = ""

    @property
    def result(self) -> str:
        if self.target == "report" and self.value is not None:
            return "INFO"
        return "N/A" if self.passed is None else ("PASS" if self.passed else "FAIL")

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": _round(self.value, 3),
            "target": self.target,
            "result": self.result,
            "note": self.note,
        }


# issue 14: validate/inspect through the CLI against the bare loop, per workload
ISSUE14_TARGETS = {"chunk": 0.75, "small": 0.6}


def compute_checks(
    runs: list[Run], workload: str = "chunk", phases: dict[str, dict[str, Any]] | None = None
) -> list[Check]:
    def secs(name: str, kind: str) -> float | None:
        for r in runs:
            if r.name == name and r.file_kind == kind and r.status in ("ok", "findings"):
                return r.seconds
        return None

    def missing(*parts: tuple[str, str]) -> str:
        gone = [f"{n} ({k})" for n, k in parts if secs(n, k) is None]
        return "missing: " + ", ".join(gone)

    checks: list[Check] = []

    def ratio(name: str, num: tuple[str, str], den: tuple[str, str], target: str, ok: Any) -> None:
        a, b = secs(*num), secs(*den)
        if a is None or b is None or b <= 0:
            checks.append(Check(name, None, target, None, missing(num, den)))
            return
        value = a / b
        checks.append(Check(name, value, target, bool(ok(value))))

    # throughput ratio X/bare = bare time / X time
    bare = ("bare-loop", "raw")
    for cmd in ("validate", "inspect"):
        ratio(f"{cmd}/bare-loop throughput", bare, (cmd, "raw"), ">= 0.5", lambda v: v >= 0.5)
    goal = ISSUE14_TARGETS.get(workload)
    for cmd in ("validate", "inspect") if goal is not None else ():
        ratio(
            f"{cmd}/bare-loop throughput, {workload} workload (issue 14)",
            bare,
            (cmd, "raw"),
            f">= {goal}",
            lambda v, g=goal: v >= g,
        )
    for kind, ph in (phases or {}).items():
        # in process: the scan alone (no start-up, no rendering) against the bare loop
        b = secs("bare-loop", kind)
        scan = ph.get("seconds", {}).get("scan")
        name = f"in-process scan/bare-loop throughput ({kind})"
        if b is None or not scan:
            checks.append(Check(name, None, "report", None, missing(("bare-loop", kind))))
        else:
            checks.append(Check(name, b / scan, "report", None, "bench/phases.py scan vs the bare loop"))
    ratio(
        "bare-loop zstd time / raw time",
        ("bare-loop", "zstd"),
        bare,
        "report",
        lambda v: True,
    )
    for cmd in ("validate", "inspect"):
        ratio(
            f"{cmd} vs jq speed (jq time / {cmd} time)",
            ("jq -c empty", "raw"),
            (cmd, "raw"),
            "> 1.0",
            lambda v: v > 1.0,
        )
    for cmd in ("validate", "inspect"):
        ratio(f"{cmd} zstd time / raw time", (cmd, "zstd"), (cmd, "raw"), "<= 1.3", lambda v: v <= 1.3)

    def cpu(name: str, kind: str) -> float | None:
        for r in runs:
            if r.name == name and r.file_kind == kind and r.status in ("ok", "findings"):
                return r.cpu_seconds
        return None

    # the same ratios in CPU seconds (user + system, every thread): on a loaded machine wall
    # times are distorted; CPU time is not what the wall-time targets judge (a read-ahead
    # thread adds CPU time while it saves wall time), so these are reported, not judged
    for label, num, den in (
        ("validate/bare-loop throughput", bare, ("validate", "raw")),
        ("inspect/bare-loop throughput", bare, ("inspect", "raw")),
        ("validate zstd / raw", ("validate", "zstd"), ("validate", "raw")),
        ("inspect zstd / raw", ("inspect", "zstd"), ("inspect", "raw")),
        ("repair / validate (torn)", ("repair", "torn"), ("validate", "torn")),
    ):
        a, b = cpu(*num), cpu(*den)
        name = f"{label} (CPU seconds)"
        if a is None or b is None or b <= 0:
            checks.append(Check(name, None, "report", None, missing(num, den)))
        else:
            checks.append(Check(name, a / b, "report", None, "user + system time of each process"))
    ratio(
        "repair time / validate time (torn)",
        ("repair", "torn"),
        ("validate", "torn"),
        "<= 1.5",
        lambda v: v <= 1.5,
    )
    library_ran = any(r.name == "dsh library inspect" for r in runs)
    for kind in ("raw", "zstd") if library_ran else ():  # the library reads the 100 MiB log only
        a, b = secs("validate", kind), secs("dsh library inspect", kind)
        name = f"validate time / dsh library inspect time ({kind})"
        if a is None or b is None or b <= 0:
            checks.append(
                Check(name, None, "report", None, missing(("validate", kind), ("dsh library inspect", kind)))
            )
        else:
            checks.append(Check(name, a / b, "report", None, "informational: the real reader side by side"))
    limit_mib = RSS_LIMIT_BYTES / MIB
    for r in runs:
        if r.sesstool_command is None:
            continue
        name = f"peak RSS {r.name} ({r.file_kind}) MiB"
        if r.peak_rss_mib is None or r.status not in ("ok", "findings"):
            checks.append(Check(name, None, "< 150 MB", None, f"run {r.status}"))
        else:
            checks.append(Check(name, r.peak_rss_mib, "< 150 MB", r.peak_rss_mib < limit_mib, ""))
    return checks


def rss_growth(per_size: dict[str, list[Run]]) -> list[dict[str, Any]]:
    """Informational: peak RSS of each sesstool run at the largest size vs the smallest, per
    workload (labels are ``"<workload> <size>"`` in increasing size)."""
    out: list[dict[str, Any]] = []
    groups: dict[str, list[str]] = {}
    for label in per_size:
        groups.setdefault(label.split(" ")[0], []).append(label)
    for labels in groups.values():
        if len(labels) >= 2:
            out += _rss_growth(per_size, labels[0], labels[-1])
    return out


def _rss_growth(per_size: dict[str, list[Run]], small: str, large: str) -> list[dict[str, Any]]:
    out = []
    for r_large in per_size[large]:
        if r_large.sesstool_command is None or r_large.status not in ("ok", "findings"):
            continue
        for r_small in per_size[small]:
            if (
                (r_small.name, r_small.file_kind) == (r_large.name, r_large.file_kind)
                and r_small.status in ("ok", "findings")
                and r_small.peak_rss_kib
                and r_large.peak_rss_kib
            ):
                out.append(
                    {
                        "run": f"{r_large.name} ({r_large.file_kind})",
                        "sizes": [small, large],
                        "rss_ratio": round(r_large.peak_rss_kib / r_small.peak_rss_kib, 3),
                    }
                )
    return out


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def print_table(headers: list[str], rows: list[list[str]], right: set[int]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def machine_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "python_executable": sys.executable,
        "orjson": orjson.__version__,
        "zstandard": zstandard.__version__,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                facts["mem_total_mib"] = round(int(line.split()[1]) / 1024)
                break
    except OSError:
        pass
    try:
        facts["sesstool"] = importlib.metadata.version("sesstool")
    except importlib.metadata.PackageNotFoundError:
        facts["sesstool"] = None
    jq = shutil.which("jq")
    if jq:
        try:
            out = subprocess.run([jq, "--version"], capture_output=True, timeout=10)
            facts["jq"] = out.stdout.decode().strip()
        except (OSError, subprocess.TimeoutExpired):
            facts["jq"] = "unknown"
    else:
        facts["jq"] = None
    try:  # read-only
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, cwd=ROOT, timeout=10)
        facts["git_head"] = head.stdout.decode().strip() if head.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        facts["git_head"] = None
    return facts


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Generate large dsh v0 logs and measure sesstool throughput and memory."
    )
    ap.add_argument("--sizes", default="100M,1G", help="comma-separated sizes (default 100M,1G)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 20M only, logs verified")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="JSON report path")
    ap.add_argument("--keep", action="store_true", help="keep generated logs for reuse")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs per command; the fastest counts")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per command")
    ap.add_argument(
        "--sesstool",
        default="",
        help="command that runs sesstool (default: the running Python with -m sesstool)",
    )
    ap.add_argument("--verify", action="store_true", help="check every generated log with genlog.verify")
    ap.add_argument(
        "--workloads",
        default="chunk,small",
        help="comma-separated generator workloads: chunk (chunk-heavy), small (small events)",
    )
    ap.add_argument("--no-phases", action="store_true", help="skip the per-phase breakdown")
    args = ap.parse_args(argv)
    args.workload_list = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = sorted(set(args.workload_list) - set(genlog.WORKLOADS))
    if unknown or not args.workload_list:
        ap.error(f"unknown workload(s) {unknown}; choose from {sorted(genlog.WORKLOADS)}")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    try:
        sizes = ["20M"] if args.quick else [s for s in args.sizes.split(",") if s.strip()]
        args.size_bytes = sorted({genlog.parse_size(s) for s in sizes})
    except ValueError as exc:
        ap.error(str(exc))
    if not args.size_bytes or min(args.size_bytes) < 1 << 16:
        ap.error("sizes must be at least 64K")
    args.verify = args.verify or args.quick
    args.sesstool_argv = shlex.split(args.sesstool) or [sys.executable, "-m", "sesstool"]
    return args


def interop_node(ctx: Context) -> str | None:
    """Node and the published dsh packages of the interop lane (installed on demand)."""
    try:
        proc = subprocess.run(
            ["bash", str(ROOT / "tests" / "interop" / "setup.sh")],
            capture_output=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        ctx.notes.append(f"dsh library side by side skipped: setup failed ({err})")
        return None
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        ctx.notes.append(f"dsh library side by side skipped: {reason[0]}")
        return None
    return proc.stdout.decode().strip().splitlines()[-1]


def byte_compile() -> str:
    """Byte-compile the sesstool package, as ``pip install`` does for an installed package.

    The editable install of ``make venv`` leaves the sources uncompiled, and a shell with
    PYTHONDONTWRITEBYTECODE=1 (this machine's) would then recompile every module on every run:
    ~45 ms of start-up that no installed copy pays. Compiled files go to ``__pycache__``
    (ignored by git); Python only reads them, and rejects them when a source changes.
    """
    package = ROOT / "sesstool"
    proc = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(package)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        return "sesstool not byte-compiled (compileall failed): start-up includes compiling"
    return "sesstool byte-compiled first, as an installed package is"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out_dir = HERE / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    commands, cli_note = sesstool_commands(args.sesstool_argv)
    ctx = Context(commands, cli_note, args.repeat, args.timeout)
    ctx.notes.append(byte_compile())
    if commands is None:
        ctx.notes.append(f"sesstool CLI unavailable, all sesstool runs skipped: {cli_note}")
        print(f"NOTE: {ctx.notes[-1]}", flush=True)
    else:
        print(f"sesstool commands: {', '.join(sorted(commands)) or '(none)'}", flush=True)
    node = interop_node(ctx)
    have_jq = shutil.which("jq") is not None
    if not have_jq:
        ctx.notes.append("jq not installed: the jq baseline and the `vs jq` checks are skipped")

    free = shutil.disk_usage(out_dir).free
    need = int(sum(3.3 * s for s in args.size_bytes))
    if free < need:
        ctx.notes.append(f"only {free / MIB:.0f} MiB free in {out_dir}, ~{need / MIB:.0f} needed")
        print(f"WARNING: {ctx.notes[-1]}", flush=True)

    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(),
        "settings": {
            "sizes": [size_label(s) for s in args.size_bytes],
            "workloads": args.workload_list,
            "seed": args.seed,
            "repeat": args.repeat,
            "timeout_s": args.timeout,
            "throughput_basis": "uncompressed log bytes / wall seconds (MiB = 2**20 bytes)",
            "rss_limit_bytes": RSS_LIMIT_BYTES,
            "sesstool": args.sesstool_argv,
        },
        "generation": [],
        "sizes": {},
    }
    per_size: dict[str, list[Run]] = {}
    line_stats: dict[str, Any] = {}
    all_checks: list[tuple[str, Check]] = []
    smallest = args.size_bytes[0]

    for workload, target in [(w, t) for w in args.workload_list for t in args.size_bytes]:
        label = f"{workload} {size_label(target)}"
        print(f"\n== {label} ==", flush=True)
        created: list[GenFile] = []
        files: dict[str, GenFile] = {}
        runs: list[Run] = []
        phases: dict[str, dict[str, Any]] = {}
        work = Path(tempfile.mkdtemp(prefix=f"work-{workload}-{size_label(target)}-", dir=out_dir))
        try:
            raw = ensure_raw(out_dir, target, args.seed, torn=False, workload=workload)
            created.append(raw)
            zst = ensure_zstd(raw)
            created.append(zst)
            torn = ensure_raw(out_dir, target, args.seed, torn=True, workload=workload)
            created.append(torn)
            files.update(raw=raw, zstd=zst, torn=torn)
            line_stats[label] = (_read_sidecar(raw.path) or {}).get("line_stats")
            if line_stats[label]:
                d = line_stats[label]
                print(
                    f"  lines {d['lines']}, p50 {d['p50']} B, p90 {d['p90']} B, p99 {d['p99']} B, "
                    f"{d['lines_per_mib']} lines/MiB",
                    flush=True,
                )
            for gf in files.values():
                report["generation"].append(
                    {
                        "size": size_label(target),
                        "workload": workload,
                        "kind": gf.kind,
                        "file": gf.path.name,
                        "bytes": gf.bytes,
                        "reused": gf.reused,
                        "seconds": _round(gf.seconds, 3),
                        "mib_per_s": _round(gf.plain_bytes / MIB / gf.seconds if gf.seconds else None, 1),
                    }
                )
            if args.verify:
                for gf in files.values():
                    start = time.perf_counter()
                    rep = genlog.verify(gf.path, torn=gf.kind == "torn")
                    print(
                        f"verified {gf.path.name}: {rep.events} events, {rep.turns} turns "
                        f"({time.perf_counter() - start:.1f} s)",
                        flush=True,
                    )
            for gf in files.values():
                warm(gf.path)
            runs = build_runs(
                files,
                work,
                args.sesstool_argv,
                migrate=target == smallest,
                have_jq=have_jq,
                node=node if target == smallest and workload == args.workload_list[0] else None,
            )
            for run in runs:
                if run.status == "skipped":
                    print(f"  {run.name:<16} {run.file_kind:<5} skipped: {run.note}", flush=True)
                    continue
                execute(ctx, run)
                if run.status == "findings" and run.file_kind != "torn":
                    explain_findings(ctx, run, label)
                print(
                    f"  {run.name:<16} {run.file_kind:<5} {run.status:<8} "
                    f"{_fmt(run.seconds, '.2f'):>7} s  {_fmt(run.cpu_seconds, '.2f'):>6} cpu s  "
                    f"{_fmt(run.mib_per_s, '.1f'):>7} MiB/s  "
                    f"{_fmt(run.peak_rss_mib, '.1f'):>7} MiB  {run.note}"
                    + (f"  (wrote {run.output_bytes} bytes)" if run.output_bytes is not None else ""),
                    flush=True,
                )
            if not args.no_phases:
                for gf in (raw, zst):
                    phases[gf.kind] = run_phases(ctx, gf, args.repeat)
                    if gf.kind == "zstd":
                        meta = _read_sidecar(gf.path) or {}
                        if meta.get("frames"):
                            phases[gf.kind]["frames"] = meta["frames"]
                            phases[gf.kind]["plain_bytes_per_frame"] = round(gf.plain_bytes / meta["frames"])
                    print(f"  phases {gf.kind:<5} {format_phases(phases[gf.kind])}", flush=True)
        except genlog.VerifyError as exc:
            msg = f"generated {label} log failed genlog.verify: {exc}"
            print(f"GENERATOR BUG: {msg}", flush=True)
            ctx.failures.append(msg)
            runs = []
            files = {}
        finally:
            shutil.rmtree(work, ignore_errors=True)
            if not args.keep:
                remove_generated(created)
        per_size[label] = runs
        checks = compute_checks(runs, workload, phases)
        all_checks += [(label, c) for c in checks]
        report["sizes"][label] = {
            "workload": workload,
            "size": size_label(target),
            "line_stats": line_stats.get(label),
            "phases": phases,
            "files": {
                k: {
                    "name": gf.path.name,
                    "bytes": gf.bytes,
                    "plain_bytes": gf.plain_bytes,
                    "reused": gf.reused,
                }
                for k, gf in files.items()
            },
            "runs": [{"name": r.name, **r.as_json()} for r in runs],
            "checks": [c.as_json() for c in checks],
        }

    report["rss_growth"] = rss_growth(per_size)
    counts = {"PASS": 0, "FAIL": 0, "N/A": 0, "INFO": 0}
    for _, c in all_checks:
        counts[c.result] += 1
    report["summary"] = {**counts, "command_failures": len(ctx.failures)}
    report["failures"] = ctx.failures
    report["notes"] = ctx.notes

    print("\nRuns (MiB/s = uncompressed log MiB / wall seconds; RSS = child peak)")
    rows = [
        [
            label,
            r.name,
            r.file_kind,
            _fmt(r.seconds, ".2f"),
            _fmt(r.mib_per_s, ".1f"),
            _fmt(r.peak_rss_mib, ".1f"),
            "-" if r.exit_code is None else str(r.exit_code),
            r.status,
            (r.note or (f"wrote {r.output_bytes} bytes" if r.output_bytes is not None else ""))[:70],
        ]
        for label, runs in per_size.items()
        for r in runs
    ]
    print_table(
        ["size", "run", "file", "seconds", "MiB/s", "RSS MiB", "exit", "status", "note"],
        rows,
        {3, 4, 5, 6},
    )
    print("\nTargets (DESIGN.md §8)")
    print_table(
        ["size", "check", "value", "target", "result", "note"],
        [[label, c.name, _fmt(c.value, ".3f"), c.target, c.result, c.note[:60]] for label, c in all_checks],
        {2},
    )
    phase_rows = [
        [label, kind, format_phases(ph)]
        for label, entry in report["sizes"].items()
        for kind, ph in entry.get("phases", {}).items()
    ]
    if phase_rows:
        print("\nPhases in process (bench/phases.py; each includes the ones before it)")
        print_table(["size", "file", "breakdown"], phase_rows, set())
    if report["rss_growth"]:
        print("\nPeak RSS growth, largest vs smallest size (flat memory ⇒ ~1.0)")
        for g in report["rss_growth"]:
            print(f"  {g['sizes'][0].split(' ')[0]:<6} {g['run']:<28} ×{g['rss_ratio']:.2f}")
    print(
        f"\nsummary: {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['N/A']} N/A, "
        f"{counts['INFO']} INFO (reported, no target)"
    )
    for note in ctx.notes:
        print(f"note: {note}")
    for failure in ctx.failures:
        print(f"COMMAND FAILURE: {failure}")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"wrote {out}")
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
