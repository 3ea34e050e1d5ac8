"""``fleet`` over Claude Code transcripts and Codex rollouts (stop 37: the fleet's corpus held
only dsh and mini logs). Each file's row says what ``validate`` of that file says — its dialect,
verdict, events (a transcript's or rollout's lines), rules and counts — and a row of a log with a
hostile line quotes it as ``validate`` does, never whole. Found: a transcript's row named no
dialect (the row took one only from a log with a version, which a transcript never has) and 0
events."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.test_memory_property_dialects import RECORDINGS, first_text, hostile
from tests.conftest import FIXTURES, run_sesstool

pytest.importorskip("distributed")

MiB = 1 << 20
LOGS = sorted(
    p
    for d in ("claude", "codex")
    for p in (FIXTURES / d).rglob("*")
    if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zst", ".jsonl.zstd")) and "expected" not in p.parts
)


def single(path: Path) -> dict[str, Any]:
    """What ``validate --json`` says of ``path``, in a row's terms."""
    run = run_sesstool("validate", "--json", str(path))
    doc: dict[str, Any] = json.loads(run.stdout)["files"][0]
    severities = [f["severity"] for f in doc["findings"]]
    return {
        "verdict": doc["verdict"]["verdict"],
        "events": doc["events"],
        "rules": sorted({f["rule"] for f in doc["findings"]}),
        "errors": severities.count("error"),
        "warnings": severities.count("warning"),
        "infos": severities.count("info"),
    }


def fleet_rows(cluster: Any, root: Path, summary: Path) -> dict[str, dict[str, Any]]:
    run = run_sesstool(
        "fleet", "validate", str(root), "--scheduler", cluster.scheduler.address, "--summary", str(summary)
    )
    assert run.exit_code in (0, 1), run.stderr
    rows = [json.loads(line) for line in summary.read_bytes().splitlines()]
    return {row["path"]: row for row in rows}


def test_the_corpus_holds_both_dialects_raw_and_compressed() -> None:
    names = [p.name for p in LOGS]
    assert any(n.startswith("rollout-") and n.endswith(".zst") for n in names)
    assert any(n.endswith(".jsonl.zstd") for n in names) and len(LOGS) > 60


def test_each_row_says_what_validate_says(cluster: Any, tmp_path: Path) -> None:
    root = tmp_path / "logs"
    copies: dict[str, tuple[Path, str]] = {}
    for n, log in enumerate(LOGS):
        dialect = log.relative_to(FIXTURES).parts[0]
        copy = root / f"{n:03d}" / log.name  # a folder each: the names repeat across fixtures
        copy.parent.mkdir(parents=True)
        shutil.copyfile(log, copy)
        copies[str(copy)] = (copy, dialect)
    rows = fleet_rows(cluster, root, tmp_path / "rows.jsonl")
    assert set(rows) == set(copies)
    for path, (copy, dialect) in copies.items():
        row = rows[path]
        assert row["status"] in ("ok", "findings") and row["dialect"] == dialect, row
        assert {k: row[k] for k in single(copy)} == single(copy) | {"rules": sorted(row["rules"])}, path


@pytest.mark.parametrize("dialect", sorted(RECORDINGS))
def test_a_hostile_line_is_quoted_in_its_row_never_whole(cluster: Any, tmp_path: Path, dialect: str) -> None:
    """The next shape (stop 37): ``fleet`` over a log with a 4 MiB message text in it, and the
    same text cut into a bad timestamp where the dialect has one."""
    root = tmp_path / "logs"
    root.mkdir()
    log = root / RECORDINGS[dialect].name
    log.write_bytes(hostile(dialect, *first_text(dialect), "letters", 4 * MiB))
    rows = fleet_rows(cluster, root, tmp_path / "rows.jsonl")
    row = rows[str(log)]
    assert row["dialect"] == dialect and row["status"] in ("ok", "findings"), row
    assert {k: row[k] for k in single(log)} == single(log) | {"rules": sorted(row["rules"])}
    assert len(json.dumps(row)) < 4096, len(json.dumps(row))
