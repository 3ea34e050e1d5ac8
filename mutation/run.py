"""``make mutate``: mutation testing of the modules listed in mutation/modules.toml.

Each mutant (mutation/mutants.py) is written into a scratch copy of the repository and run
against only the tests that execute its lines (a coverage map built once per test file and
cached), fastest first, stopping at the first failure. A mutant no test fails is a survivor,
unless mutation/equivalent.toml names it with the reason it cannot change behaviour. One module
at a time, under ``nice``, each within a time budget.

    python -m mutation.run                      # every module in modules.toml
    python -m mutation.run --module sesstool/store/lines.py --budget-minutes 10
    python -m mutation.run --list --module sesstool/core/seq_ranges.py   # the mutants only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutation.mutants import Mutant, mutants, mutate, original

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
SCRATCH = WORK / "scratch"
MAPS = WORK / "map"
REPORTS = WORK / "report"
MODULES_TOML = ROOT / "mutation" / "modules.toml"
EQUIVALENT_TOML = ROOT / "mutation" / "equivalent.toml"
# what the scratch copy leaves out: tools, caches and generated data, never tests or fixtures
SKIPPED = {
    ".git",
    ".venv",
    ".interop",
    ".mutation",
    ".hypothesis",
    "bench/out",
    "fuzz/corpus",
    "fuzz/corpus-decoder",
}


def _copy_ignore(directory: str, names: list[str]) -> set[str]:
    here = Path(directory).resolve().relative_to(ROOT)
    skipped = {n for n in names if n.endswith("_cache") or n == "__pycache__"}
    return skipped | {n for n in names if (here / n).as_posix() in SKIPPED}


@dataclass(frozen=True)
class Module:
    path: str
    # the module's own test files: run first for every mutant (a kill there is cheap: one file
    # to collect), and the judges of lines that run only at import (module constants)
    own_tests: tuple[str, ...]


@dataclass(frozen=True)
class Config:
    threshold: float
    modules: tuple[Module, ...]
    skip_tests: tuple[str, ...] = ()
    max_tests: int = 60  # per mutant, after its own tests: the fastest covering ones


@dataclass(frozen=True)
class Equivalent:
    module: str
    where: str
    line: str
    change: str
    nth: int
    reason: str

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        operator = self.change.split(":", 1)[0]
        return (self.module, self.where, operator, self.line, self.change.split(":", 1)[1].strip(), self.nth)


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed | timeout | survived | uncovered | equivalent | not-run
    tests: int = 0
    seconds: float = 0.0
    detail: str = ""


@dataclass
class Score:
    module: str
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(1 for o in self.outcomes if o.status in statuses)

    @property
    def judged(self) -> int:
        return len(self.outcomes) - self.count("equivalent")

    @property
    def percent(self) -> float:
        return 100.0 * self.count("killed", "timeout") / self.judged if self.judged else 100.0


def load_config() -> Config:
    raw = tomllib.loads(MODULES_TOML.read_text())
    modules = tuple(Module(m["path"], tuple(m.get("own_tests", ()))) for m in raw["module"])
    missing = [m.path for m in modules if not (ROOT / m.path).is_file()]
    if missing:
        raise SystemExit(
            f"{MODULES_TOML.relative_to(ROOT)} lists modules that do not exist: {', '.join(missing)} "
            "— point each entry at the module's current home"
        )
    return Config(
        float(raw["threshold"]), modules, tuple(raw.get("skip_tests", ())), int(raw.get("max_tests", 60))
    )


def load_equivalents() -> list[Equivalent]:
    raw = tomllib.loads(EQUIVALENT_TOML.read_text())
    out = []
    for e in raw.get("equivalent", []):
        if not str(e.get("reason", "")).strip():
            raise SystemExit(f"equivalent.toml: an entry without a reason: {e}")
        out.append(
            Equivalent(e["module"], e["where"], e["line"], e["change"], int(e.get("nth", 0)), e["reason"])
        )
    return out


def equivalent_change(m: Mutant) -> str:
    """How equivalent.toml spells a mutant's change: ``operator: change``."""
    return f"{m.operator}: {m.change}"


