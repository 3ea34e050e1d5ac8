"""The v0 → v1 upgrade step (spec §1.3 "v0 → v1"): golden pairs, refusals, the CLI edge and
properties.

Fixtures: ``fixtures/migrate/v0-to-v1/<case>/in.jsonl`` → ``out.jsonl`` (both full logs, valid at
their versions), and ``refuse-<case>/in.jsonl`` + ``expected-error.txt`` (the exact refusal, one
line). Refresh the expected files with ``SESSTOOL_UPDATE_GOLDENS=1`` and read the diff.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.jsonline import loads
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.core.upgrade import Rec, UpgradeRefused
from sesstool.core.upgrade.chain import chain, step_for
from sesstool.core.upgrade.records import decode_records, encode_header, encode_records
from sesstool.core.upgrade.v1 import STEP, legacy_message_id
from sesstool.dialects.registry import open_scanner
from tests.conftest import FIXTURES, UPDATE_GOLDENS, Sesstool, check_golden, examples

CASES = FIXTURES / "migrate" / "v0-to-v1"
PAIRS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("refuse-"))
REFUSALS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and p.name.startswith("refuse-"))

# sesstool's v0 scanner validates message shapes strictly and does not yet accept the
# pre-identity forms a v0 reader normalises in memory (§1.3): these inputs report
# message-shape errors, so `validate` and `migrate` refuse them before the step runs.


# -- helpers ------------------------------------------------------------------------------------


def split(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    lines = data.split(b"\n")
    assert lines[-1] == b"", "a fixture log ends with a newline"
    header = loads(lines[0])
    assert isinstance(header, dict)
    return header, lines[1:-1]


def migrate_bytes(data: bytes) -> bytes:
    """One step through the real codec, as the engine runs it."""
    header, body = split(data)
    recs = STEP.run(header, decode_records(body))
    lines = encode_records(recs, STEP.target)
    return encode_header(STEP.header(header)) + b"".join(lines)


def refusal(data: bytes) -> UpgradeRefused:
    with pytest.raises(UpgradeRefused) as info:
        migrate_bytes(data)
    return info.value


def scan(data: bytes, collect: bool = False) -> Any:
    scanner = open_scanner("<memory>", ScanOptions(collect_messages=collect))
    scanner.feed_lines(data.split(b"\n")[:-1], 0, 1, None)
    return scanner.finish(None)


def errors(result: Any) -> list[str]:
    return [f"[{f.rule}] {f.message}" for f in result.findings if f.severity is Severity.ERROR]


# -- golden pairs and refusals ------------------------------------------------------------------


def test_corpus_present() -> None:
    assert len(PAIRS) >= 15 and len(REFUSALS) >= 10


@pytest.mark.parametrize("case", PAIRS)
def test_golden_pair(case: str) -> None:
    out = migrate_bytes((CASES / case / "in.jsonl").read_bytes())
    check_golden(CASES / case / "out.jsonl", out)


@pytest.mark.parametrize("case", REFUSALS)
def test_refusal(case: str) -> None:
    err = refusal((CASES / case / "in.jsonl").read_bytes())
    path = CASES / case / "expected-error.txt"
    message = str(err)
    assert err.step == "session-format-v0-to-v1"
    if case != "refuse-header-unknown-key":  # a header refusal names no event
        assert err.seq is not None and err.event_type is not None, message
    if UPDATE_GOLDENS:
        path.write_text(message + "\n")
        return
    assert message == path.read_text().rstrip("\n")


@pytest.mark.parametrize("case", PAIRS)
def test_output_validates_at_v1(sesstool: Sesstool, case: str) -> None:
    result = sesstool("validate", f"fixtures/migrate/v0-to-v1/{case}/out.jsonl")
    assert result.exit_code == 0, result.stdout
    assert "(v1," in result.stdout


@pytest.mark.parametrize("case", PAIRS)
def test_input_validates_at_v0(sesstool: Sesstool, case: str) -> None:
    result = sesstool("validate", f"fixtures/migrate/v0-to-v1/{case}/in.jsonl")
    assert result.exit_code == 0, result.stdout
    assert "(v0," in result.stdout


@pytest.mark.parametrize("case", PAIRS)
def test_cli_migrate(sesstool: Sesstool, tmp_path: Path, case: str) -> None:
    source = tmp_path / "in.jsonl"
    shutil.copyfile(CASES / case / "in.jsonl", source)
    target = tmp_path / "out.jsonl"
    result = sesstool("migrate", str(source), "--to", "1", "-o", str(target))
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes() == (CASES / case / "out.jsonl").read_bytes()
    assert source.read_bytes() == (CASES / case / "in.jsonl").read_bytes()


@pytest.mark.parametrize("case", REFUSALS)
def test_cli_refusal(sesstool: Sesstool, tmp_path: Path, case: str) -> None:
    """The CLI refuses every refusal fixture and writes nothing. Where the v0 scan of the source
    is clean, the refusal is the step's own, word for word; elsewhere the scan refuses first."""
    data = (CASES / case / "in.jsonl").read_bytes()
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    target = tmp_path / "out.jsonl"
    result = sesstool("migrate", str(source), "--to", "1", "-o", str(target))
    assert not target.exists()
    if errors(scan(data)):
        assert result.exit_code in (3, 4), result.stderr
    else:
        assert result.exit_code == 4, result.stderr
        expected = (CASES / case / "expected-error.txt").read_text().rstrip("\n")
        assert expected in " ".join(result.stderr.split()), result.stderr


