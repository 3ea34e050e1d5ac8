"""pytest plugin (``-p mutation.covmap``): which test executes which line of the mutated modules.

Coverage runs for the whole session with one dynamic context per test (its node id); lines run
outside any test (module import during collection) get the empty context. Writes the line map
and every test's duration to the JSON file named by ``SESSTOOL_COVMAP_OUT``; the modules to
measure are listed, comma-separated, in ``SESSTOOL_COVMAP_INCLUDE``.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Generator
from pathlib import Path
from typing import Any

import coverage
import pytest

_state: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    include = [str(Path(p).resolve()) for p in os.environ["SESSTOOL_COVMAP_INCLUDE"].split(",")]
    data_file = os.environ["SESSTOOL_COVMAP_OUT"] + ".coverage"
    cov = coverage.Coverage(data_file=data_file, include=include, branch=False, config_file=False)
    cov.start()
    _state.update(cov=cov, include=include, durations={})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    cov: coverage.Coverage = _state["cov"]
    cov.switch_context(item.nodeid)
    started = time.monotonic()
    yield
    _state["durations"][item.nodeid] = time.monotonic() - started
    cov.switch_context("")


def pytest_unconfigure(config: pytest.Config) -> None:
    cov: coverage.Coverage | None = _state.get("cov")
    if cov is None:
        return
    cov.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coverage.exceptions.CoverageWarning)  # a file that runs none
        cov.save()
    data = cov.get_data()
    root = Path.cwd().resolve()
    lines: dict[str, dict[str, list[str]]] = {}
    for filename in data.measured_files():
        rel = str(Path(filename).resolve().relative_to(root))
        by_line = data.contexts_by_lineno(filename)
        lines[rel] = {str(n): sorted(set(ctx)) for n, ctx in by_line.items()}
    out = Path(os.environ["SESSTOOL_COVMAP_OUT"])
    out.write_text(json.dumps({"lines": lines, "durations": _state["durations"]}))
    Path(data_file_of(cov)).unlink(missing_ok=True)


def data_file_of(cov: coverage.Coverage) -> str:
    return str(cov.config.data_file)