# ---------------------------------------------------------------------------------------------
# The coverage map


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def _test_files(config: Config, own_only: bool = False) -> list[Path]:
    """The test files of the scratch copy (what actually runs), less the skipped ones; with
    ``own_only`` just the modules' own test files."""
    if own_only:
        return sorted({SCRATCH / t for m in config.modules for t in m.own_tests})
    files = sorted((SCRATCH / "tests").rglob("test_*.py"))
    return [
        f
        for f in files
        if "interop" not in f.relative_to(SCRATCH).parts
        and f.relative_to(SCRATCH).as_posix() not in config.skip_tests
    ]


def refresh_scratch() -> None:
    """A copy of the repository that mutants are written into (the worktree is never touched)."""
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    shutil.copytree(ROOT, SCRATCH, ignore=_copy_ignore, symlinks=True)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SCRATCH)  # subprocesses the tests start import the mutant too
    env["SESSTOOL_HYPOTHESIS_PROFILE"] = "ci"
    env.pop("SESSTOOL_INTEROP", None)
    env.pop("SESSTOOL_UPDATE_GOLDENS", None)
    return env


def _map_is_current(part: dict[str, Any], test_hash: str, modules: dict[str, str]) -> bool:
    """A test file's cached map still holds when the file (and conftest) is unchanged and every
    mutated module either is unchanged or was never executed by it (an edit to a module a file
    does not run cannot make it run that module)."""
    if part.get("test") != test_hash:
        return False
    for path, digest in modules.items():
        cached = part["modules"].get(path)
        if cached is None or (cached["hash"] != digest and cached["lines"]):
            return False
    return True


def build_map(config: Config, own_only: bool = False) -> dict[str, Any]:
    """{"lines": {module: {line: {nodeid, ...}}}, "durations": {nodeid: seconds}}, merged over
    the test files. Each file's part is cached (.mutation/map/) and re-measured only when it or
    a mutated module it executes has changed."""
    MAPS.mkdir(parents=True, exist_ok=True)
    conftest = (SCRATCH / "tests" / "conftest.py").read_bytes()
    modules = {m.path: _sha((SCRATCH / m.path).read_bytes()) for m in config.modules}
    lines: dict[str, dict[str, set[str]]] = {}
    durations: dict[str, float] = {}
    include = ",".join(str(SCRATCH / m.path) for m in config.modules)
    for test_file in _test_files(config, own_only):
        rel = test_file.relative_to(SCRATCH).as_posix()
        test_hash = _sha(test_file.read_bytes() + conftest)
        cache = MAPS / (rel.replace("/", "_") + ".json")
        part: dict[str, Any] = json.loads(cache.read_text()) if cache.exists() else {}
        if not part or not _map_is_current(part, test_hash, modules):
            print(f"  coverage map: {rel}", flush=True)
            out = WORK / "map.part.json"
            env = _env()
            env.update(SESSTOOL_COVMAP_OUT=str(out), SESSTOOL_COVMAP_INCLUDE=include)
            proc = subprocess.run(
                ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-p", "mutation.covmap",
                 "-p", "no:cacheprovider", "-W", "ignore::coverage.exceptions.CoverageWarning", rel],
                cwd=SCRATCH, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            if proc.returncode not in (0, 5):
                raise SystemExit(
                    f"the unmutated tests fail in {rel}:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
                )
            measured = json.loads(out.read_text())
            part = {
                "test": test_hash,
                "modules": {
                    path: {"hash": digest, "lines": measured["lines"].get(path, {})}
                    for path, digest in modules.items()
                },
                "durations": measured["durations"],
            }
            cache.write_text(json.dumps(part))
        for path, cached in part["modules"].items():
            if path not in modules:
                continue
            target = lines.setdefault(path, {})
            for line, contexts in cached["lines"].items():
                target.setdefault(line, set()).update(contexts)
        durations.update(part["durations"])
    return {"lines": lines, "durations": durations}


# ---------------------------------------------------------------------------------------------
# Running mutants