def test_cli_binary(tmp_path: Path) -> None:
    """The installed entry point, once, end to end."""
    import subprocess
    import sys

    source = tmp_path / "session.jsonl"
    shutil.copyfile(CASES / "e9" / "in.jsonl", source)
    exe = Path(sys.executable).parent / "sesstool"
    target = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [str(exe), "migrate", str(source), "--to", "1", "-o", str(target)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == (CASES / "e9" / "out.jsonl").read_bytes()


# -- the step's contract ------------------------------------------------------------------------


def test_step_identity() -> None:
    assert step_for(0) is STEP
    assert [s.name for s in chain(0, 1)] == ["session-format-v0-to-v1"]
    assert (STEP.source, STEP.target) == (0, 1)


def test_header_changes_only_the_version() -> None:
    header = {
        "type": "session",
        "version": 0,
        "id": "k",
        "createdAt": 5,
        "cwd": "/w",
        "parentSession": "p",
        "seedLength": 3,
        "origin": "subagent",
        "delegationDepth": 1,
        "agentPreset": "code",
    }
    out = STEP.header(header)
    assert out == {**header, "version": 1}
    assert header["version"] == 0  # a new dict


@pytest.mark.parametrize(
    ("patch", "detail"),
    [
        ({"sandboxMode": "x"}, "keys the released v0 codec refuses: ['sandboxMode']"),
        ({"isSeeded": True}, "keys the released v0 codec refuses: ['isSeeded']"),
        ({"version": 1}, "not a format v0 session header"),
        ({"delegationDepth": None}, None),
    ],
)
def test_header_refusals(patch: dict[str, Any], detail: str | None) -> None:
    header: dict[str, Any] = {
        "type": "session",
        "version": 0,
        "id": "k",
        "createdAt": 5,
        "delegationDepth": 0,
    }
    header.update(patch)
    header = {k: v for k, v in header.items() if v is not None}
    with pytest.raises(UpgradeRefused) as info:
        STEP.header(header)
    assert info.value.seq is None
    assert detail is None or detail in str(info.value)


def test_untouched_records_keep_their_bytes_and_objects() -> None:
    """A record nobody edits is the same Rec (raw bytes kept) — packed rows included."""
    _, body = split((CASES / "e9" / "in.jsonl").read_bytes())
    header = {"type": "session", "version": 0, "id": "s1", "createdAt": 1000, "delegationDepth": 0}
    recs = list(decode_records(body))
    out = list(STEP.run(header, iter(recs)))
    assert all(a is b for a, b in zip(out, recs, strict=True))
    packed = [r for r in out if len(r.events) > 1]
    assert (
        len(packed) == 1 and packed[0].raw is not None and packed[0].raw.startswith(b'{"type":"text-chunks"')
    )


def test_streaming() -> None:
    """The step pulls one record per record it yields: nothing is buffered."""
    _, body = split((CASES / "turn-start-trigger" / "in.jsonl").read_bytes())
    header = {"type": "session", "version": 0, "id": "s1", "createdAt": 1000, "delegationDepth": 0}
    pulled = 0

    def source() -> Iterator[Rec]:
        nonlocal pulled
        for rec in decode_records(body):
            pulled += 1
            yield rec

    stream = STEP.run(header, source())
    first = next(stream)
    assert pulled == 1 and first.raw is None and first.events[0]["data"] == {"turn": 1}
    next(stream)
    assert pulled == 2


def test_legacy_ids_are_deterministic() -> None:
    assert legacy_message_id("s1", 6) == "legacy-message:s1:6"
    data = (CASES / "steering-bare" / "in.jsonl").read_bytes()
    assert migrate_bytes(data) == migrate_bytes(data)


def test_replacement_inherits_the_id_of_its_start() -> None:
    out = (CASES / "tool-result-pre-identity" / "out.jsonl").read_bytes()
    _, body = split(out)
    events = [e for rec in decode_records(body) for e in rec.events]
    appended = next(e for e in events if e["type"] == "tool/result" and e["surfaceOp"] == "append")
    replaced = next(e for e in events if e["type"] == "tool/result" and e["surfaceOp"] != "append")
    assert appended["data"]["message"]["id"] == legacy_message_id("s1", appended["seq"])
    assert replaced["data"]["message"]["id"] == appended["data"]["message"]["id"]
    assert replaced["surfaceOp"]["start"] == appended["seq"]


def test_steering_without_surface_op_is_appended() -> None:
    for case in ("steering-bare", "steering-wrapped"):
        _, body = split((CASES / case / "out.jsonl").read_bytes())
        steer = [loads(line) for line in body if b'"u-steer"' in line or b"legacy-message" in line]
        assert len(steer) == 1 and steer[0]["type"] == "user/message" and steer[0]["surfaceOp"] == "append"


# -- properties ---------------------------------------------------------------------------------


def _valid_v0_logs() -> list[Path]:
    """E9 and every raw repo fixture that is a complete v0 log without errors."""
    logs = [CASES / "e9" / "in.jsonl"]
    for path in sorted((FIXTURES / "dsh").glob("*/session.jsonl")):
        data = path.read_bytes()
        if not data.endswith(b"\n") or not data.startswith(b'{"type":"session","version":0,'):
            continue
        result = scan(data)
        if result.version == 0 and not errors(result) and result.tail.kind == "none":
            logs.append(path)
    return logs


V0_LOGS = _valid_v0_logs()
V0_IDS = [p.parent.name for p in V0_LOGS]
REFUSED_V0 = {"unknown-ignorable"}  # E7: the closed inventory refuses an ignorable unknown


def test_property_corpus() -> None:
    names = set(V0_IDS)
    assert {"e9", "clean-multiturn", "chunks-packed", "compaction", "forked-child"} <= names


@pytest.mark.parametrize("log", [p for p in V0_LOGS if p.parent.name not in REFUSED_V0], ids=str)
def test_repo_fixture_migrates(log: Path) -> None:
    """A canonical v0 log changes only in its header — and in the one legacy-compaction gap a
    canonical log can still show: a compact-plugin summary source without its group id."""
    data = log.read_bytes()
    out = migrate_bytes(data)
    _, before = split(data)
    _, after = split(out)
    assert len(before) == len(after)
    for a, b in zip(before, after, strict=True):
        if a == b:
            continue
        old, new = loads(a), loads(b)
        source = new["data"]["source"]
        assert old["type"] == "user/message" and source["kind"] == "plugin" and source["plugin"] == "compact"
        del source["compactionId"]
        assert new == old
    assert not errors(scan(out))


def test_unknown_ignorable_fixture_refuses() -> None:
    err = refusal((FIXTURES / "dsh" / "unknown-ignorable" / "session.jsonl").read_bytes())
    assert err.seq == 30 and err.event_type == "acme/telemetry"
    assert "closed first-party v0 inventory" in str(err)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _legacy_forms(lines: list[bytes]) -> list[tuple[int, str]]:
    """(index, form) of every event a legacy writer could have written differently."""
    forms: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        ev = loads(line)
        t, data = ev.get("type"), ev.get("data")
        if "seq" not in ev or not isinstance(data, dict):
            continue  # packed rows
        op = ev.get("surfaceOp")
        if t == "user/message" and op == "append" and set(data) == {"id", "role", "source", "content"}:
            forms += [(i, "user-pre-identity"), (i, "steering-bare"), (i, "steering-wrapped")]
        elif t == "assistant/message" and set(data.get("message", {})) == {"id", "role", "content", "source"}:
            forms.append((i, "assistant-pre-identity"))
        elif t == "tool/result" and _canonical_result(data):
            forms.append((i, "tool-pre-identity"))
        elif t == "turn/start":
            forms.append((i, "trigger"))
        elif t.startswith("compaction/") and (t != "compaction/start" or "compactionId" in data):
            forms.append((i, "compact-name"))
        elif t == "request/header":
            forms.append((i, "message-prefix"))
        elif t == "turn/end" and data["reason"] in (
            {"kind": "aborted", "reason": {"kind": "legacy"}},
            {"kind": "aborted", "reason": {"kind": "disposed"}},
        ):
            forms.append((i, "turn-end"))
    return forms


def _canonical_result(data: dict[str, Any]) -> bool:
    message = data.get("message", {})
    if set(message) != {"id", "role", "source", "content"} or len(message["content"]) != 1:
        return False
    block = message["content"][0]
    return set(block) == {"type", "toolCallId", "content", "isError"} and isinstance(block["isError"], bool)


def _legacy(ev: dict[str, Any], form: str, turn: int) -> dict[str, Any]:
    """``ev`` as a legacy v0 writer would have written it."""
    ev = json.loads(json.dumps(ev))
    data = ev["data"]
    if form == "user-pre-identity":
        ev["data"] = {k: v for k, v in data.items() if k not in ("id", "role")}
    elif form == "steering-bare":
        ev["type"] = "steering/message"
        ev["data"] = {"turn": turn, "content": data["content"], "source": data["source"]}
        del ev["surfaceOp"]
    elif form == "steering-wrapped":
        ev["type"] = "steering/message"
        ev["data"] = {"turn": turn, "message": data}
        del ev["surfaceOp"]
    elif form == "assistant-pre-identity":
        message = data.pop("message")
        provenance = {k: v for k, v in message["source"].items() if k != "kind"}
        ev["data"] = {
            "turn": data.pop("turn"),
            "step": data.pop("step"),
            "content": message["content"],
            "provenance": provenance,
            **data,
        }
    elif form == "tool-pre-identity":
        message = data.pop("message")
        block = message["content"][0]
        ev["data"] = {
            "turn": data.pop("turn"),
            "step": data.pop("step"),
            "callId": message["source"]["callId"],
            "content": block["content"],
            "isError": block["isError"],
            **data,
        }
    elif form == "trigger":
        ev["data"] = {**data, "trigger": {"kind": "user"}}
    elif form == "compact-name":
        ev["type"] = "compact/" + ev["type"].split("/", 1)[1]
    elif form == "message-prefix":
        ev["data"] = {**data, "header": {**data["header"], "messagePrefix": []}}
    elif form == "turn-end":
        inner = data["reason"]["reason"]["kind"]
        ev["data"] = {**data, "reason": {"kind": "aborted" if inner == "legacy" else "disposed"}}
    return ev


@st.composite
def legacy_logs(draw: st.DrawFn) -> tuple[Path, bytes, dict[int, str]]:
    """A valid v0 log with a random subset of its events in legacy form (one form each)."""
    log = draw(st.sampled_from([p for p in V0_LOGS if p.parent.name not in REFUSED_V0]))
    data = log.read_bytes()
    header, lines = split(data)
    candidates = _legacy_forms(lines)
    chosen: dict[int, str] = {}
    for i, form in draw(st.lists(st.sampled_from(candidates), unique=True)) if candidates else []:
        chosen.setdefault(i, form)
    # A legacy tool-result replacement inherits a legacy id, and a writer that replaced a legacy
    # result was itself legacy: start and replacement are legacy together or not at all.
    index = {loads(line).get("seq"): j for j, line in enumerate(lines)}
    for i, line in enumerate(lines):
        ev = loads(line)
        op = ev.get("surfaceOp")
        if ev.get("type") == "tool/result" and isinstance(op, dict):
            start = index[op["start"]]
            if (chosen.get(i) == "tool-pre-identity") != (chosen.get(start) == "tool-pre-identity"):
                chosen.pop(i, None)
                chosen.pop(start, None)
    out: list[bytes] = []
    turn = 0
    for i, line in enumerate(lines):
        ev = loads(line)
        if ev.get("type") == "turn/start":
            turn = ev["data"]["turn"]
        out.append(_dumps(_legacy(ev, chosen[i], turn)) if i in chosen else line)
    return log, encode_header(header) + b"".join(line + b"\n" for line in out), chosen


def _derived(data: bytes) -> list[tuple[str, Any]]:
    result = scan(data, collect=True)
    return [(m["role"], m["content"]) for m in result.messages]


def _without_ids(line: bytes) -> Any:
    ev = loads(line)
    data = ev["data"]
    message = data if ev["type"] == "user/message" else data.get("message")
    if isinstance(message, dict):
        message["id"] = "*"
    return ev


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legacy_logs())
def test_property_legacy_forms_normalise(case: tuple[Path, bytes, dict[int, str]]) -> None:
    log, legacy, chosen = case
    canonical = log.read_bytes()
    expected = migrate_bytes(canonical)
    out = migrate_bytes(legacy)
    _, exp_lines = split(expected)
    _, out_lines = split(out)
    # event counts unchanged (packed rows stay rows)
    assert len(out_lines) == len(exp_lines)
    assert sum(len(r.events) for r in decode_records(out_lines)) == scan(canonical).stats.events
    # the v1 result validates and derives the same messages (roles, content) as the original
    result = scan(out)
    assert result.version == 1 and not errors(result)
    assert _derived(out) == _derived(canonical)
    for i, (got, want) in enumerate(zip(out_lines, exp_lines, strict=True)):
        form = chosen.get(i)
        if form is None:
            assert got == want  # untouched records: byte-identical
        elif form.endswith("pre-identity") or form == "steering-bare":
            assert _without_ids(got) == _without_ids(want)
        else:
            assert loads(got) == loads(want)
