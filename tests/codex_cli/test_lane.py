"""Judged by the real Codex CLI 0.171.0 (issue 16): every scenario is recorded afresh, then

* sesstool's verdict and dangling calls match what the rollout holds;
* ``derive`` equals the history in the first request ``codex exec resume`` sends;
* ``codex exec resume`` accepts every ``sesstool repair`` output and sends the same history it
  sent for the unrepaired rollout (the closing outputs of a parallel batch move behind the
  batch's real outputs: docs/format.md "Codex rollouts");
* a ``sesstool fork`` output resumes as its own thread;
* a ``sesstool repair --salvage`` output is accepted and rebuilt as Codex rebuilt the damaged
  rollout (and a recovered interleaved output is sent as written).
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from sesstool.dialects.codex.naming import fork_name, new_thread_id
from tests.codex_cli.driver import Home, Lane
from tests.codex_cli.scenarios import SCENARIOS, Recorded, copy_home, resume_input
from tests.conftest import run_sesstool

INTERRUPTED = {
    "kill-during-command",
    "kill-parallel-half",
    "kill-mid-stream",
    "sigterm-during-command",
}


@pytest.fixture(scope="session")
def recorded(lane: Lane) -> dict[str, Recorded]:
    return {name: scenario(lane) for name, scenario in SCENARIOS.items()}


def _lines(path: Path) -> list[dict[str, Any]]:
    import zstandard

    data = path.read_bytes()
    if path.name.endswith(".zst"):
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _held(path: Path) -> tuple[list[str], list[str]]:
    """What the rollout holds, read naively: calls without outputs, turns without an end."""
    calls: list[str] = []
    outputs: set[str] = set()
    started: list[str] = []
    ended: set[str] = set()
    for line in _lines(path):
        payload = line["payload"]
        kind = payload.get("type") if isinstance(payload, dict) else None
        item = line["type"] == "response_item"
        if item and kind in ("function_call", "custom_tool_call", "local_shell_call"):
            calls.append(payload["call_id"])
        elif item and kind in ("function_call_output", "custom_tool_call_output"):
            outputs.add(payload["call_id"])
        elif line["type"] == "event_msg" and kind == "task_started":
            started.append(payload["turn_id"])
        elif line["type"] == "event_msg" and kind in ("task_complete", "turn_aborted"):
            ended.add(payload["turn_id"])
    return [c for c in calls if c not in outputs], [t for t in started if t not in ended]


def _inspect(path: Path) -> dict[str, Any]:
    result = run_sesstool("inspect", "--json", str(path))
    assert result.exit_code == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def _derive(path: Path) -> list[dict[str, Any]]:
    result = run_sesstool("derive", "--format", "json", str(path))
    assert result.exit_code == 0, result.stderr
    items: list[dict[str, Any]] = json.loads(result.stdout)["messages"]
    return items


def _resume(
    lane: Lane, rec: Recorded, scratch: Path, thread_id: str, rollout: Path | None = None
) -> list[dict[str, Any]]:
    """Resume ``thread_id`` in a fresh home holding ``rec``'s rollouts (or ``rollout`` in place
    of the recorded one); returns the first request's input."""
    home = copy_home(rec.home, scratch)
    if rollout is not None:
        target = home.rollout_of(rec.thread_id)
        target.unlink()
        shutil.copyfile(rollout, target.parent / rollout.name)
    run, sent = resume_input(lane, home, thread_id)
    assert run.requests, f"codex exec resume refused it: {run.stderr[-800:]} {run.events}"
    return sent


