"""Issue 11 item 1 (stop 35): a finding or a refusal that quotes a value a DSH or mini-agent log
chose where it wanted something else — a header field, an envelope's seq, time or type, a turn
number, a surfaceOp, a message role — quotes it cut (``humanize.chosen_repr``: its first
``CHOSEN_CHARS`` characters and its length), as test_quoted_ids.py does for the Claude and
Codex ids. Before, they were quoted whole (``{value!r}``): a header whose ``cwd`` was an
array of 524,288 short strings gave a 2.6 MB message, repeated in the report page (31 MB, for
a page meant to have a bounded size), and ``report`` of it peaked at 204 MiB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from sesstool.core.errors import Address
from sesstool.core.humanize import CHOSEN_CHARS, MESSAGE_CHARS
from sesstool.core.rules import Finding, Severity
from tests.conftest import FIXTURES, Sesstool

WIDE = ["a"] * 40_000  # its repr: 200,000 characters
CUT = "…[200,000 characters]"
DSH = FIXTURES / "dsh" / "v4-tiny" / "session.v4.jsonl"
MINI = FIXTURES / "mini" / "dangling-call" / "session.jsonl"


def _set(record: dict[str, Any], path: tuple[str, ...]) -> None:
    for key in path[:-1]:
        record = record[key]
    record[path[-1]] = WIDE


# (log, line, the member made wide)
CASES = {
    "dsh-header-cwd": (DSH, 0, ("cwd",)),
    "dsh-header-type": (DSH, 0, ("type",)),
    "dsh-seq": (DSH, 3, ("seq",)),
    "dsh-time": (DSH, 3, ("time",)),
    "dsh-type": (DSH, 3, ("type",)),
    "dsh-turn-start": (DSH, 10, ("data", "turn")),
    "dsh-turn-end": (DSH, 9, ("data", "turn")),
    "dsh-surface-op": (DSH, 4, ("surfaceOp",)),
    "dsh-turn-end-reason": (DSH, 9, ("data", "reason", "kind")),  # "turn/end reason lacks a kind"
    "mini-header-version": (MINI, 0, ("data", "version")),
    "mini-header-time": (MINI, 0, ("time",)),
    "mini-turn": (MINI, 1, ("data", "turn")),
    "mini-role": (MINI, 3, ("data", "message", "role")),
}


UNQUOTED = {"dsh-turn-end-reason"}  # its finding names what is wrong without quoting the value


def _hostile(tmp_path: Path, case: str) -> Path:
    source, at, path = CASES[case]
    lines = source.read_bytes().split(b"\n")
    record = orjson.loads(lines[at])
    _set(record, path)
    lines[at] = orjson.dumps(record)
    log = tmp_path / source.name
    log.write_bytes(b"\n".join(lines))
    return log


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_and_report_quote_a_wide_value_cut(sesstool: Sesstool, tmp_path: Path, case: str) -> None:
    log = _hostile(tmp_path, case)
    said = repr(WIDE)[:CHOSEN_CHARS] + CUT
    for fmt in ("text", "json", "github", "junit", "sarif"):
        run = sesstool("validate", "--format", fmt, "--fail-on", "info", str(log))
        assert run.exit_code in (0, 1), (case, fmt, run.stderr)
        assert len(run.stdout_bytes) < 32 << 10, (case, fmt, len(run.stdout_bytes))
    text = sesstool("validate", "--fail-on", "info", str(log)).stdout
    assert said in text or case in UNQUOTED, (case, text[:2000])
    page = tmp_path / "report.html"
    run = sesstool("report", "-o", str(page), str(log))
    assert run.exit_code == 0, (case, run.stderr)
    assert page.stat().st_size < 1 << 20, (case, page.stat().st_size)


def test_a_finding_message_is_bounded_whatever_quotes_it() -> None:
    """The net under the quotations: a message over ``MESSAGE_CHARS`` is cut and says so; one
    at the limit is kept whole."""
    where = Address("x.jsonl", 0, 1)
    assert (
        Finding("r", Severity.ERROR, "m" * 5000, where).message == "m" * MESSAGE_CHARS + "…[5,000 characters]"
    )
    assert Finding("r", Severity.ERROR, "m" * MESSAGE_CHARS, where).message == "m" * MESSAGE_CHARS
