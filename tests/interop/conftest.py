"""The interop lane runs only with SESSTOOL_INTEROP=1 (``make interop``); otherwise every test
here is skipped, with that reason shown. When enabled, setup.sh installs Node and the pinned
packages: if Node cannot be installed the lane is skipped with the precise reason, and any
other installation failure fails it."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_sesstool
from tests.interop._support import (
    CRASH_SCENARIOS,
    SCENARIOS,
    SETUP,
    VARIANTS,
    WRITER,
    Log,
    base_variant,
    cli_json,
    craft_cases,
    library_read,
    make_crafted,
    run_node,
)

HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("SESSTOOL_INTEROP") == "1"
FORK_CHILD_ID = "fork-kid:β 2"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ENABLED:
        return
    skip = pytest.mark.skip(reason="interop lane: runs only with SESSTOOL_INTEROP=1 (make interop)")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def node() -> str:
    """The Node >= 22 binary, with the pinned packages installed beside it in .interop/."""
    proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, check=False, timeout=900)
    if proc.returncode == 10:
        reason = [line for line in proc.stderr.splitlines() if "NODE UNAVAILABLE" in line]
        pytest.skip(f"interop lane skipped: {reason[-1] if reason else proc.stderr.strip()}")
    if proc.returncode != 0:
        pytest.fail(f"interop setup failed (exit {proc.returncode}):\n{proc.stderr}", pytrace=False)
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def lane_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("interop")


@pytest.fixture(scope="session")
def index(node: str, lane_dir: Path) -> dict[str, Any]:
    """Every scenario written once by the real library (writer.mjs), with its oracle."""
    out = lane_dir / "generated"
    run_node(node, WRITER, str(out))
    loaded: dict[str, Any] = json.loads((out / "index.json").read_text())
    return loaded


@pytest.fixture(scope="session")
def logs(index: dict[str, Any]) -> dict[tuple[str, str], Log]:
    found: dict[tuple[str, str], Log] = {}
    for entry in index["logs"]:
        found[entry["variant"], entry["name"]] = Log(
            name=entry["name"],
            variant=entry["variant"],
            kind=entry["kind"],
            id=entry["id"],
            path=Path(entry["log"]),
            oracle=json.loads(Path(entry["oracle"]).read_text()),
            library_repaired=Path(entry["libraryRepaired"]),
        )
    return found


@dataclass(frozen=True)
class Crafted:
    path: Path
    library: dict[str, Any]


@pytest.fixture(scope="session")
def crafted(node: str, lane_dir: Path, logs: dict[tuple[str, str], Log]) -> dict[tuple[str, str], Crafted]:
    """Defective logs made by editing real ones, each loaded once by the real library."""
    out = lane_dir / "crafted"
    paths = {
        (craft.name, encoding): make_crafted(
            craft, encoding, logs[base_variant(craft, encoding), craft.base], out
        )
        for craft, encoding in craft_cases()
    }
    results = library_read(node, [{"file": str(p)} for p in paths.values()], lane_dir)
    return {key: Crafted(path, result) for (key, path), result in zip(paths.items(), results, strict=True)}


@dataclass(frozen=True)
class Repaired:
    exit_code: int
    report: dict[str, Any]
    output: Path
    library: dict[str, Any] | None  # the real library loading sesstool's output


@pytest.fixture(scope="session")
def sesstool_repairs(
    node: str, lane_dir: Path, logs: dict[tuple[str, str], Log]
) -> dict[tuple[str, str], Repaired]:
    """``sesstool repair`` of every crashed log, each output loaded by the real library."""
    out = lane_dir / "sesstool-repaired"
    runs: dict[tuple[str, str], tuple[int, dict[str, Any], Path]] = {}
    for key, log in logs.items():
        if log.kind != "crash":
            continue
        target = out / key[0] / key[1] / log.path.name
        target.parent.mkdir(parents=True)
        code, report = cli_json("repair", "--json", "-o", str(target), str(log.path))
        runs[key] = (code, report, target)
    readable = [key for key, (_, _, target) in runs.items() if target.exists()]
    results = library_read(node, [{"file": str(runs[key][2])} for key in readable], lane_dir)
    by_key = dict(zip(readable, results, strict=True))
    return {
        key: Repaired(code, report, target, by_key.get(key)) for key, (code, report, target) in runs.items()
    }


@pytest.fixture(scope="session")
def crafted_repairs(
    node: str, lane_dir: Path, crafted: dict[tuple[str, str], Crafted]
) -> dict[tuple[str, str], Repaired]:
    """``sesstool repair`` of every crafted log the library accepts but would repair."""
    out = lane_dir / "crafted-repaired"
    runs: dict[tuple[str, str], tuple[int, dict[str, Any], Path]] = {}
    for key, case in crafted.items():
        if not case.library["accepted"] or case.library["verdict"] == "clean":
            continue
        target = out / f"{key[0]}.{key[1]}" / case.path.name
        target.parent.mkdir(parents=True)
        code, report = cli_json("repair", "--json", "-o", str(target), str(case.path))
        runs[key] = (code, report, target)
    readable = [key for key, (_, _, target) in runs.items() if target.exists()]
    results = library_read(node, [{"file": str(runs[key][2])} for key in readable], lane_dir)
    by_key = dict(zip(readable, results, strict=True))
    return {
        key: Repaired(code, report, target, by_key.get(key)) for key, (code, report, target) in runs.items()
    }


def fork_available() -> bool:
    return run_sesstool("fork", "--help").exit_code == 0


@dataclass(frozen=True)
class Forked:
    exit_code: int
    report: dict[str, Any]
    output: Path
    library_child: dict[str, Any] | None  # the real library loading sesstool's child
    library_fork: dict[str, Any] | None  # the real library's own fork at the same boundary


@pytest.fixture(scope="session")
def forks(node: str, lane_dir: Path, logs: dict[tuple[str, str], Log]) -> dict[tuple[str, str], Forked]:
    """``sesstool fork`` (default boundary) of every log, the child loaded by the real library,
    beside the library's own fork of the same parent at the same boundary."""
    if not fork_available():
        pytest.skip("sesstool has no fork command yet")
    out = lane_dir / "sesstool-forks"
    runs: dict[tuple[str, str], tuple[int, dict[str, Any], Path]] = {}
    for key, log in logs.items():
        target = out / key[0] / key[1] / log.path.name
        target.parent.mkdir(parents=True)
        code, report = cli_json(
            "fork", "--json", "--id", FORK_CHILD_ID, "--created-at", "1", "-o", str(target), str(log.path)
        )
        runs[key] = (code, report, target)
    jobs: list[dict[str, Any]] = []
    owners: list[tuple[tuple[str, str], str]] = []
    for key, (code, report, target) in runs.items():
        if code == 0 and target.exists():
            jobs.append({"file": str(target)})
            owners.append((key, "child"))
            boundary = report["boundary"]["seq"]
        else:
            # sesstool refused (no completed turn): ask the library to fork at the last stored
            # event, which is just as much inside the open turn.
            boundary = logs[key].oracle["stored"][-1][0]
        jobs.append({"file": str(logs[key].path), "fork": {"boundary": boundary, "childId": FORK_CHILD_ID}})
        owners.append((key, "parent"))
    results = library_read(node, jobs, lane_dir)
    child: dict[tuple[str, str], dict[str, Any]] = {}
    parent: dict[tuple[str, str], dict[str, Any]] = {}
    for (key, role), result in zip(owners, results, strict=True):
        (child if role == "child" else parent)[key] = result
    return {
        key: Forked(code, report, target, child.get(key), parent.get(key, {}).get("fork"))
        for key, (code, report, target) in runs.items()
    }


__all__ = ["CRASH_SCENARIOS", "SCENARIOS", "VARIANTS"]