def _history(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request minus what Codex builds from configuration: the base instructions first,
    the new prompt last."""
    assert sent[0]["role"] == "developer" and sent[-1]["role"] == "user"
    return sent[1:-1]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_verdict_and_dangling_calls_match_the_file(recorded: dict[str, Recorded], name: str) -> None:
    rec = recorded[name]
    dangling, open_turns = _held(rec.rollout)
    doc = _inspect(rec.rollout)
    assert [c["call_id"] for c in doc["codex"]["dangling"]] == dangling
    assert len(doc["codex"]["open_turns"]) == len(open_turns)
    assert doc["verdict"]["verdict"] == ("interrupted" if dangling or open_turns else "clean")
    assert (name in INTERRUPTED) == bool(dangling or open_turns)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_derive_is_the_resumed_history(
    lane: Lane, recorded: dict[str, Recorded], lane_root: Path, name: str
) -> None:
    rec = recorded[name]
    sent = _resume(lane, rec, lane_root / "derive" / name, rec.thread_id)
    assert _derive(rec.rollout) == _history(sent)


@pytest.mark.parametrize("name", sorted(INTERRUPTED))
def test_repair_output_resumes_with_the_same_history(
    lane: Lane, recorded: dict[str, Recorded], lane_root: Path, name: str
) -> None:
    rec = recorded[name]
    work = lane_root / "repair" / name
    work.mkdir(parents=True)
    out = work / rec.rollout.name
    result = run_sesstool("repair", str(rec.rollout), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    before = _history(_resume(lane, rec, work / "before", rec.thread_id))
    after = _history(_resume(lane, rec, work / "after", rec.thread_id, out))
    closers = _inspect(rec.rollout)["repair"]["closers"]
    moved = {c["payload"]["id"] for c in closers if c["type"] == "response_item"}
    assert after == [i for i in before if i.get("id") not in moved] + [
        i for i in before if i.get("id") in moved
    ]
    if name != "kill-parallel-half":
        assert after == before
    assert _derive(out) == after


@pytest.mark.parametrize("name", ["text", "kill-during-command", "compressed"])
def test_fork_resumes_as_its_own_thread(
    lane: Lane, recorded: dict[str, Recorded], lane_root: Path, name: str
) -> None:
    rec = recorded[name]
    work = lane_root / "fork" / name
    work.mkdir(parents=True)
    child_id = new_thread_id(int(time.time() * 1000), random.getrandbits(74))
    child = work / fork_name(rec.rollout.name, child_id, rec.rollout.name.endswith(".zst"))
    result = run_sesstool("fork", str(rec.rollout), "--id", child_id, "-o", str(child))
    assert result.exit_code == 0, result.stderr
    home = Home(path=work / "home", work=rec.home.work)
    target = home.path / rec.rollout.relative_to(rec.home.path).parent / child.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(rec.home.path / "config.toml", home.path / "config.toml")
    shutil.copyfile(child, target)
    run, sent = resume_input(lane, home, child_id)
    assert run.thread_id == child_id
    assert _history(sent) == _derive(child)
    assert _inspect(child)["codex"]["forked_from_id"] == rec.thread_id


# The committed fixtures the lane cannot record afresh (byte-level damage, other call kinds):
# their repairs are judged by the real CLI too, in a fresh home.
FIXTURE_REPAIRS = ["torn-tail", "custom-tool-dangling", "local-shell-dangling", "kill-parallel-half"]


def _resume_file(lane: Lane, scratch: Path, rollout: Path, thread_id: str) -> list[dict[str, Any]]:
    home = lane.new_home(scratch.name, extra="")
    target = home.sessions / "2026" / "12" / "01" / rollout.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(rollout, target)
    run, sent = resume_input(lane, home, thread_id)
    assert run.requests, f"codex exec resume refused {rollout.name}: {run.stderr[-800:]}"
    return sent


def _fixture(name: str) -> tuple[Path, str]:
    """A committed fixture rollout and its thread id."""
    from tests.dialects.codex._support import rollout as fixture_rollout

    source = fixture_rollout(name)
    return source, json.loads(source.read_bytes().split(b"\n", 1)[0])["payload"]["id"]


@pytest.mark.parametrize("name", FIXTURE_REPAIRS)
def test_repaired_fixtures_resume_with_the_same_history(lane: Lane, lane_root: Path, name: str) -> None:
    source, thread_id = _fixture(name)
    work = lane_root / "fixture-repair" / name
    work.mkdir(parents=True)
    out = work / "repaired" / source.name
    out.parent.mkdir()
    result = run_sesstool("repair", str(source), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    derived_before, derived_after = _derive(source), _derive(out)
    before = _resume_file(lane, work / f"{name}-before", source, thread_id)[1 : 1 + len(derived_before)]
    after = _resume_file(lane, work / f"{name}-after", out, thread_id)[1 : 1 + len(derived_after)]
    assert before == derived_before and after == derived_after
    moved = {
        c["payload"]["id"] for c in _inspect(source)["repair"]["closers"] if c["type"] == "response_item"
    }
    kept = [i for i in before if i.get("id") not in moved]
    assert after == kept + [i for i in before if i.get("id") in moved]


# repair --salvage (docs/format.md "Salvage of a rollout"): the salvaged file is accepted and
# Codex rebuilds from it exactly what it rebuilt from the damaged file, which is what sesstool
# derives from the salvaged one.
SALVAGES = ["interleaved-half-line", "nul-run", "undecodable-line", "torn-tail-resumed"]


def _salvage(source: Path, work: Path) -> Path:
    out = work / "salvaged" / source.name
    out.parent.mkdir(parents=True)
    result = run_sesstool("repair", "--salvage", str(source), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert Path(str(out) + ".dropped").exists() and Path(str(out) + ".dropped.json").exists()
    return out


@pytest.mark.parametrize("name", SALVAGES)
def test_salvaged_fixtures_resume_with_the_same_history(lane: Lane, lane_root: Path, name: str) -> None:
    source, thread_id = _fixture(name)
    work = lane_root / "fixture-salvage" / name
    out = _salvage(source, work)
    derived = _derive(out)
    before = _resume_file(lane, work / f"{name}-before", source, thread_id)
    after = _resume_file(lane, work / f"{name}-after", out, thread_id)
    assert after[1 : 1 + len(derived)] == derived
    assert before[1 : 1 + len(derived)] == derived


def test_a_salvaged_interleaved_output_resumes_answered(lane: Lane, lane_root: Path) -> None:
    """#24425 on the output line: Codex drops the line and sends "aborted" for the call; the
    salvage recovers the complete output written after the fragment, and Codex sends it."""
    from tests.dialects.codex._support import rollout as fixture_rollout

    clean = fixture_rollout("tool-call")
    lines = clean.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"function_call_output"' in line)
    work = lane_root / "salvage-output"
    work.mkdir(parents=True)
    source = work / clean.name
    source.write_bytes(b"".join([*lines[:at], lines[at][:150] + lines[at], *lines[at + 1 :]]))
    thread_id = json.loads(lines[0])["payload"]["id"]
    out = _salvage(source, work)
    assert out.read_bytes() == clean.read_bytes()
    before = _resume_file(lane, work / "before", source, thread_id)
    after = _resume_file(lane, work / "after", out, thread_id)
    derived = _derive(out)
    assert after[1 : 1 + len(derived)] == derived
    outputs = [i["output"] for i in derived if i["type"] == "function_call_output"]
    sent_before = [i["output"] for i in before if i.get("type") == "function_call_output"]
    assert outputs and "aborted" not in outputs and sent_before == ["aborted"]


def test_a_legacy_rollout_is_refused_as_sesstool_says(lane: Lane, lane_root: Path) -> None:
    """The hand-written pre-envelope fixture: Codex 0.171 finds it by name and refuses it as
    empty (no line decodes), which is what sesstool's codex-legacy-rollout says."""
    from tests.dialects.codex._support import rollout as fixture_rollout

    source = fixture_rollout("legacy-pre-envelope")
    thread_id = json.loads(source.read_bytes().split(b"\n", 1)[0])["id"]
    home = lane.new_home("legacy-pre-envelope", extra="")
    target = home.sessions / "2025" / "06" / "02" / source.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    run, _ = resume_input(lane, home, thread_id)
    assert not run.requests and run.returncode != 0
    assert f"rollout at {target} is empty" in run.stderr, run.stderr[-800:]
    doc = _inspect(source)
    assert doc["verdict"]["verdict"] == "unsupported"
    assert [f["rule"] for f in doc["findings"]] == ["codex-legacy-rollout"]
