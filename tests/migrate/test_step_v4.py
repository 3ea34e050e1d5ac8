"""The v3 → v4 upgrade step (spec §1.3 "v3 → v4"): golden pairs, refusals, the CLI edge and
properties.

Fixtures: ``fixtures/migrate/v3-to-v4/<case>/in.jsonl`` → ``out.jsonl`` and
``refuse-<case>/in.jsonl`` + ``expected-error.txt``. Refresh with ``SESSTOOL_UPDATE_GOLDENS=1``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core.jsonline import loads
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.core.upgrade import Rec, UpgradeRefused
from sesstool.core.upgrade.chain import chain, step_for
from sesstool.core.upgrade.records import decode_records, encode_header, encode_records
from sesstool.core.upgrade.v4 import FIRST_PARTY_PRODUCERS, STEP, direct_kind
from sesstool.dialects.registry import open_scanner
from tests.conftest import FIXTURES, UPDATE_GOLDENS, Sesstool, examples

CASES = FIXTURES / "migrate" / "v3-to-v4"
PAIRS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("refuse-"))
REFUSALS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and p.name.startswith("refuse-"))
HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "createdAt": 1000,
    "isSeeded": False,
    "delegationDepth": 0,
}


def split(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    lines = data.split(b"\n")
    assert lines[-1] == b"", "a fixture log ends with a newline"
    header = loads(lines[0])
    assert isinstance(header, dict)
    return header, lines[1:-1]


def migrate_bytes(data: bytes) -> bytes:
    header, body = split(data)
    recs = STEP.run(header, decode_records(body))
    lines = encode_records(recs, STEP.target)
    return encode_header(STEP.header(header)) + b"".join(lines)


def scan(data: bytes, collect: bool = False) -> Any:
    scanner = open_scanner("<memory>", ScanOptions(collect_messages=collect))
    scanner.feed_lines(data.split(b"\n")[:-1], 0, 1, None)
    return scanner.finish(None)


def errors(result: Any) -> list[str]:
    return [f"[{f.rule}] {f.message}" for f in result.findings if f.severity is Severity.ERROR]


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def log_bytes(events: list[dict[str, Any]], header: dict[str, Any] | None = None) -> bytes:
    return b"".join(dumps(o) + b"\n" for o in [header or HEADER, *events])


# -- golden pairs and refusals ------------------------------------------------------------------


def test_corpus_present() -> None:
    assert len(PAIRS) >= 6 and len(REFUSALS) >= 8


@pytest.mark.parametrize("case", PAIRS)
def test_golden_pair(case: str) -> None:
    out = migrate_bytes((CASES / case / "in.jsonl").read_bytes())
    path = CASES / case / "out.jsonl"
    if UPDATE_GOLDENS:
        path.write_bytes(out)
        return
    assert out == path.read_bytes(), f"output differs from {path}"


def test_e9_is_the_v4_tiny_fixture() -> None:
    """§12 E9: the v3 log plus the E9 v3 tool result becomes exactly the v4-tiny corpus log."""
    v4_tiny = (FIXTURES / "dsh" / "v4-tiny" / "session.v4.jsonl").read_bytes()
    assert migrate_bytes((CASES / "e9" / "in.jsonl").read_bytes()) == v4_tiny
    # and E9's v3 rows are the v3-tiny corpus log
    v3_tiny = (FIXTURES / "dsh" / "v3-tiny" / "session.v3.jsonl").read_bytes()
    assert (CASES / "e9" / "in.jsonl").read_bytes().startswith(v3_tiny)


@pytest.mark.parametrize("case", REFUSALS)
def test_refusal(case: str) -> None:
    with pytest.raises(UpgradeRefused) as info:
        migrate_bytes((CASES / case / "in.jsonl").read_bytes())
    message = str(info.value)
    assert info.value.step == "session-format-v3-to-v4"
    if case != "refuse-header-unknown-key":
        assert info.value.seq is not None and info.value.event_type is not None, message
    path = CASES / case / "expected-error.txt"
    if UPDATE_GOLDENS:
        path.write_text(message + "\n")
        return
    assert message == path.read_text().rstrip("\n")


@pytest.mark.parametrize("case", PAIRS)
@pytest.mark.parametrize(("name", "version"), [("in.jsonl", 3), ("out.jsonl", 4)])
def test_fixture_validates(sesstool: Sesstool, case: str, name: str, version: int) -> None:
    result = sesstool("validate", f"fixtures/migrate/v3-to-v4/{case}/{name}")
    assert result.exit_code == 0, result.stdout
    assert f"(v{version}," in result.stdout


@pytest.mark.parametrize("case", PAIRS)
def test_cli_migrate(sesstool: Sesstool, tmp_path: Path, case: str) -> None:
    source = tmp_path / "in.jsonl"
    shutil.copyfile(CASES / case / "in.jsonl", source)
    target = tmp_path / "out.jsonl"
    result = sesstool("migrate", str(source), "--to", "4", "-o", str(target))
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes() == (CASES / case / "out.jsonl").read_bytes()


@pytest.mark.parametrize("case", REFUSALS)
def test_cli_refusal(sesstool: Sesstool, tmp_path: Path, case: str) -> None:
    data = (CASES / case / "in.jsonl").read_bytes()
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    target = tmp_path / "out.jsonl"
    result = sesstool("migrate", str(source), "--to", "4", "-o", str(target))
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

    source = tmp_path / "session.v3.jsonl"
    shutil.copyfile(CASES / "e9" / "in.jsonl", source)
    target = tmp_path / "out.jsonl"
    exe = Path(sys.executable).parent / "sesstool"
    proc = subprocess.run(
        [str(exe), "migrate", str(source), "--to", "4", "-o", str(target)], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == (CASES / "e9" / "out.jsonl").read_bytes()


# -- the step's contract ------------------------------------------------------------------------


def test_step_identity() -> None:
    assert step_for(3) is STEP
    assert [s.name for s in chain(3, 4)] == ["session-format-v3-to-v4"]
    assert (STEP.source, STEP.target) == (3, 4)


def test_header_changes_only_the_version() -> None:
    header = {**HEADER, "cwd": "/w", "parentSession": "p", "isSeeded": True, "origin": "subagent"}
    assert STEP.header(header) == {**header, "version": 4}
    assert header["version"] == 3
    with pytest.raises(UpgradeRefused, match=r"\['seedLength'\]"):
        STEP.header({**HEADER, "seedLength": 3})
    with pytest.raises(UpgradeRefused, match="not a format v3 session header"):
        STEP.header({**HEADER, "version": 2})


# An independent transcription of the §1.3 table (plus the first-party list decided in
# fixtures/migrate/v3-to-v4/README.md), checked against the implementation.
SPEC_KINDS = {
    "compact": "compact-checkpoint",
    "tools-code-mode": "ptc-mode",
    "tools-ptc": "ptc-mode",
    "dsh-compaction-basic": "compact-basic",
}


def oracle_kind(plugin: str, role: str) -> str:
    if plugin == "@deepseek-ai/dsh-system-prompt":
        return "system-prompt" if role == "system" else "runtime-context"
    if plugin in SPEC_KINDS:
        return SPEC_KINDS[plugin]
    return plugin if plugin in FIRST_PARTY_PRODUCERS else f"plugin:{plugin}"


def test_source_table() -> None:
    assert direct_kind("@deepseek-ai/dsh-system-prompt", "system") == "system-prompt"
    assert direct_kind("@deepseek-ai/dsh-system-prompt", "user") == "runtime-context"
    for plugin, kind in SPEC_KINDS.items():
        assert direct_kind(plugin, "user") == kind
    assert {"goal", "team-message", "dsh-session-title-llm", "plan-mode"} <= FIRST_PARTY_PRODUCERS
    for plugin in FIRST_PARTY_PRODUCERS:
        assert direct_kind(plugin, "user") == plugin
    assert direct_kind("acme", "user") == "plugin:acme"
    assert direct_kind("plugin:acme", "user") == "plugin:plugin:acme"
    assert direct_kind("", "user") == "plugin:"


def test_untouched_records_are_passed_through() -> None:
    data = (CASES / "e9" / "in.jsonl").read_bytes()
    header, body = split(data)
    recs = list(decode_records(body))
    out = list(STEP.run(header, iter(recs)))
    pairs = list(zip(recs, out, strict=True))
    changed = [(r, o) for r, o in pairs if o is not r]
    assert [r.events[0]["type"] for r, _ in changed] == ["system/message", "system/message", "tool/result"]
    assert all(o.raw is None for _, o in changed)
    assert all(r.raw is not None for r, _ in pairs)


def test_streaming() -> None:
    _, body = split((CASES / "e9" / "in.jsonl").read_bytes())
    pulled = 0

    def source() -> Iterator[Rec]:
        nonlocal pulled
        for rec in decode_records(body):
            pulled += 1
            yield rec

    stream = STEP.run(HEADER, source())
    next(stream)
    assert pulled == 1


def _restart(
    splice: dict[str, Any] | None, *, step_open: bool = False, gap: bool = False
) -> list[dict[str, Any]]:
    """Turn 1 left open, then (optionally) a splice and turn 2."""
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 2, "data": {"turn": 1, "step": 1}},
    ]
    if not step_open:
        events.append({"type": "step/end", "seq": 2, "time": 3, "data": {"turn": 1, "step": 1}})
    if splice is not None:
        events.append({"type": "agent/inbox/spliced", "seq": 0, "time": 4, "data": splice})
    if gap:
        events.append({"type": "todo/write", "seq": 0, "time": 5, "data": {"todos": []}})
    events.append({"type": "turn/start", "seq": 0, "time": 6, "data": {"turn": 2}})
    for i, ev in enumerate(events):
        ev["seq"] = i
    return events


MSG = {"id": "u2", "role": "user", "source": {"kind": "user"}, "content": [{"type": "text", "text": "next"}]}


def _types(events: list[dict[str, Any]]) -> list[str]:
    out = migrate_bytes(log_bytes(events))
    _, body = split(out)
    return [e["type"] for rec in decode_records(body) for e in rec.events]


def test_restart_pattern_closes_the_turn() -> None:
    events = _restart({"target": "next-turn", "start": 0, "inserted": [MSG]})
    assert _types(events)[-2:] == ["turn/end", "turn/start"]
    out = migrate_bytes(log_bytes(events))
    _, body = split(out)
    closer, start = loads(body[-2]), loads(body[-1])
    assert closer == {
        "type": "turn/end",
        "seq": 4,
        "time": 6,
        "data": {"turn": 1, "reason": {"kind": "interrupted"}},
    }
    assert start["seq"] == 5


@pytest.mark.parametrize(
    ("splice", "kwargs"),
    [
        ({"target": "next-turn", "start": 0, "inserted": []}, {}),
        ({"target": "next-step", "start": 0, "inserted": [MSG]}, {}),
        ({"target": "next-turn", "start": 0, "inserted": [MSG]}, {"step_open": True}),
        ({"target": "next-turn", "start": 0, "inserted": [MSG]}, {"gap": True}),
        (None, {}),
    ],
    ids=["empty-splice", "next-step", "step-open", "not-immediately-before", "no-splice"],
)
def test_restart_pattern_needs_all_its_evidence(
    splice: dict[str, Any] | None, kwargs: dict[str, bool]
) -> None:
    """Without the complete evidence nothing is inserted: target validation reports the overlap."""
    events = _restart(splice, **kwargs)
    assert _types(events) == [e["type"] for e in events]


def test_unknown_ignorable_keeps_its_payload_and_surface_metadata() -> None:
    ev = {
        "type": "acme/thing",
        "seq": 0,
        "time": 1,
        "data": {"message": {"source": {"kind": "plugin", "plugin": "x"}}},
        "sourceEventSeqs": [0],
        "ignorable": True,
    }
    out = migrate_bytes(log_bytes([ev]))
    _, body = split(out)
    assert loads(body[0]) == {**ev, "type": "plugin:acme/thing"}


# -- properties ---------------------------------------------------------------------------------

PLUGINS = st.one_of(
    st.sampled_from(sorted({*SPEC_KINDS, "@deepseek-ai/dsh-system-prompt", *FIRST_PARTY_PRODUCERS})),
    st.text(min_size=0, max_size=12),
)
SOURCES = st.one_of(
    st.builds(lambda p: {"kind": "plugin", "plugin": p}, PLUGINS),
    st.builds(lambda p, f: {"kind": "plugin", "plugin": p, "form": f}, PLUGINS, st.sampled_from(["a", "b"])),
    st.builds(lambda k: {"kind": k}, st.sampled_from(["user", "acme-direct", "plugin:x", "goal"])),
)
TAGS = st.one_of(
    st.sampled_from(["text", "reasoning", "image", "file", "tool-call"]), st.text(min_size=1, max_size=8)
)
EXTRA_KEYS = st.dictionaries(st.sampled_from(["a", "b", "plugin:z", "kind"]), st.integers(0, 9), max_size=2)


@st.composite
def v3_logs(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, dict[str, Any]]]]:
    """A balanced v3 log: a system head, random plugin-sourced user messages with random
    content tags, one tool round whose result carries random wrapper/message extras."""
    events: list[dict[str, Any]] = []

    def add(t: str, data: dict[str, Any], **extra: Any) -> int:
        events.append({"type": t, "seq": len(events), "time": 100 + len(events), "data": data, **extra})
        return len(events) - 1

    add("turn/start", {"turn": 1})
    add("step/start", {"turn": 1, "step": 1})
    system_source = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}
    head = {"id": "sys", "role": "system", "content": [], "source": system_source}
    add("system/message", {"turn": 1, "step": 1, "message": head}, surfaceOp="append")
    users: list[tuple[int, dict[str, Any]]] = []
    for i in range(draw(st.integers(0, 6))):
        source = draw(SOURCES)
        tags = draw(st.lists(TAGS.filter(lambda t: t != "tool-result"), max_size=3))
        content = [{"type": t, "n": j} for j, t in enumerate(tags)]
        seq = add(
            "user/message",
            {"id": f"u{i}", "role": "user", "source": source, "content": content},
            surfaceOp="append",
        )
        users.append((seq, source))
    add("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})
    call = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}
    add(
        "assistant/message",
        {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "a1",
                "role": "assistant",
                "content": [call],
                "source": {"kind": "model", "provider": "p", "model": "m"},
            },
            "stream": [],
        },
        surfaceOp="append",
    )
    c = add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
    block: dict[str, Any] = {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "ok"}],
    }
    if draw(st.booleans()):
        block["isError"] = False
    block.update({k: v for k, v in draw(EXTRA_KEYS).items() if k != "kind"})
    message: dict[str, Any] = {
        "id": "t1",
        "role": "user",
        "source": {"kind": "tool", "callId": "c1"},
        "content": [block],
    }
    message.update({k: v for k, v in draw(EXTRA_KEYS).items() if k != "kind"})
    add("tool/result", {"turn": 1, "step": 1, "message": message}, sourceEventSeqs=[c], surfaceOp="append")
    add("step/end", {"turn": 1, "step": 1})
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return log_bytes(events), users


@settings(max_examples=examples(80), deadline=None)
@given(v3_logs())
def test_property_v3_to_v4(case: tuple[bytes, list[tuple[int, dict[str, Any]]]]) -> None:
    data, users = case
    assert not errors(scan(data))
    out = migrate_bytes(data)
    _, before = split(data)
    _, after = split(out)
    assert len(before) == len(after)  # seq-preserving: no closer needed here
    result = scan(out, collect=True)
    assert result.version == 4 and not errors(result), errors(result)
    events = [loads(line) for line in after]
    for (seq, source), ev in zip(users, [events[s] for s, _ in users], strict=True):
        kind = ev["data"]["source"]["kind"]
        if source["kind"] == "plugin":
            assert kind == oracle_kind(source["plugin"], "user")
            assert ev["data"]["source"] == {
                k: (kind if k == "kind" else v) for k, v in source.items() if k != "plugin"
            }
        else:
            assert ev["data"]["source"] == source
        for block, orig in zip(ev["data"]["content"], loads(before[seq])["data"]["content"], strict=True):
            tag = orig["type"]
            known = tag in ("text", "reasoning", "image", "file", "tool-call")
            assert block == (orig if known else {**orig, "type": f"plugin:{tag}"})
    for a, b in zip(before, after, strict=True):
        t = loads(a)["type"]
        if t not in ("system/message", "user/message", "tool/result"):
            assert a == b  # untouched records: byte-identical
        elif t == "user/message":
            data = loads(a)["data"]
            known = all(
                b["type"] in ("text", "reasoning", "image", "file", "tool-call") for b in data["content"]
            )
            assert (a == b) == (data["source"]["kind"] != "plugin" and known)
    message = next(e for e in events if e["type"] == "tool/result")["data"]["message"]
    orig = next(e for e in map(loads, before) if e["type"] == "tool/result")["data"]["message"]
    block = orig["content"][0]
    assert message == {
        "id": "t1",
        "role": "tool",
        "toolCallId": "c1",
        **({"isError": block["isError"]} if "isError" in block else {}),
        "source": orig["source"],
        "content": block["content"],
        **{
            f"plugin:result:{k}": v
            for k, v in block.items()
            if k not in ("type", "toolCallId", "content", "isError")
        },
        **{f"plugin:message:{k}": v for k, v in orig.items() if k not in ("id", "role", "source", "content")},
    }
    # derived messages keep their text
    texts = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert texts == [[{"type": "text", "text": "ok"}]]


def test_seeded_log_keeps_its_cut() -> None:
    """A forked v3 child: isSeeded and the tagged marker carry over; the cut does not move."""
    header = {
        "type": "session",
        "version": 3,
        "id": "k",
        "createdAt": 5,
        "parentSession": "p",
        "isSeeded": True,
        "delegationDepth": 0,
    }
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 2, "data": {"turn": 1, "reason": {"kind": "completed"}}},
        {"type": "session/end-seed", "seq": 2, "time": 3, "data": {"inherited": True}},
        {"type": "turn/start", "seq": 3, "time": 4, "data": {"turn": 2}},
        {"type": "turn/end", "seq": 4, "time": 5, "data": {"turn": 2, "reason": {"kind": "completed"}}},
    ]
    data = log_bytes(events, header)
    out = migrate_bytes(data)
    assert out == data.replace(b'"version":3', b'"version":4', 1)
    result = scan(out)
    assert not errors(result) and result.stats.lineage.inherited_events == 2
