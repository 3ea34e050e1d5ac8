"""What the Claude Code memory tests share (issue 11 item 1): their children run with the spill
thresholds lowered to 1,024 (a ``sitecustomize`` put on the child's path, so that both sizes of
a transcript are far past them), on transcripts written once per test module into a folder of
their own, and their peak RSS is read from the kernel under an address-space limit (never timed:
``hostile_logs.run_measured``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial import claude_hostile
from tests.adversarial.claude_hostile import SESSION
from tests.adversarial.hostile_logs import Measured, assert_flat, run_measured
from tests.conftest import ROOT

__all__ = ["DERIVE_COMMANDS", "LOWERED", "LoweredRuns", "assert_flat", "entries_to", "lowered_runs"]
LOWERED = """\
from sesstool.dialects.claude import derive, entry_graph, held, key_index
derive.SPILL_AT = entry_graph.SPILL_AT = held.HELD_AT = key_index.FLUSH_AT = 1024
"""
GRAPH_LOWERED = """\
from sesstool.dialects.claude import derive, entry_graph
derive.SPILL_AT = entry_graph.SPILL_AT = 1024
"""  # the entry graph's and derive's thresholds only (test_claude_reattached.py, test_claude_flat_derive.py)
READ_BACK_LOWERED = """\
from sesstool.core import fold
from sesstool.engine import derive_read
fold.SPILL_AT = derive_read.SORT_AT = 4096
"""  # a dsh log's fold and derive's read-back sort (test_derive_read_spill.py)
# LOWERED, and three buffers of a fixed size that a small N does not fill (their filling between
# N and 4N is not what is measured): derive's read-back cache of lines (line_fetch.CACHE_BYTES,
# 4 MiB) to 1 MiB, SQLite's page cache of a spill file (spill.CACHE_KIB, 512 KiB) and a held
# list's page read back (held._PAGE_BYTES, 1 MiB) to 64 KiB. At full size, N = 6,500 grew derive
# of missing parents by +2.03 MiB (the line cache; +1.20 with it lowered: the page) and of 6,500
# chosen values by +1.50 (the page caches). Used by test_claude_hostile*.py,
# test_claude_preserved.py and test_claude_derive_reasons.py.
CACHES_LOWERED = f"""{LOWERED}from sesstool.store import line_fetch, spill
line_fetch.LineFetcher.__init__.__defaults__ = ({1 << 20},)
spill.SpillFile.__init__.__defaults__ = ("a scan's state", 64)
spill.ArraySpill.__init__.__defaults__ = (64,)
held._PAGE_BYTES = {64 << 10}
"""

DERIVE_COMMANDS = {  # what a derive memory test runs: every format, and the page that reads them
    "jsonl": ["derive", "--format", "jsonl"],
    "json": ["derive", "--format", "json"],
    "markdown": ["derive", "--format", "markdown"],
    "markdown-redact": ["derive", "--format", "markdown", "--redact"],
    "report": ["report"],
}


class LoweredRuns:
    """A test module's folder of transcripts, and its children run with the thresholds lowered."""

    def __init__(self, where: Path, lowered: str = LOWERED) -> None:
        self.where = where
        (where / "site").mkdir(exist_ok=True)
        (where / "site" / "sitecustomize.py").write_text(lowered)

    def log(self, name: str, write: Callable[[Path], object], session: str = SESSION) -> Path:
        """``<name>/<session>.jsonl``, written by ``write(path)`` the first time it is asked for."""
        log = self.where / name / f"{session}.jsonl"
        if not log.exists():
            log.parent.mkdir()
            write(log)
        return log

    def run(
        self, log: Path, args: list[str], ok: tuple[int, ...] = (0, 1), env: dict[str, str] | None = None
    ) -> Measured:
        """``sesstool ARGS LOG`` in a child under a 2 GiB address space (``env`` added to its
        environment); its exit status one of ``ok`` (1: validate's verdict on a damaged file)."""
        measured = run_measured(
            [*args, str(log)],
            address_space=2 << 30,
            cwd=log.parent,
            env={"PYTHONPATH": f"{self.where / 'site'}:{ROOT}", **(env or {})},
        )
        assert measured.exit_code in ok, measured.stderr
        return measured


def lowered_runs(tmp_path_factory: pytest.TempPathFactory, name: str, lowered: str = LOWERED) -> LoweredRuns:
    return LoweredRuns(tmp_path_factory.mktemp(name), lowered)


def lowered_fixture(name: str, lowered: str = LOWERED) -> Any:
    """A module fixture of ``lowered_runs`` in a folder ``name``: ``where = lowered_fixture(...)``
    at a test module's top level (its logs written once for the module)."""

    @pytest.fixture(scope="module")
    def where(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
        return lowered_runs(tmp_path_factory, name, lowered)

    return where


HOSTILE_N = 20_000  # units of a hostile pattern in the smaller transcript (claude_hostile.py)
HOSTILE_COMMANDS = {  # what a hostile-item memory test runs (test_claude_hostile*.py)
    "validate": ["validate"],
    "derive": ["derive", "--format", "jsonl"],
    "inspect": ["inspect"],
    "inspect-json": ["inspect", "--json"],
    "repair": ["repair", "-o", "repaired.jsonl"],
    "fork": ["fork", "--id", "0b0c0a3e-0000-4000-8000-00000000c0de", "-o", "forked.jsonl"],  # a UUID
}


def hostile_cases(pattern: str, commands: Iterable[str]) -> list[Any]:
    """``(pattern, command)`` parameters of a hostile-item memory test, each named
    ``<pattern>-<command>``."""
    return [pytest.param(pattern, command, id=f"{pattern}-{command}") for command in commands]


def hostile_log(where: LoweredRuns, pattern: str, n: int) -> Path:
    """``claude_hostile.write``'s transcript of ``n`` units of ``pattern``, written once a module."""
    return where.log(f"{pattern}-{n}", functools.partial(claude_hostile.write, pattern=pattern, n=n))


def assert_hostile_flat(where: LoweredRuns, pattern: str, command: str, n: int = HOSTILE_N) -> None:
    """The peak RSS of ``command`` on ``n`` and on ``4n`` units of ``pattern`` within
    ``assert_flat``'s bound (exit 1: validate's verdict on a damaged file)."""
    args = HOSTILE_COMMANDS[command]
    small = where.run(hostile_log(where, pattern, n), args).peak_rss
    assert_flat(small, where.run(hostile_log(where, pattern, 4 * n), args).peak_rss)


def entries_to(entries: Iterable[dict[str, Any]]) -> Callable[[Path], None]:
    """A writer of ``entries`` as compact JSON lines (as the CLI writes them)."""

    def write(path: Path) -> None:
        with path.open("wb") as out:
            for entry in entries:
                out.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")

    return write
