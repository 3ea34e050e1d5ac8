"""Golden outputs of every command on every Codex fixture (fixtures/codex/, recorded from the
real CLI), raw and zstd, compared exactly. Refresh with ``make goldens`` and read the diff.

inspect (JSON and screen), validate (JSON), derive (JSON, or the refusal), repair (the appended
lines; the rest must be the source's committed bytes) and fork (the child's first line and
appended lines; the rest must be the source's lines after its session_meta).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, Sesstool, check_golden, plaintext_of

CODEX = FIXTURES / "codex"
FORK_ID = "01a231f0-0000-7000-8000-00000000c0de"


def _logs() -> list[Path]:
    logs = sorted(p for p in CODEX.glob("*/rollout-*") if p.name.endswith((".jsonl", ".jsonl.zst")))
    assert len(logs) == 56, "Codex fixture corpus missing (28 rollouts, raw and zstd)"
    return logs


LOGS = _logs()
IDS = [f"{p.parent.name}/{'zst' if p.name.endswith('.zst') else 'raw'}" for p in LOGS]


def _golden(log: Path, command: str, ext: str) -> Path:
    kind = "zst" if log.name.endswith(".zst") else "raw"
    return log.parent / "expected" / f"{kind}.{command}.{ext}"


def _args(log: Path) -> list[str]:
    rel = str(log.relative_to(ROOT))
    return [rel, "--dialect", "codex"] if log.parent.name == "empty" else [rel]


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_inspect_json(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("inspect", "--json", *_args(log))
    assert result.exit_code == 0, result.stderr
    check_golden(_golden(log, "inspect", "json"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_inspect_human(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("inspect", *_args(log))
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout
    check_golden(_golden(log, "inspect", "txt"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_validate_json(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("validate", "--format", "json", *_args(log))
    doc = json.loads(result.stdout)
    assert result.exit_code == (1 if doc["failed"] else 0), result.stderr
    check_golden(_golden(log, "validate", "json"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_derive_json(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("derive", "--format", "json", *_args(log))
    if result.exit_code == 0:
        doc = json.loads(result.stdout)
        sent = json.loads((log.parent / "resume.json").read_text())["input"]
        assert doc["messages"] == sent[1 : 1 + len(doc["messages"])]  # what Codex sent on resume
        actual = result.stdout
    else:
        assert result.exit_code in (3, 4) and result.stdout == ""
        actual = json.dumps({"exit_code": result.exit_code, "stderr": result.stderr}, indent=2) + "\n"
    check_golden(_golden(log, "derive", "json"), actual)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_repair(sesstool: Sesstool, log: Path, tmp_path: Path) -> None:
    out = tmp_path / ("out.jsonl.zst" if log.name.endswith(".zst") else "out.jsonl")
    result = sesstool("repair", *_args(log), "-o", str(out))
    plan = sesstool("inspect", "--json", *_args(log))
    doc = json.loads(plan.stdout)
    if not out.exists():
        actual = (
            json.dumps({"exit_code": result.exit_code, "verdict": doc["verdict"]["verdict"]}, indent=2) + "\n"
        )
        assert result.exit_code in (0, 3, 4), result.stderr
        assert (result.exit_code == 0) == (doc["verdict"]["verdict"] == "clean")
        check_golden(_golden(log, "repair", "json"), actual)
        return
    assert result.exit_code == 0, result.stderr
    committed = doc["tail"]["committed_bytes"]
    source, repaired = plaintext_of(log), plaintext_of(out)
    assert repaired[:committed] == source[:committed]
    if log.name.endswith(".zst"):
        assert out.read_bytes().startswith(b"\x28\xb5\x2f\xfd")
    appended = repaired[committed:].decode()
    assert [json.loads(line) for line in appended.splitlines()] == doc["repair"]["closers"]
    again = sesstool("inspect", "--json", str(out))
    assert json.loads(again.stdout)["verdict"]["verdict"] == "clean"
    check_golden(_golden(log, "repair", "jsonl"), appended)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_fork(sesstool: Sesstool, log: Path, tmp_path: Path) -> None:
    out = tmp_path / f"child{'.jsonl.zst' if log.name.endswith('.zst') else '.jsonl'}"
    result = sesstool("fork", *_args(log), "--id", FORK_ID, "-o", str(out))
    if not out.exists():
        actual = json.dumps({"exit_code": result.exit_code, "stderr": result.stderr}, indent=2) + "\n"
        assert result.exit_code in (2, 3, 4), result.stderr
        check_golden(_golden(log, "fork", "json"), actual)
        return
    assert result.exit_code == 0, result.stderr
    source, child = plaintext_of(log).splitlines(keepends=True), plaintext_of(out).splitlines(keepends=True)
    kept = len(source) - 1 if not plaintext_of(log).endswith(b"\n") else len(source)
    assert child[1:kept] == source[1:kept]
    head = json.loads(child[0])
    assert head["payload"]["id"] == FORK_ID and head["payload"]["forked_from_id"] in log.name
    check_golden(_golden(log, "fork", "jsonl"), (child[0] + b"".join(child[kept:])).decode())


def test_codex_home_listing(sesstool: Sesstool) -> None:
    home = str((CODEX / "home").relative_to(ROOT))
    listing = sesstool("inspect", home)
    assert listing.exit_code == 0, listing.stderr
    check_golden(CODEX / "home" / "expected" / "inspect.txt", listing.stdout)
    doc = sesstool("inspect", "--json", home)
    verdicts = [entry["verdict"]["verdict"] for entry in json.loads(doc.stdout)["sessions"]]
    assert verdicts == ["clean", "interrupted", "clean"]  # newest first
    check_golden(CODEX / "home" / "expected" / "inspect.json", doc.stdout)
    checked = sesstool("validate", "--format", "json", home)
    assert checked.exit_code == 0, checked.stderr
    assert json.loads(checked.stdout)["summary"]["files"] == 3
    check_golden(CODEX / "home" / "expected" / "validate.json", checked.stdout)


@pytest.mark.parametrize("log", [p for p in LOGS if p.name.endswith(".jsonl")], ids=lambda p: p.parent.name)
def test_derive_markdown(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("derive", "--format", "markdown", *_args(log))
    if result.exit_code != 0:
        assert result.exit_code in (3, 4) and result.stdout == ""
        return
    assert "## 1 · " in result.stdout and "· ?" not in result.stdout
    check_golden(_golden(log, "derive", "md"), result.stdout)


# The corrupt fixtures: ``repair --salvage`` keeps every line Codex reads (docs/format.md
# "Salvage of a rollout"); the three without a readable session_meta are refused.
SALVAGED = ["interleaved-half-line", "nul-run", "undecodable-line", "torn-tail-resumed"]
SALVAGE_REFUSED = ["missing-session-meta", "session-meta-invalid", "empty"]
SALVAGE_LOGS = [p for p in LOGS if p.parent.name in SALVAGED + SALVAGE_REFUSED]


@pytest.mark.parametrize("log", SALVAGE_LOGS, ids=lambda p: f"{p.parent.name}/{p.name[-3:]}")
def test_salvage(sesstool: Sesstool, log: Path, tmp_path: Path) -> None:
    zst = log.name.endswith(".zst")
    out = tmp_path / ("out.jsonl.zst" if zst else "out.jsonl")
    verdict = json.loads(sesstool("inspect", "--json", *_args(log)).stdout)["verdict"]["verdict"]
    assert verdict == "corrupt"
    result = sesstool("repair", "--salvage", "--json", *_args(log), "-o", str(out))
    if log.parent.name in SALVAGE_REFUSED:
        assert result.exit_code == 3 and result.stdout == "" and not list(tmp_path.iterdir())
        actual = json.dumps({"exit_code": result.exit_code, "stderr": result.stderr}, indent=2) + "\n"
        check_golden(_golden(log, "salvage", "json"), actual)
        return
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    manifest = json.loads(Path(str(out) + ".dropped.json").read_text())
    sidecar = Path(str(out) + ".dropped").read_bytes()
    source, salvaged = plaintext_of(log), plaintext_of(out)
    # the new file is the source without the dropped ranges, then the closers
    kept, at = bytearray(), 0
    for r in manifest["dropped"]:
        assert (
            sidecar[r["sidecar_offset"] : r["sidecar_offset"] + r["bytes"]]
            == source[r["plaintext_offset"] : r["plaintext_offset"] + r["bytes"]]
        )
        kept += source[at : r["plaintext_offset"]]
        at = r["plaintext_offset"] + r["bytes"]
    kept += source[at:]
    assert len(sidecar) == manifest["dropped_bytes"] == sum(r["bytes"] for r in manifest["dropped"])
    appended = salvaged[len(kept) :]
    assert salvaged[: len(kept)] == kept
    assert [json.loads(line) for line in appended.splitlines()] == doc["plan"]["closers"]
    assert out.read_bytes().startswith(b"\x28\xb5\x2f\xfd") == zst
    again = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert again["verdict"]["verdict"] == "clean" and again["findings"] == []
    # what Codex rebuilt from the damaged source is what the salvaged file derives (the closers
    # aside, which only close what Codex closes in memory); the recovered lines are not items
    derived = json.loads(sesstool("derive", "--format", "json", str(out)).stdout)["messages"]
    sent = json.loads((log.parent / "resume.json").read_text())["input"]
    assert derived == sent[1 : 1 + len(derived)]
    text = json.dumps({"repair": doc, "manifest": manifest}, indent=2).replace(str(tmp_path), "<tmp>")
    check_golden(_golden(log, "salvage", "json"), text + "\n")
