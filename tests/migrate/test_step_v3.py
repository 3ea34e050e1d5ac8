"""The v2 → v3 upgrade step (spec §1.3 "v2 → v3", E9): golden pairs, refusals, properties over
the repository's v2 logs and synthetic ones, and streaming memory.

Fixtures: ``fixtures/migrate/v2-to-v3/<case>/in.jsonl`` → ``out.jsonl`` and
``refuse-<case>/in.jsonl`` + ``expected-error.txt`` (see the README there). Refresh the expected
files with ``SESSTOOL_UPDATE_GOLDENS=1`` and read the diff.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.jsonline import dumps
from sesstool.core.upgrade import UpgradeRefused
from sesstool.core.upgrade.chain import run_chain, step_for
from sesstool.core.upgrade.records import decode_records, encode_header, encode_records
from sesstool.core.upgrade.v2 import STEP as V1_TO_V2
from sesstool.core.upgrade.v3 import STEP, system_message_id
from sesstool.store.run_spill import RunSpill
from tests.conftest import FIXTURES, Sesstool, check_golden, examples
from tests.migrate.test_step_v2 import (
    Builder,
    align,
    check_references,
    check_refusal,
    derived,
    errors,
    events_of,
    measure,
    message_keys,
    no_error_findings,
    scan,
    split,
    upgrade,
    v1_logs,
    validate_json,
)

CASES = FIXTURES / "migrate" / "v2-to-v3"
PAIRS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("refuse-"))
REFUSALS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and p.name.startswith("refuse-"))
DSH = FIXTURES / "dsh"
_RENAMED = {"tool/code-dispatch": "tool/ptc-dispatch", "tool/code-dispatch-start": "tool/ptc-dispatch-start"}


def same_type(before: str, after: str) -> bool:
    return _RENAMED.get(before, before) == after


def check_v2_to_v3(source: bytes) -> bytes:
    """Upgrade a valid v2 log and check every property the step promises."""
    before = scan(source, collect=True)
    assert before.version == 2 and not errors(before), errors(before)
    out = upgrade(STEP, source)
    after = scan(out, collect=True)
    assert after.version == 3
    assert not errors(after), errors(after)
    src, dst = events_of(source), events_of(out)
    mapping, extra = align(
        src,
        dst,
        consumed=lambda e: False,
        generated=lambda e: e["type"] == "system/message",
        same_type=same_type,
    )
    # only system/message events are added; nothing is dropped
    assert len(dst) == len(src) + len(extra)
    check_references(src, dst, mapping)
    # one empty head after the first step/start, then exactly one replacement per prompt change
    prompt, changes = "", 0
    for ev in src:
        if ev["type"] == "request/header":
            system = ev["data"]["header"].get("system", "")
            if system != prompt:
                prompt, changes = system, changes + 1
    has_step = any(e["type"] == "step/start" for e in src)
    assert len(extra) == (1 + changes if has_step else 0)
    head = None
    for ev in extra:
        message = ev["data"]["message"]
        anchor = ev["seq"] - 1 if head is None else ev["seq"] + 1  # step/start before, header after
        anchor_event = src[next(k for k, v in mapping.items() if v == anchor)]
        assert message["id"] == system_message_id(
            split(source)[0]["id"], anchor_event["seq"], anchor_event["type"]
        )
        assert ev["time"] == anchor_event["time"]
        if head is not None:
            assert ev["sourceEventSeqs"] == [head]
            assert ev["surfaceOp"] == {"op": "replace", "startSeq": head, "endSeq": head}
        head = ev["seq"]
    # the derived messages gain only the system head (shown when the last prompt is not empty)
    v2_messages = message_keys(before)
    v3_messages = message_keys(after)
    assert [m for m in v3_messages if m[1] != "system"] == v2_messages
    systems = [m for m in v3_messages if m[1] == "system"]
    if prompt:
        assert v3_messages[0][1:] == ("system", [{"type": "text", "text": prompt}])
        assert len(systems) == 1
    else:
        assert systems == []
    # no request header keeps a prompt or an empty tools/adapterDefaults
    for ev in dst:
        if ev["type"] == "request/header":
            header = ev["data"]["header"]
            assert (
                "system" not in header and header.get("tools") != [] and header.get("adapterDefaults") != {}
            )
    return out


# -- golden pairs and refusals ------------------------------------------------------------------


@pytest.mark.parametrize("case", PAIRS)
def test_golden_pair(case: str) -> None:
    source = (CASES / case / "in.jsonl").read_bytes()
    check_golden(CASES / case / "out.jsonl", upgrade(STEP, source))


@pytest.mark.parametrize("case", PAIRS)
def test_golden_pair_properties(case: str) -> None:
    check_v2_to_v3((CASES / case / "in.jsonl").read_bytes())


@pytest.mark.parametrize("case", REFUSALS)
def test_refusal(case: str) -> None:
    check_refusal(STEP, CASES / case)


def test_goldens_validate(sesstool: Sesstool) -> None:
    for case in PAIRS:
        for name, version in (("in.jsonl", 2), ("out.jsonl", 3)):
            report = validate_json(sesstool, CASES / case / name)
            assert report["files"][0]["version"] == version
            assert no_error_findings(report) == [], (case, name)


def test_goldens_derive_the_same_messages_plus_the_head(sesstool: Sesstool) -> None:
    """`derive` after the step = before it, plus at most the system head in front."""
    for case in PAIRS:
        before = derived(sesstool, CASES / case / "in.jsonl")
        after = derived(sesstool, CASES / case / "out.jsonl")
        head = [m for m in after if m[1] == "system"]
        assert len(head) <= 1 and after[len(head) :] == before, case
        if head:
            assert after[0] == head[0] and head[0][0].startswith("v2-to-v3-system-")


def test_e9_is_the_spec_example() -> None:
    v2 = (DSH / "v2-tiny" / "session.v2.jsonl").read_bytes()
    assert upgrade(STEP, v2) == (DSH / "v3-tiny" / "session.v3.jsonl").read_bytes()


def test_e9_ids() -> None:
    """The ids printed in §12 E9."""
    assert system_message_id("s1", 1, "step/start") == (
        "v2-to-v3-system-36701ab3bbdb7fb02e9bffbb652f9ba6b175dbfc31464e99d49c6241a50600f2"
    )
    payload = json.dumps(["session-format-v2-to-v3", "s1", 3, "request/header"], separators=(",", ":"))
    expected = "v2-to-v3-system-" + hashlib.sha256(payload.encode()).hexdigest()
    assert system_message_id("s1", 3, "request/header") == expected
    assert expected.endswith("3d5f41ea83ec64d4274004a588bfd7da473b8c01ac3da9d9f92a17fd766da935")


def test_chain_finds_the_step() -> None:
    step = step_for(2)
    assert (step.name, step.source, step.target) == ("session-format-v2-to-v3", 2, 3)
    assert step is STEP


def test_header_preset() -> None:
    header = {
        "type": "session",
        "version": 2,
        "id": "x",
        "createdAt": 1,
        "isSeeded": False,
        "delegationDepth": 0,
    }
    assert STEP.header({**header, "agentPreset": "code"})["agentPreset"] == "ptc"
    assert STEP.header({**header, "agentPreset": "coder"})["agentPreset"] == "coder"
    assert STEP.header(header) == {**header, "version": 3}
    assert encode_header(STEP.header({**header, "agentPreset": "code"})) == (
        b'{"type":"session","version":3,"id":"x","createdAt":1,"isSeeded":false,'
        b'"delegationDepth":0,"agentPreset":"ptc"}\n'
    )


def test_untouched_records_keep_their_bytes() -> None:
    source = (CASES / "e9" / "in.jsonl").read_bytes()
    header, body = split(source)
    recs = list(STEP.run(header, decode_records(body)))
    assert [r.raw for r in recs[:2]] == body[:2]  # before the head nothing moves
    assert all(r.raw is None for r in recs[2:])


# -- properties over the repository's v2 logs and synthetic ones --------------------------------


def repository_v2_logs() -> list[tuple[str, bytes]]:
    logs = [("dsh/v2-tiny", (DSH / "v2-tiny" / "session.v2.jsonl").read_bytes())]
    for path in sorted((FIXTURES / "migrate" / "v1-to-v2").glob("*/out.jsonl")):
        logs.append((f"v1-to-v2/{path.parent.name}", path.read_bytes()))
    return logs


@pytest.mark.parametrize(
    ("name", "data"), repository_v2_logs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_repository_v2_log_properties(name: str, data: bytes) -> None:
    events = events_of(data)
    surface = [
        i for i, e in enumerate(events) if e["type"] in ("user/message", "assistant/message", "tool/result")
    ]
    steps = [i for i, e in enumerate(events) if e["type"] == "step/start"]
    if surface and (not steps or surface[0] < steps[0]):  # e.g. e10: a user message between turns
        with pytest.raises(UpgradeRefused, match="a surface event before the first step"):
            upgrade(STEP, data)
        return
    check_v2_to_v3(data)


_MODEL = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}
prompts = st.sampled_from([None, "", "A", "B", " "])


@st.composite
def v2_logs(draw: st.DrawFn) -> bytes:
    """Valid v2 logs: request headers (prompts changing inside steps, unchanged between them),
    messages, tool calls, PTC dispatches, attempts, a compaction, references, a seeded cut."""
    turns = draw(
        st.lists(
            st.lists(st.tuples(prompts, st.booleans(), st.booleans()), max_size=3), min_size=1, max_size=3
        )
    )
    seeded = draw(st.booleans())
    cut_after = draw(st.integers(1, len(turns)))
    preset = draw(st.sampled_from([None, "code", "plan"]))
    header: dict[str, Any] = {
        "type": "session",
        "version": 2,
        "id": draw(st.sampled_from(["s", "ü/1"])),
        "createdAt": 1,
    }
    if seeded:
        header["parentSession"] = "p"
    header["isSeeded"] = seeded
    header["delegationDepth"] = 0
    if preset:
        header["agentPreset"] = preset
    b = Builder(header)
    if draw(st.booleans()):
        b.ev("agent-preset/selected", {"agentPreset": draw(st.sampled_from(["code", "ptc", "x"]))})
    surface: list[int] = []
    prompt = ""
    for t, steps in enumerate(turns, start=1):
        b.ev("turn/start", {"turn": t})
        if draw(st.booleans()):  # between steps: allowed only while the prompt stays
            system = {"system": prompt} if prompt else {}
            b.ev(
                "request/header",
                {"header": {"config": {"provider": "p", "model": "m"}, **system}, "reason": "resume"},
            )
        for s, (system_prompt, tool, attempt) in enumerate(steps, start=1):
            b.ev("step/start", {"turn": t, "step": s})
            if s == 1:
                content = [{"type": "text", "text": f"q{t}"}]
                surface.append(
                    b.ev(
                        "user/message",
                        {"id": f"u{t}", "role": "user", "source": {"kind": "user"}, "content": content},
                        surfaceOp="append",
                    )
                )
            request: dict[str, Any] = {"config": {"provider": "p", "model": "m"}, "tools": []}
            if system_prompt is not None:
                request["system"] = system_prompt
            b.ev("request/header", {"header": request, "reason": "initial"})
            prompt = system_prompt or ""
            if attempt:
                stream = [
                    {
                        "type": "chunk",
                        "time": b.time,
                        "chunk": {"type": "finish", "reason": {"kind": "error"}},
                    }
                ]
                b.ev("assistant/attempt", {"turn": t, "step": s, "stream": stream})
            message: dict[str, Any] = {
                "id": f"a{t}.{s}",
                "role": "assistant",
                "content": [],
                "source": _MODEL,
            }
            text_stream = [{"type": "text-chunks", "time0": b.time, "index": 0, "dt": [], "texts": ["ok"]}]
            message["content"].append({"type": "text", "text": "ok"})
            if tool:
                message["content"].append(
                    {"type": "tool-call", "id": f"k{t}.{s}", "name": "run_code", "arguments": "{}"}
                )
            surface.append(
                b.ev(
                    "assistant/message",
                    {"turn": t, "step": s, "message": message, "stream": text_stream},
                    surfaceOp="append",
                )
            )
            if tool:
                cid = f"k{t}.{s}"
                call = b.ev(
                    "tool/call", {"turn": t, "step": s, "callId": cid, "name": "run_code", "arguments": "{}"}
                )
                b.ev("tool/code-dispatch-start", {"turn": t, "step": s, "callId": cid})
                b.ev(
                    "tool/code-dispatch",
                    {"turn": t, "step": s, "callId": cid, "content": [{"type": "text", "text": "2"}]},
                )
                result = {
                    "id": f"t{t}.{s}",
                    "role": "user",
                    "source": {"kind": "tool", "callId": cid},
                    "content": [{"type": "tool-result", "toolCallId": cid, "content": [], "isError": True}],
                }
                surface.append(
                    b.ev(
                        "tool/result",
                        {"turn": t, "step": s, "message": result, "error": {"name": "E", "code": "X"}},
                        sourceEventSeqs=[call],
                        surfaceOp="append",
                    )
                )
            b.ev("step/end", {"turn": t, "step": s})
        b.ev("turn/end", {"turn": t, "reason": {"kind": "completed"}})
        if seeded and t == cut_after:
            b.ev("session/end-seed", {"inherited": True})
        if t == 1 and len(surface) >= 2 and draw(st.booleans()):
            nodes = list(surface)
            run = b.ev("command/run", {"commandId": "c", "command": "compact"})
            b.ev(
                "compaction/summary",
                {
                    "compactionId": "c1",
                    "summary": [{"type": "text", "text": "sum"}],
                    "shadowedRange": {"start": nodes[0], "end": nodes[-1]},
                    "shadowedSeqs": nodes,
                    "shadowedTokenCount": 1,
                    "provider": "p",
                    "model": "m",
                },
            )
            source = {"kind": "plugin", "plugin": draw(st.sampled_from(["compact", "tools-code-mode"]))}
            surface = [
                b.ev(
                    "user/message",
                    {"id": "sum", "role": "user", "source": source, "content": []},
                    sourceEventSeqs=nodes,
                    surfaceOp={"op": "replace", "start": nodes[0], "end": nodes[-1]},
                )
            ]
            b.ev("command/done", {"commandId": "c", "sourceEventSeq": run})
    if surface:
        b.ev("session/title", {"title": "t", "messageSeqs": surface[:2]})
    return b.data()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v2_logs())
def test_synthetic_v2_logs(source: bytes) -> None:
    check_v2_to_v3(source)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v1_logs())
def test_synthetic_v1_logs_through_the_chain(source: bytes) -> None:
    """v1 → v2 → v3 composed lazily, as the engine runs them."""
    header, body = split(source)
    new_header, recs = run_chain([V1_TO_V2, STEP], header, decode_records(body))
    out = encode_header(new_header) + b"".join(encode_records(recs, 3))
    result = scan(out, collect=True)
    assert result.version == 3 and not errors(result), errors(result)
    v1_messages = message_keys(scan(source, collect=True))
    assert [m for m in message_keys(result) if m[1] != "system"] == v1_messages


# -- streaming ----------------------------------------------------------------------------------


def big_v2_log(events: int) -> Iterator[bytes]:
    seq, time, turn = 0, 1_000, 0

    def line(t: str, data: Any, **extra: Any) -> bytes:
        nonlocal seq, time
        time += 1
        out = dumps({"type": t, "seq": seq, "time": time, "data": data, **extra})
        seq += 1
        return out

    while seq < events:
        turn += 1
        yield line("turn/start", {"turn": turn})
        for step in (1, 2, 3):
            yield line("step/start", {"turn": turn, "step": step})
            if step == 1:
                content = [{"type": "text", "text": "go"}]
                yield line(
                    "user/message",
                    {"id": f"u{turn}", "role": "user", "source": {"kind": "user"}, "content": content},
                    surfaceOp="append",
                )
            header = {"config": {"provider": "p", "model": "m"}, "system": f"prompt {turn % 3}", "tools": []}
            yield line("request/header", {"header": header, "reason": "change"})
            message = {"id": f"a{turn}.{step}", "role": "assistant", "content": [], "source": _MODEL}
            yield line(
                "assistant/message",
                {"turn": turn, "step": step, "message": message, "stream": []},
                surfaceOp="append",
            )
            yield line("step/end", {"turn": turn, "step": step})
        yield line("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


@pytest.mark.slow
def test_streams_a_large_log() -> None:
    header = {
        "type": "session",
        "version": 2,
        "id": "big",
        "createdAt": 1,
        "isSeeded": False,
        "delegationDepth": 0,
    }
    # the step as the engine runs it: its maps past a fixed size in the run's spill (a changed
    # request/header per step: a generated id and a change of the renumbering each)
    size, count, peak = measure(STEP.with_spill(RunSpill()), header, big_v2_log(200_000))
    assert size > 20_000_000 and count > 200_000
    assert peak < 2_000_000, f"peak {peak} bytes for {size} input bytes: the step holds the log"


def test_refusals_are_lazy_but_complete() -> None:
    """A refusal surfaces while the stream is consumed, before anything after it is produced."""
    source = (CASES / "refuse-prompt-change-outside-step" / "in.jsonl").read_bytes()
    header, body = split(source)
    produced: list[str] = []
    with pytest.raises(UpgradeRefused, match="outside an open step"):
        for rec in STEP.run(header, decode_records(body)):
            produced.append(rec.events[0]["type"])
    assert produced.count("request/header") == 1  # the first one; the refused one never appears
