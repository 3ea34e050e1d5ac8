"""repair --relink (issue 17): the opt-in edit that re-points broken parentUuid links, through
the real ``main``, with goldens of the output, its manifest and the command's report.

Refresh with ``make goldens`` (SESSTOOL_UPDATE_GOLDENS=1) — and read the diff before committing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.claude._support import CLAUDE, EXPECTED_DIR, SCENARIOS, Scenario, scan_bytes, scan_file, zstd_twin
from tests.conftest import Sesstool, check_golden

BROKEN = Scenario("damaged-broken-parent")
GRAPH_TYPES = {"user", "assistant", "attachment", "system", "progress"}


def _entries(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path) -> Path:
    """``source`` copied to ``tmp_path/in/`` and the working directory there: the paths in the
    manifest and the report are relative, so the goldens hold for any checkout."""
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    shutil.copyfile(source, tmp_path / "in" / source.name)
    monkeypatch.chdir(tmp_path)
    return Path("in") / source.name


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_relink_re_points_the_broken_link_and_writes_a_manifest(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zstd: bool
) -> None:
    """damaged-broken-parent: an attachment line was deleted, so the next entry (line 4) names a
    parent that is not in the file and the chain stops there (the first prompt is not sent). The
    relink re-points line 4 to the entry before it (line 3, the prompt): the chain the CLI
    wrote, restored; only that value changes, the source is untouched."""
    source_path = zstd_twin(BROKEN.transcript) if zstd else BROKEN.transcript
    source = _in_tmp(tmp_path, monkeypatch, source_path)
    before = source.read_bytes()
    out = Path("out") / BROKEN.transcript.name
    result = sesstool("repair", "--relink", str(source), "-o", str(out), "--encoding", "raw", "--json")
    assert result.exit_code == 0, result.stderr
    assert source.read_bytes() == before
    raw = BROKEN.transcript.read_bytes()
    relinked = out.read_bytes()
    old, new = raw.split(b"\n"), relinked.split(b"\n")
    assert len(old) == len(new)
    changed = [i + 1 for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert changed == [4]
    prompt = _entries(raw)[2]
    assert prompt["type"] == "user" and prompt["parentUuid"] is None
    broken_entry, fixed_entry = json.loads(old[3]), json.loads(new[3])
    assert fixed_entry == {**broken_entry, "parentUuid": prompt["uuid"]}
    assert new[3] == old[3].replace(broken_entry["parentUuid"].encode(), prompt["uuid"].encode())
    # the manifest lists the change; the report says the same
    manifest = json.loads(Path(str(out) + ".relink.json").read_bytes())
    (change,) = manifest["changes"]
    assert change == {
        "line": 4,
        "offset": len(b"\n".join(old[:3])) + 1,
        "uuid": broken_entry["uuid"],
        "field": "parentUuid",
        "old": broken_entry["parentUuid"],
        "new": prompt["uuid"],
        "reason": change["reason"],
    }
    assert "line 3" in change["reason"]
    assert manifest["output"]["path"] == str(out) and manifest["source"]["path"] == str(source)
    doc = json.loads(result.stdout)
    assert doc["relink"]["changes"] == manifest["changes"] and doc["status"] == "repaired"
    # rescanned: no broken link left, the chain reaches the first prompt, nothing to close
    scan = scan_file(Path(out))
    assert scan.verdict == "clean" and not [f for f in scan.findings if f.rule == "claude-parent-missing"]
    assert scan.chain[0] == 3
    before_scan = scan_file(BROKEN.transcript)
    assert before_scan.chain[0] == 4 and len(scan.chain) == len(before_scan.chain) + 1
    kind = "zstd" if zstd else "raw"
    check_golden(EXPECTED_DIR / BROKEN.name / "relinked.jsonl", relinked)
    check_golden(
        EXPECTED_DIR / BROKEN.name / f"{kind}.relink.manifest.json",
        Path(str(out) + ".relink.json").read_bytes(),
    )
    check_golden(EXPECTED_DIR / BROKEN.name / f"{kind}.relink.repair.json", result.stdout)


def test_relink_human_report_and_dry_run(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _in_tmp(tmp_path, monkeypatch, BROKEN.transcript)
    out = Path("out") / BROKEN.transcript.name
    planned = sesstool("repair", "--relink", "--dry-run", str(source), "-o", str(out))
    assert planned.exit_code == 0, planned.stderr
    assert sorted(p.name for p in Path("out").iterdir()) == []  # a dry run writes nothing
    check_golden(EXPECTED_DIR / BROKEN.name / "raw.relink.dry-run.txt", planned.stdout)
    done = sesstool("repair", "--relink", str(source), "-o", str(out))
    assert done.exit_code == 0, done.stderr
    check_golden(EXPECTED_DIR / BROKEN.name / "raw.relink.repair.txt", done.stdout)
    assert sorted(p.name for p in Path("out").iterdir()) == [out.name, out.name + ".relink.json"]
    again = sesstool("repair", "--relink", str(source), "-o", str(out))  # a re-run: identical files
    assert again.exit_code == 0, again.stderr


def test_plain_repair_never_edits_a_broken_link(sesstool: Sesstool, tmp_path: Path) -> None:
    """Without --relink the broken link is reported and nothing is written (the file is balanced)."""
    out = tmp_path / BROKEN.transcript.name
    result = sesstool("repair", str(BROKEN.transcript.relative_to(Path.cwd())), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert not out.exists() and not Path(str(out) + ".relink.json").exists()


def _linear_lines(data: bytes) -> list[int]:
    """Lines whose entry's parentUuid is the graph entry right before it in file order (on the
    same side of the sidechain line): where the relink rule must give back the original."""
    found: list[int] = []
    previous: dict[bool, str] = {}
    for number, entry in enumerate(_entries(data), 1):
        if entry.get("type") not in GRAPH_TYPES:
            continue
        side = entry.get("isSidechain") is True
        if isinstance(entry.get("parentUuid"), str) and previous.get(side) == entry["parentUuid"]:
            found.append(number)
        if isinstance(entry.get("uuid"), str):
            previous[side] = entry["uuid"]
    return found


CASES = [
    (name, line)
    for name in ("tool-one", "kill-tool", "kill-parallel-one-answered")
    for line in _linear_lines(Scenario(name).transcript.read_bytes())
]


@pytest.mark.parametrize(("name", "line"), CASES, ids=[f"{n}:{line}" for n, line in CASES])
def test_relink_gives_back_the_link_the_cli_wrote(
    sesstool: Sesstool, tmp_path: Path, name: str, line: int
) -> None:
    """Break the link of an entry the CLI chained to the entry before it (its parent replaced by
    a uuid of no entry), then relink: the file is the CLI's again, byte for byte, followed by the
    closers plain repair appends to the original (an interrupted session stays closable)."""
    scenario = Scenario(name)
    raw = scenario.transcript.read_bytes()
    lines = raw.split(b"\n")
    parent = json.loads(lines[line - 1])["parentUuid"].encode()
    lines[line - 1] = lines[line - 1].replace(parent, b"00000000-0000-4000-8000-000000000000", 1)
    broken = tmp_path / "in" / scenario.transcript.name
    broken.parent.mkdir()
    broken.write_bytes(b"\n".join(lines))
    assert "claude-parent-missing" in {
        f.rule for f in scan_bytes(broken.read_bytes(), str(broken), scenario.session_id).findings
    }
    out = tmp_path / "out" / scenario.transcript.name
    out.parent.mkdir()
    result = sesstool("repair", "--relink", str(broken), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    plain = tmp_path / "plain" / scenario.transcript.name
    plain.parent.mkdir()
    assert sesstool("repair", str(scenario.transcript), "-o", str(plain)).exit_code == 0
    expected = plain.read_bytes() if plain.exists() else raw
    assert out.read_bytes() == expected
    (change,) = json.loads(Path(str(out) + ".relink.json").read_bytes())["changes"]
    assert (change["line"], change["new"]) == (line, parent.decode())


def test_relink_refusals(sesstool: Sesstool, tmp_path: Path) -> None:
    """A dialect without parent links refuses (exit 4); --relink with --salvage is a usage
    error; a manifest name already taken refuses before anything is written (exit 6); a file
    with no broken link gets an ordinary repair and a note."""
    dsh = tmp_path / "dsh" / "session.jsonl"  # a copy: repair takes the session's lock file
    dsh.parent.mkdir()
    shutil.copyfile(CLAUDE.parent / "dsh" / "clean-multiturn" / "session.jsonl", dsh)
    refused = sesstool("repair", "--relink", str(dsh), "-o", str(tmp_path / "dsh.jsonl"))
    assert refused.exit_code == 4, refused.stderr
    assert "no parent links" in refused.stderr and not (tmp_path / "dsh.jsonl").exists()
    out = tmp_path / BROKEN.transcript.name
    both = sesstool("repair", "--relink", "--salvage", str(BROKEN.transcript), "-o", str(out))
    assert both.exit_code == 2, both.stderr
    Path(str(out) + ".relink.json").write_bytes(b"{}\n")
    taken = sesstool("repair", "--relink", str(BROKEN.transcript), "-o", str(out))
    assert taken.exit_code == 6, taken.stderr
    assert not out.exists()
    fine = tmp_path / "fine" / Scenario("kill-tool").transcript.name
    fine.parent.mkdir()
    ordinary = sesstool(
        "repair", "--relink", "--json", str(Scenario("kill-tool").transcript), "-o", str(fine)
    )
    assert ordinary.exit_code == 0, ordinary.stderr
    doc = json.loads(ordinary.stdout)
    assert "relink" not in doc and any("nothing to re-point" in n for n in doc["notes"])
    assert fine.exists() and not Path(str(fine) + ".relink.json").exists()


def test_every_fixture_relinks_or_says_why(sesstool: Sesstool, tmp_path: Path) -> None:
    """Over every fixture: --relink writes a clean file (or refuses a corrupt one, exit 3), and
    only a file with a broken link gets a manifest."""
    for name in SCENARIOS:
        scenario = Scenario(name)
        out = tmp_path / name / scenario.transcript.name
        out.parent.mkdir()
        result = sesstool("repair", "--relink", str(scenario.transcript), "-o", str(out))
        broken = any(f.rule == "claude-parent-missing" for f in scan_file(scenario.transcript).findings)
        if result.exit_code == 3:
            assert not out.exists()
            continue
        assert result.exit_code == 0, (name, result.stderr)
        assert Path(str(out) + ".relink.json").exists() == broken, name
        if out.exists():
            assert scan_file(out).verdict == "clean", name


def test_relink_keeps_a_zstd_source_compressed(sesstool: Sesstool, tmp_path: Path) -> None:
    """zstd in, zstd out (the default): the decoded output is the raw relink's, byte for byte."""
    from tests.conftest import plaintext_of

    out = tmp_path / (BROKEN.transcript.name + ".zstd")
    result = sesstool("repair", "--relink", str(zstd_twin(BROKEN.transcript)), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert plaintext_of(out) == (EXPECTED_DIR / BROKEN.name / "relinked.jsonl").read_bytes()
    assert json.loads(Path(str(out) + ".relink.json").read_bytes())["changes"][0]["line"] == 4
