"""Every command on every Claude fixture, raw and zstd: goldens compared exactly.

Refresh with ``make goldens`` (SESSTOOL_UPDATE_GOLDENS=1) — and read the diff before committing.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from tests.claude._support import (
    CLAUDE,
    EXPECTED_DIR,
    RESUME_PROMPT,
    SCENARIOS,
    Scenario,
    scan_file,
    zstd_twin,
)
from tests.claude.test_transcript import EXPECTED
from tests.claude_lane.judge import appended_by_cli, shape
from tests.conftest import ROOT, Sesstool, check_golden

LOGS = [Scenario(n).transcript for n in SCENARIOS] + [
    CLAUDE / "zstd" / n / (Scenario(n).transcript.name + ".zstd") for n in SCENARIOS
]
IDS = [f"{p.parent.parent.name}/{p.parent.name}" for p in LOGS]


def _golden(log: Path, command: str, ext: str) -> Path:
    kind = "zstd" if log.name.endswith(".zstd") else "raw"
    return EXPECTED_DIR / log.parent.name / f"{kind}.{command}.{ext}"


def _rel(log: Path) -> str:
    return str(log.relative_to(ROOT))


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_inspect(sesstool: Sesstool, log: Path) -> None:
    human = sesstool("inspect", _rel(log))
    assert human.exit_code == 0, human.stderr
    assert "\x1b" not in human.stdout
    check_golden(_golden(log, "inspect", "txt"), human.stdout)
    doc = sesstool("inspect", "--json", _rel(log))
    assert doc.exit_code == 0, doc.stderr
    parsed = json.loads(doc.stdout)
    assert parsed["verdict"]["verdict"] == EXPECTED[log.parent.name][0]
    check_golden(_golden(log, "inspect", "json"), doc.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_validate(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("validate", "--format", "json", _rel(log))
    doc = json.loads(result.stdout)
    assert result.exit_code == (1 if doc["failed"] else 0), result.stderr
    check_golden(_golden(log, "validate", "json"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_derive(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("derive", "--format", "json", _rel(log))
    if EXPECTED[log.parent.name][0] == "corrupt":
        assert result.exit_code == 3, result.stderr
        return
    assert result.exit_code == 0, result.stderr
    check_golden(_golden(log, "derive", "json"), result.stdout)


REPAIRABLE = [n for n in SCENARIOS if EXPECTED[n][0] in ("interrupted", "torn")]


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", REPAIRABLE)
def test_repair(sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool) -> None:
    """A new file with the session id as its name, the committed prefix byte for byte, then the
    closers; reproducible (the golden), balanced, and the source untouched."""
    scenario = Scenario(name)
    source = CLAUDE / "zstd" / name / (scenario.transcript.name + ".zstd") if zstd else scenario.transcript
    before = source.read_bytes()
    out = tmp_path / "out" / scenario.transcript.name
    out.parent.mkdir()
    result = sesstool("repair", _rel(source), "-o", str(out), "--encoding", "raw")
    assert result.exit_code == 0, result.stderr
    assert source.read_bytes() == before
    raw = scenario.transcript.read_bytes()
    committed = raw[: raw.rfind(b"\n") + 1]
    repaired = out.read_bytes()
    assert repaired.startswith(committed)
    check_golden(EXPECTED_DIR / name / "repaired.jsonl", repaired)
    # entry for entry (uuid/timestamp values aside) what Claude Code appended on resume (§0)
    ours = [json.loads(line) for line in repaired[len(committed) :].split(b"\n")[:-1]]
    cli = appended_by_cli(raw, scenario.resumed.read_bytes(), RESUME_PROMPT)
    known = {e["uuid"]: e["uuid"] for e in map(json.loads, committed.split(b"\n")[:-1]) if "uuid" in e}
    assert shape(ours, known) == shape(cli, known)
    assert [list(e) for e in ours] == [list(e) for e in cli]
    again = sesstool("inspect", "--json", str(out))
    assert json.loads(again.stdout)["verdict"]["verdict"] == "clean", again.stdout


@pytest.mark.parametrize("name", [n for n in SCENARIOS if EXPECTED[n][0] == "clean"])
def test_repair_of_a_balanced_transcript_writes_nothing(
    sesstool: Sesstool, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "x.jsonl"
    result = sesstool("repair", _rel(Scenario(name).transcript), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert not out.exists()


def test_repair_refuses_a_corrupt_transcript(sesstool: Sesstool, tmp_path: Path) -> None:
    result = sesstool("repair", _rel(Scenario("damaged-nul-run").transcript), "-o", str(tmp_path / "x.jsonl"))
    assert result.exit_code == 3, result.stderr
    assert "nul" in result.stderr.lower()


def test_repair_and_fork_never_write_into_projects_unless_asked(sesstool: Sesstool, tmp_path: Path) -> None:
    home = tmp_path / "home" / "projects" / "-work"
    home.mkdir(parents=True)
    source = home / Scenario("kill-tool").transcript.name
    shutil.copyfile(Scenario("kill-tool").transcript, source)
    for command in (["repair", str(source)], ["fork", str(source)]):
        result = sesstool(*command)
        assert result.exit_code == 2, result.stderr
        assert "projects directory" in result.stderr
    assert sorted(p.name for p in home.iterdir()) == [source.name]
    asked = home / "repaired" / source.name
    asked.parent.mkdir()
    assert sesstool("repair", str(source), "-o", str(asked)).exit_code == 0


@pytest.mark.parametrize("name", ["kill-parallel-one-answered", "tool-parallel"])
def test_fork(sesstool: Sesstool, tmp_path: Path, name: str) -> None:
    """A new session id in the file name and every entry, forkedFrom stamped, the rest of each
    line unchanged, the child balanced (closers appended when the source was interrupted)."""
    scenario = Scenario(name)
    child = "11111111-2222-4333-8444-555555555555"
    out = tmp_path / f"{child}.jsonl"
    result = sesstool("fork", _rel(scenario.transcript), "--id", child, "-o", str(out))
    assert result.exit_code == 0, result.stderr
    check_golden(EXPECTED_DIR / name / "fork.jsonl", out.read_bytes())
    doc = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert doc["verdict"]["verdict"] == "clean", doc["verdict"]
    for line in out.read_bytes().split(b"\n")[:-1]:
        entry = json.loads(line)
        if "sessionId" in entry:
            assert entry["sessionId"] == child
    assert scenario.session_id.encode() in out.read_bytes()  # forkedFrom names the parent


def test_a_fork_is_a_session_the_cli_can_resume_by_its_id(sesstool: Sesstool, tmp_path: Path) -> None:
    """The child's id is a fresh UUID and its file ``<id>.jsonl``, as Claude Code names and
    resumes sessions (the lane resumes one); ``--id`` must be a UUID as the CLI writes it."""
    scenario = Scenario("tool-one")
    source = tmp_path / scenario.transcript.name
    source.write_bytes(scenario.transcript.read_bytes())
    result = sesstool("fork", "--json", str(source))
    assert result.exit_code == 0, result.stderr
    child = Path(json.loads(result.stdout)["output"]["path"])
    child_id = child.name.removesuffix(".jsonl")
    assert str(uuid.UUID(child_id)) == child_id and uuid.UUID(child_id).version == 4
    assert child.parent == tmp_path and child_id != scenario.session_id
    assert json.loads(sesstool("inspect", "--json", str(child)).stdout)["claude"]["session_id"] == child_id
    for bad in (
        "child",
        "session-0123456789abcdef0123456789abcdef",
        "11111111-2222-4333-8444-55555555555",
        "0b0c0a3e-0000-4000-8000-00000000c0de".upper(),
        "{11111111-2222-4333-8444-555555555555}",
    ):
        refused = sesstool("fork", "--id", bad, "-o", str(tmp_path / "x.jsonl"), str(source))
        assert refused.exit_code == 2 and "a Claude Code session id is a UUID" in refused.stderr, bad
    assert not (tmp_path / "x.jsonl").exists()


def test_list_a_claude_home(sesstool: Sesstool) -> None:
    """A Claude home lists its sessions: id, cwd, version, verdict, size, last time."""
    result = sesstool("list", "--json", "fixtures/claude")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    main = [s for s in doc["sessions"] if "/subagents/" not in s["path"]]
    assert sorted(Path(s["path"]).parent.name for s in main) == SCENARIOS
    for row in main:
        scenario = Scenario(Path(row["path"]).parent.name)
        assert row["session"] == scenario.session_id
        assert row["verdict"]["verdict"] == EXPECTED[scenario.name][0]
        assert row["version"] == "2.1.332" and row["size"] == scenario.transcript.stat().st_size
        assert row["cwd"] == f"/tmp/sesstool-claude-lane/{scenario.name}/work" and row["last_time"]
    check_golden(EXPECTED_DIR / "list.json", result.stdout)
    human = sesstool("list", "fixtures/claude")
    check_golden(EXPECTED_DIR / "list.txt", human.stdout)


def test_validate_a_home_covers_subagent_files(sesstool: Sesstool) -> None:
    result = sesstool("validate", "--format", "json", "fixtures/claude/projects")
    doc = json.loads(result.stdout)
    rules = {f["rule"] for file in doc["files"] for f in file["findings"]}
    assert "claude-subagent-dangling" in rules
    assert result.exit_code == 1  # the corrupt fixtures fail at --fail-on error


SUBAGENT_SCENARIOS = [n for n in SCENARIOS if Scenario(n).subagents]
SIDE_FILES = [p for n in SUBAGENT_SCENARIOS for p in Scenario(n).subagents]


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", SUBAGENT_SCENARIOS)
def test_inspect_shows_a_sessions_subagent_files_with_it(sesstool: Sesstool, name: str, zstd: bool) -> None:
    """Issue 17: subagent transcripts are part of their session: inspect reads each one and shows
    its verdict, size and the calls it leaves without result — what an independent scan of the
    file alone says."""
    scenario = Scenario(name)
    main = zstd_twin(scenario.transcript) if zstd else scenario.transcript
    sides = [zstd_twin(p) if zstd else p for p in scenario.subagents]
    doc = json.loads(sesstool("inspect", "--json", _rel(main)).stdout)
    listed = doc["companions"]
    assert [c["path"] for c in listed] == [_rel(p) for p in sides] != []
    text = sesstool("inspect", _rel(main)).stdout
    for entry, raw_side, side in zip(listed, scenario.subagents, sides, strict=True):
        scan = scan_file(raw_side, subagent=True)
        assert entry["encoding"] == ("zstd" if zstd else "raw") and entry["size"] == side.stat().st_size
        assert entry["verdict"]["verdict"] == scan.verdict
        facts = entry["claude"]
        assert facts["subagent_file"] is True and facts["session_id"] == scenario.session_id
        assert (facts["lines"], facts["entries"]) == (scan.lines, scan.entries)
        assert [c["id"] for c in facts["tool_calls"]["left_open"]] == [c.id for c in scan.left_open]
        assert [f["rule"] for f in entry["findings"]] == [f.rule for f in scan.findings]
        assert {f["address"]["file"] for f in entry["findings"]} == {_rel(side)}
        row = next(line for line in text.splitlines() if line.startswith("agent file") and side.name in line)
        assert f"{side.name}: {scan.verdict} · {scan.lines} lines" in row
        for call in scan.left_open:
            assert f"{call.name} {call.id} (line {call.line})" in row
    alone = json.loads(sesstool("inspect", "--json", _rel(sides[0])).stdout)
    assert "companions" not in alone  # a subagent's file has no side files of its own


def test_the_killed_subagents_open_call_is_listed(sesstool: Sesstool) -> None:
    """kill-subagent: the CLI was killed while the subagent's Bash call ran; that call stays open
    in the subagent's file (resume leaves it, §0), and inspect of the session says so."""
    doc = json.loads(sesstool("inspect", "--json", _rel(Scenario("kill-subagent").transcript)).stdout)
    (side,) = doc["companions"]
    assert [c["id"] for c in side["claude"]["tool_calls"]["left_open"]] == ["toolu_lane_subslow_0"]
    assert "claude-subagent-dangling" in {f["rule"] for f in side["findings"]}
    clean = json.loads(sesstool("inspect", "--json", _rel(Scenario("subagent").transcript)).stdout)
    assert [c["claude"]["tool_calls"]["left_open"] for c in clean["companions"]] == [[]]
    alone = sesstool("inspect", "--json", _rel(Scenario("tool-one").transcript))
    assert "companions" not in json.loads(alone.stdout)


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_validate_reads_a_transcripts_subagent_files_with_it_once(sesstool: Sesstool, zstd: bool) -> None:
    """validate of a session checks its subagent files too, each once, findings under its path,
    however the paths are given."""
    scenario = Scenario("kill-subagent")
    main = _rel(zstd_twin(scenario.transcript) if zstd else scenario.transcript)
    (side_path,) = scenario.subagents
    side = _rel(zstd_twin(side_path) if zstd else side_path)
    both = ([main], [main, side], [side, main], [main, str(Path(side).parent)], [str(Path(main).parent)])
    for args in both:
        result = sesstool("validate", "--format", "json", *args)
        assert result.exit_code == 0, result.stderr
        doc = json.loads(result.stdout)
        paths = [f["path"] for f in doc["files"]]
        assert sorted(paths) == sorted([main, side]), args
        checked = doc["files"][paths.index(side)]
        assert "claude-subagent-dangling" in {f["rule"] for f in checked["findings"]}
        assert {f["address"]["file"] for f in checked["findings"]} == {side}