@dataclass(frozen=True)
class Selection:
    own: list[str]  # covering tests from the module's own test files
    others: list[str]  # the fastest other covering tests, at most max_tests
    covering: int  # how many tests execute the mutated lines in all


def _selected(m: Mutant, module: Module, cov: dict[str, Any], max_tests: int) -> Selection:
    by_line: dict[str, set[str]] = cov["lines"].get(module.path, {})
    tests: set[str] = set()
    for line in range(m.lineno, m.end_lineno + 1):
        tests |= by_line.get(str(line), set())
    import_time = "" in tests
    tests.discard("")
    durations: dict[str, float] = cov["durations"]
    ordered = sorted(tests, key=lambda t: (durations.get(t, 60.0), t))
    others = [t for t in ordered if t.split("::")[0] not in module.own_tests]
    if m.qualname == "<module>" or import_time:
        # a top-level or class-body statement runs at import, which no test context holds (or
        # only the test that happened to import the module first): the own test files judge it
        return Selection(list(module.own_tests), others[:max_tests], len(ordered) + len(module.own_tests))
    own = [t for t in ordered if t.split("::")[0] in module.own_tests]
    return Selection(own, others[:max_tests], len(ordered))


def _run_tests(tests: list[str], timeout: float) -> tuple[str, str]:
    """Run ``tests`` (node ids, in order) until the first failure: survived, killed or timeout."""
    listing = WORK / "selected.txt"
    listing.write_text("\n".join(tests) + "\n")
    files = sorted({t.split("::")[0] for t in tests})
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    cmd += ["-p", "mutation.select", *files]
    env = _env()
    env["SESSTOOL_MUTATION_TESTS"] = str(listing)
    proc = subprocess.Popen(
        cmd, cwd=SCRATCH, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", f"no result after {timeout:.0f} s"
    text = out.decode("utf-8", "replace")
    failed = [ln for ln in text.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    if proc.returncode == 0:
        return "survived", ""
    if proc.returncode in (1, 2):  # a test failed, or collection failed (the mutant breaks an import)
        return "killed", failed[0] if failed else text.strip().splitlines()[-1] if text.strip() else ""
    raise SystemExit(f"pytest exited {proc.returncode} on {tests[:3]}...:\n{text[-3000:]}")


def _write(module: Module, text: str) -> None:
    target = SCRATCH / module.path
    target.write_text(text)
    for pyc in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        pyc.unlink()


def run_module(
    module: Module, equivalents: list[Equivalent], cov: dict[str, Any], budget: float, max_tests: int
) -> Score:
    source = (SCRATCH / module.path).read_text()  # the copy: edits made during a run do not count
    found = mutants(module.path, source)
    judged = {e.key: e for e in equivalents if e.module == module.path}
    score = Score(module.path)
    durations: dict[str, float] = cov["durations"]
    # the unparsed original must pass the module's own tests: ast.unparse is behaviour-preserving
    _write(module, original(source))
    status, detail = _run_tests(list(module.own_tests), 900)
    if status != "survived":
        raise SystemExit(f"{module.path}: the unmutated (unparsed) module fails its tests: {detail}")
    deadline = time.monotonic() + budget
    try:
        for m in found:
            if m.key in judged:
                score.outcomes.append(Outcome(m, "equivalent", detail=judged[m.key].reason))
                continue
            if time.monotonic() > deadline:
                score.outcomes.append(Outcome(m, "not-run", detail="time budget spent"))
                continue
            selection = _selected(m, module, cov, max_tests)
            if not selection.own and not selection.others:
                score.outcomes.append(Outcome(m, "uncovered", detail="no test executes this line"))
                continue
            text = mutate(source, m.index)
            compile(text, module.path, "exec")  # a mutant that cannot compile would count as killed
            _write(module, text)
            started = time.monotonic()
            status, detail, ran = "survived", "", 0
            for batch in (selection.own, selection.others):
                if not batch:
                    continue
                timeout = 60 + 3 * sum(durations.get(t, 10.0) for t in batch)
                status, detail = _run_tests(batch, timeout)
                ran += len(batch)
                if status != "survived":
                    break
            if status == "survived" and ran < selection.covering:
                detail = f"ran the {ran} fastest of {selection.covering} covering tests"
            outcome = Outcome(m, status, ran, time.monotonic() - started, detail)
            score.outcomes.append(outcome)
            mark = {"killed": ".", "timeout": "T", "survived": "S"}[status]
            print(mark, end="", flush=True)
    finally:
        _write(module, source)
    print()
    return score


def report(score: Score, threshold: float) -> str:
    c = Counter(o.status for o in score.outcomes)
    head = (
        f"{score.module}: {c['killed'] + c['timeout']}/{score.judged} killed = {score.percent:.1f} % "
        f"({len(score.outcomes)} mutants, {c['equivalent']} equivalent, {c['timeout']} by timeout, "
        f"{c['survived']} survived, {c['uncovered']} uncovered, {c['not-run']} not run)"
    )
    verdict = "ok" if score.percent >= threshold and not c["not-run"] else "BELOW TARGET"
    lines = [f"{head} — {verdict} (target {threshold:.0f} %)"]
    for o in score.outcomes:
        if o.status in ("survived", "uncovered", "not-run"):
            lines.append(
                f"  {o.status.upper():9} {o.mutant.describe()}  [{o.tests} tests] {o.detail}".rstrip()
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--module", action="append", help="a path from modules.toml (repeatable)")
    parser.add_argument("--budget-minutes", type=float, default=30.0, help="per module (default 30)")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument("--fresh-map", action="store_true", help="rebuild the whole coverage map")
    parser.add_argument(
        "--own-tests-only",
        action="store_true",
        help="map and run only the modules' own test files (fast; a lower bound on the score)",
    )
    args = parser.parse_args(argv)
    config = load_config()
    equivalents = load_equivalents()
    modules = [m for m in config.modules if not args.module or m.path in args.module]
    if args.module and len(modules) != len(args.module):
        raise SystemExit(f"not in modules.toml: {set(args.module) - {m.path for m in modules}}")
    # every judgement must still name a mutant of the current source
    known = {m.key for mod in config.modules for m in mutants(mod.path, (ROOT / mod.path).read_text())}
    stale = [e for e in equivalents if e.key not in known]
    if stale:
        for e in stale:
            print(
                f"stale equivalent.toml entry (no such mutant): {e.module} [{e.where}] {e.change} | {e.line}"
            )
        return 2
    if args.list:
        for mod in modules:
            for m in mutants(mod.path, (ROOT / mod.path).read_text()):
                print(m.describe())
        return 0
    refresh_scratch()
    if args.fresh_map and MAPS.exists():
        shutil.rmtree(MAPS)
    cov = build_map(config, args.own_tests_only)
    REPORTS.mkdir(parents=True, exist_ok=True)
    scores = []
    for mod in modules:
        print(f"{mod.path}:", flush=True)
        score = run_module(mod, equivalents, cov, args.budget_minutes * 60, config.max_tests)
        text = report(score, config.threshold) + ("  [own tests only]" if args.own_tests_only else "")
        (REPORTS / (mod.path.replace("/", "_") + ".txt")).write_text(text + "\n")
        print(text, flush=True)
        scores.append(score)
    summary = {
        s.module: {
            "killed": s.count("killed", "timeout"),
            "judged": s.judged,
            "equivalent": s.count("equivalent"),
            "survived": s.count("survived", "uncovered"),
            "not_run": s.count("not-run"),
            "percent": round(s.percent, 1),
        }
        for s in scores
    }
    mode = "own tests only" if args.own_tests_only else "all covering tests"
    (WORK / "summary.json").write_text(json.dumps({"mode": mode, "modules": summary}, indent=2) + "\n")
    print(f"\nselection: {mode}")
    print("\nmodule                                    killed/judged   score  equivalent")
    for name, row in summary.items():
        print(
            f"{name:42} {row['killed']:>5}/{row['judged']:<6} {row['percent']:6.1f} %  {row['equivalent']:>5}"
        )
    ok = all(s.percent >= config.threshold and not s.count("not-run") for s in scores)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
