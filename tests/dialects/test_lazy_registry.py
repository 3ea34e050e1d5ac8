"""The registry imports a dialect package only when a log needs it (issue 14: start-up), and
detection that stops at the first certain score picks what asking every dialect picks."""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

import orjson
import pytest

from sesstool.dialects import registry
from tests.conftest import FIXTURES, ROOT

PROBE = """
import sys
from sesstool.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted({m.split(".")[2] for m in sys.modules if m.startswith("sesstool.dialects.")}))
"""

DIALECT_PACKAGES = {"dsh", "mini", "codex", "claude"}


def imported_dialects(*args: str) -> set[str]:
    """The dialect packages a fresh interpreter has imported after ``sesstool ARGS``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, check=False
    )
    last = done.stdout.strip().splitlines()[-1]
    return set(ast.literal_eval(last)) & DIALECT_PACKAGES  # a list of names printed by the probe


@pytest.mark.parametrize("command", [["validate"], ["inspect", "--json"]], ids=lambda c: c[0])
@pytest.mark.parametrize("encoding", ["session.jsonl", "session.jsonl.zstd"])
def test_a_dsh_log_imports_no_other_dialect(command: list[str], encoding: str) -> None:
    log = FIXTURES / "dsh" / "v0-tiny" / encoding
    assert imported_dialects(*command, str(log)) == {"dsh"}


def test_a_claude_log_imports_the_dialects_up_to_claude() -> None:
    logs = sorted((FIXTURES / "claude").rglob("*.jsonl"))
    assert logs
    assert "claude" in imported_dialects("validate", str(logs[0]))


def test_the_rule_command_sees_every_dialects_rules() -> None:
    """``sesstool rule`` lists every dialect's rules: it imports them all."""
    assert imported_dialects("rule", "--help") <= DIALECT_PACKAGES
    assert imported_dialects("rule", "zstd-checksum") == DIALECT_PACKAGES


def first_records() -> list[Any]:
    records: list[Any] = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        with path.open("rb") as f:
            line = f.readline()
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
    return records


def test_detection_stopping_at_a_certain_score_picks_the_best_of_all() -> None:
    records = first_records()
    assert len(records) > 300
    every = registry.DIALECTS
    for first in records:
        best, score = every[0], 0.0
        for dialect in every:  # every dialect asked, as before the lazy registry
            s = dialect.detect(first)
            assert 0.0 <= s <= registry.CERTAIN
            if s > score:
                best, score = dialect, s
        assert registry.detect(first) is best