@pytest.mark.parametrize("side", SIDE_FILES + [zstd_twin(p) for p in SIDE_FILES], ids=lambda p: p.name)
def test_a_subagent_file_alone(sesstool: Sesstool, side: Path) -> None:
    """Goldens of a subagent's file read on its own: inspect (text, JSON) and validate."""
    kind = "zstd" if side.name.endswith(".zstd") else "raw"
    golden = EXPECTED_DIR / side.relative_to(CLAUDE).parts[1] / "subagents"
    human = sesstool("inspect", _rel(side))
    assert human.exit_code == 0, human.stderr
    check_golden(golden / f"{kind}.inspect.txt", human.stdout)
    doc = sesstool("inspect", "--json", _rel(side))
    assert json.loads(doc.stdout)["claude"]["subagent_file"] is True
    check_golden(golden / f"{kind}.inspect.json", doc.stdout)
    result = sesstool("validate", "--format", "json", _rel(side))
    assert result.exit_code == 0, result.stderr
    check_golden(golden / f"{kind}.validate.json", result.stdout)


def test_a_subagent_file_that_is_no_transcript_is_named(sesstool: Sesstool, tmp_path: Path) -> None:
    """A side file that cannot be read is shown with why (inspect) and fails validate under its
    own path; the session itself is still read."""
    scenario = Scenario("subagent")
    home = tmp_path / "project"
    shutil.copytree(scenario.transcript.parent, home)
    bad = home / scenario.session_id / "subagents" / "agent-zz.jsonl"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not a transcript\n")
    main = home / scenario.transcript.name
    human = sesstool("inspect", str(main))
    assert human.exit_code == 0, human.stderr
    assert "agent file  agent-zz.jsonl: not read (" in human.stdout
    doc = json.loads(sesstool("inspect", "--json", str(main)).stdout)
    assert doc["verdict"]["verdict"] == "clean"
    found = sorted(bad.parent.glob("agent-*.jsonl"))
    assert [c["path"] for c in doc["companions"]] == [str(p) for p in found]
    assert doc["companions"][-1]["path"] == str(bad) and doc["companions"][-1]["error"]
    result = sesstool("validate", "--format", "json", str(main))
    assert result.exit_code == 1, result.stderr
    files = json.loads(result.stdout)["files"]
    assert files[0]["path"] == str(main) and files[-1]["path"] == str(bad) and files[-1]["error"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_zstd_findings_address_their_frame(sesstool: Sesstool, name: str) -> None:
    """In a zstd transcript a finding names the frame its line was decoded from and the offset
    in the decoded plaintext (as a dsh log's zstd findings do); the raw file's findings are the
    same, at the same lines and offsets, without a frame. The twins hold eight lines a frame."""
    from tests.claude_lane.twins import LINES_PER_FRAME

    scenario = Scenario(name)
    raw = json.loads(sesstool("validate", "--format", "json", _rel(scenario.transcript)).stdout)
    packed = json.loads(sesstool("validate", "--format", "json", _rel(zstd_twin(scenario.transcript))).stdout)
    plain = [f for f in raw["files"][0]["findings"] if f["rule"] != "torn-tail"]
    framed = [f for f in packed["files"][0]["findings"] if f["rule"] != "zstd-torn-frame"]
    assert [(f["rule"], f["address"]["line"], f["address"]["offset"]) for f in framed] == [
        (f["rule"], f["address"]["line"], f["address"]["offset"]) for f in plain
    ]
    assert all(f["address"]["frame"] is None for f in plain)
    for f in framed:
        assert f["address"]["frame"] == (f["address"]["line"] - 1) // LINES_PER_FRAME, f
    text = sesstool("validate", _rel(zstd_twin(scenario.transcript))).stdout
    for f in framed:
        at = f["address"]
        where = f"decoded byte {at['offset']}, " if at["offset"] is not None else ""
        assert f":{at['line']} ({where}frame {at['frame']})" in text


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", SUBAGENT_SCENARIOS)
def test_inspect_shows_each_subagents_meta_file(sesstool: Sesstool, name: str, zstd: bool) -> None:
    """A subagent's ``agent-<id>.meta.json`` (its type, description, the Agent call that started
    it) is shown after its file's row and on the subagent file's own screen; ``--json`` carries
    the object as written."""
    scenario = Scenario(name)
    main = zstd_twin(scenario.transcript) if zstd else scenario.transcript
    doc = json.loads(sesstool("inspect", "--json", _rel(main)).stdout)
    assert "sidecar" not in doc  # a main transcript has none
    text = sesstool("inspect", _rel(main)).stdout
    for entry, raw_side in zip(doc["companions"], scenario.subagents, strict=True):
        meta = raw_side.with_name(raw_side.name.removesuffix(".jsonl") + ".meta.json")
        content = json.loads(meta.read_bytes())
        side = Path(entry["path"])
        assert entry["sidecar"] == {"path": str(side.with_name(meta.name)), "content": content}
        rows = text.splitlines()
        at = next(i for i, line in enumerate(rows) if line.startswith("agent file") and side.name in line)
        assert rows[at + 1].startswith(f"agent meta  {meta.name}: {content['agentType']} · “")
        assert f"started by call {content['toolUseId']}" in rows[at + 1]
        alone = sesstool("inspect", entry["path"]).stdout
        assert rows[at + 1] in alone.splitlines()
        alone_doc = json.loads(sesstool("inspect", "--json", entry["path"]).stdout)
        assert alone_doc["sidecar"] == entry["sidecar"]


def test_a_killed_subagents_meta_has_no_finished_mark(sesstool: Sesstool) -> None:
    text = sesstool("inspect", _rel(Scenario("kill-subagent").transcript)).stdout
    assert next(r for r in text.splitlines() if r.startswith("agent meta")).endswith(" · no finished mark")
    text = sesstool("inspect", _rel(Scenario("subagent").transcript)).stdout
    assert next(r for r in text.splitlines() if r.startswith("agent meta")).endswith(" · finished")


def test_a_damaged_or_hostile_meta_file_never_stops_inspect(sesstool: Sesstool, tmp_path: Path) -> None:
    """A meta file that is not one small JSON object is named with why; its strings reach the
    terminal escaped; the transcripts are read as before."""
    scenario = Scenario("subagent")
    home = tmp_path / "project"
    shutil.copytree(scenario.transcript.parent, home)
    (side,) = (home / scenario.session_id / "subagents").glob("agent-*.jsonl")
    meta = side.with_name(side.name.removesuffix(".jsonl") + ".meta.json")
    main = home / scenario.transcript.name
    clean = json.loads(sesstool("inspect", "--json", str(main)).stdout)
    meta.write_bytes(b"[not an object")
    doc = json.loads(sesstool("inspect", "--json", str(main)).stdout)
    assert doc["companions"][0]["sidecar"]["path"] == str(meta)
    assert doc["companions"][0]["sidecar"]["error"].startswith("not JSON: ")
    doc["companions"][0].pop("sidecar")
    clean["companions"][0].pop("sidecar")
    assert doc == clean
    human = sesstool("inspect", str(main))
    assert human.exit_code == 0
    assert f"agent meta  {meta.name}: not read (not JSON: " in human.stdout
    meta.write_bytes(json.dumps({"agentType": "x\x1b[31mred", "description": "a\nb\u2028c"}).encode())
    human = sesstool("inspect", str(side))
    row = next(r for r in human.stdout.splitlines() if r.startswith("agent meta"))
    assert "\x1b" not in human.stdout and "\u2028" not in human.stdout
    assert row == f"agent meta  {meta.name}: x\\x1b[31mred · “a\\nb\\u2028c” · no finished mark"
    meta.unlink()
    meta.symlink_to(side)
    doc = json.loads(sesstool("inspect", "--json", str(side)).stdout)
    assert doc["sidecar"] == {"path": str(meta), "error": "a symbolic link (not followed)"}
