"""The v1 → v2 upgrade step (spec §1.3 "v1 → v2", §4.5, E9, E10): golden pairs, refusals, the
CLI edge, properties over the repository's logs and synthetic ones, and streaming memory.

Fixtures: ``fixtures/migrate/v1-to-v2/<case>/in.jsonl`` → ``out.jsonl`` (full logs, valid at
their versions; the README there says what each case shows) and ``refuse-<case>/in.jsonl`` +
``expected-error.txt`` (the exact refusal, one line). Refresh the expected files with
``SESSTOOL_UPDATE_GOLDENS=1`` and read the diff.

The helpers without a ``test_`` prefix are shared with ``test_step_v3.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.core.jsonline import dumps, loads
from sesstool.core.options import ScanOptions
from sesstool.core.rules import Severity
from sesstool.core.upgrade import Rec, Step, UpgradeRefused
from sesstool.core.upgrade.chain import step_for
from sesstool.core.upgrade.records import decode_records, encode_header, encode_records
from sesstool.core.upgrade.v2 import STEP
from sesstool.dialects.registry import open_scanner
from tests.conftest import FIXTURES, ROOT, UPDATE_GOLDENS, Sesstool, check_golden, examples

CASES = FIXTURES / "migrate" / "v1-to-v2"
PAIRS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("refuse-"))
REFUSALS = sorted(p.name for p in CASES.iterdir() if p.is_dir() and p.name.startswith("refuse-"))
DSH = FIXTURES / "dsh"

Event = dict[str, Any]


# -- shared helpers -----------------------------------------------------------------------------


def split(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    lines = data.split(b"\n")
    assert lines[-1] == b"", "a log ends with a newline"
    header = loads(lines[0])
    assert isinstance(header, dict)
    return header, lines[1:-1]


def upgrade(step: Step, data: bytes) -> bytes:
    """One step through the real codec, as the engine runs it."""
    header, body = split(data)
    recs = step.run(header, decode_records(body))
    lines = encode_records(recs, step.target)
    return encode_header(step.header(header)) + b"".join(lines)


def events_of(data: bytes) -> list[Event]:
    """The logical events (packed rows expanded, ranges decoded)."""
    return [e for rec in decode_records(split(data)[1]) for e in rec.events]


def scan(data: bytes, collect: bool = False) -> Any:
    scanner = open_scanner("<memory>", ScanOptions(collect_messages=collect))
    scanner.feed_lines(data.split(b"\n")[:-1], 0, 1, None)
    return scanner.finish(None)


def errors(result: Any) -> list[str]:
    return [f"[{f.rule}] {f.message}" for f in result.findings if f.severity is Severity.ERROR]


def check_refusal(step: Step, case: Path) -> None:
    with pytest.raises(UpgradeRefused) as info:
        upgrade(step, (case / "in.jsonl").read_bytes())
    expected = case / "expected-error.txt"
    message = str(info.value)
    if UPDATE_GOLDENS:
        expected.write_text(message + "\n")
    assert message == expected.read_text().rstrip("\n")


def validate_json(sesstool: Sesstool, path: Path) -> dict[str, Any]:
    run = sesstool("validate", "--format", "json", str(path))
    report = json.loads(run.stdout)
    assert isinstance(report, dict)
    return report


def no_error_findings(report: dict[str, Any]) -> list[Any]:
    return [f for file in report["files"] for f in file["findings"] if f["severity"] == "error"]


def references(event: Event) -> list[tuple[str, Any]]:
    """Every declared reference of an event (spec §1.3), written independently of the step."""
    out: list[tuple[str, Any]] = [("sourceEventSeqs", s) for s in event.get("sourceEventSeqs") or []]
    op = event.get("surfaceOp")
    if isinstance(op, dict):
        out.append(("surfaceOp.start", op.get("start", op.get("startSeq"))))
        out.append(("surfaceOp.end", op.get("end", op.get("endSeq"))))
    data = event.get("data")
    if not isinstance(data, dict):
        return out
    t = event["type"]
    if t == "command/done" and "sourceEventSeq" in data:
        out.append(("sourceEventSeq", data["sourceEventSeq"]))
    if t in ("compaction/summary", "compaction/prune"):
        rng = data.get("shadowedRange") or {}
        out += [("shadowedRange.start", rng["start"]), ("shadowedRange.end", rng["end"])]
        out += [("shadowedSeqs", s) for s in data.get("shadowedSeqs", [])]
    if t in ("session/title", "session/title-llm-request"):
        out += [("messageSeqs", s) for s in data.get("messageSeqs", [])]
    return out


def align(
    src: list[Event],
    dst: list[Event],
    consumed: Callable[[Event], bool],
    generated: Callable[[Event], bool],
    same_type: Callable[[str, str], bool] = lambda a, b: a == b,
) -> tuple[dict[int, int], list[Event]]:
    """Match every surviving source event, in order, to the output event it became (same type
    up to renames, same time); every output event skipped on the way must be a generated one.
    Returns old seq → new seq and the generated events."""
    mapping: dict[int, int] = {}
    extra: list[Event] = []
    j = 0
    for ev in src:
        if consumed(ev):
            continue
        while not (same_type(ev["type"], dst[j]["type"]) and ev["time"] == dst[j]["time"]):
            assert generated(dst[j]), f"output event {dst[j]} does not come from the source nor the step"
            extra.append(dst[j])
            j += 1
        mapping[ev["seq"]] = dst[j]["seq"]
        j += 1
    for ev in dst[j:]:
        assert generated(ev), f"output event {ev} does not come from the source nor the step"
        extra.append(ev)
    return mapping, extra


def check_references(
    src: list[Event],
    dst: list[Event],
    mapping: dict[int, int],
    skip: Callable[[Event], bool] = lambda e: False,
) -> None:
    """Every remapped reference points at the event it pointed at before."""
    by_new = {e["seq"]: e for e in dst}
    for ev in src:
        if ev["seq"] not in mapping or skip(ev):
            continue
        after = by_new[mapping[ev["seq"]]]
        expected = [(label, mapping[v]) for label, v in references(ev)]
        assert references(after) == expected, (ev, after)


def message_keys(result: Any) -> list[tuple[Any, Any, Any]]:
    return [(m["id"], m["role"], m["content"]) for m in result.messages]


# -- the embedded stream, read back -------------------------------------------------------------

_DELTA = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}


def expand_stream(stream: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """§4.5 records back to (time, chunk) pairs."""
    out: list[tuple[int, dict[str, Any]]] = []
    for rec in stream:
        if rec["type"] == "chunk":
            out.append((rec["time"], rec["chunk"]))
            continue
        assert len(rec["dt"]) == len(rec.get("texts", rec.get("args", []))) - 1
        time = rec["time0"]
        members = rec["args"] if rec["type"] == "tool-call-chunks" else rec["texts"]
        for k, member in enumerate(members):
            if k:
                time += rec["dt"][k - 1]
            chunk: dict[str, Any] = {"type": _DELTA[rec["type"]], "index": rec["index"]}
            if rec["type"] == "tool-call-chunks":
                chunk["id"] = rec["id"]
                if "name" in rec:
                    chunk["name"] = rec["name"]
                chunk["argumentsDelta"] = member
            else:
                chunk["text"] = member
            out.append((time, chunk))
    return out


# -- v1 → v2 properties -------------------------------------------------------------------------

_GENERATED_V2 = ("assistant/attempt", "goal/change", "turn/end", "session/end-seed")


def check_v1_to_v2(source: bytes) -> bytes:
    """Upgrade a valid v1 log and check every property the step promises."""
    before = scan(source, collect=True)
    assert not errors(before), errors(before)
    out = upgrade(STEP, source)
    after = scan(out, collect=True)
    assert after.version == 2
    assert not errors(after), errors(after)
    # derived messages: ids, roles and contents unchanged
    assert message_keys(after) == message_keys(before)
    src, dst = events_of(source), events_of(out)
    mapping, extra = align(
        src,
        dst,
        consumed=lambda e: e["type"] == "assistant/chunk",
        generated=lambda e: e["type"] in _GENERATED_V2,
    )
    # counts change only by consumed chunks and inserted events
    chunks = [e for e in src if e["type"] == "assistant/chunk"]
    assert len(dst) == len(src) - len(chunks) + len(extra)
    assert all(e["type"] != "session/end-seed" or e["data"] == {"inherited": True} for e in extra)
    check_references(src, dst, mapping, skip=lambda e: e["type"] == "assistant/message")
    # streams: a claimed message holds exactly its cited chunks; every chunk lands in one stream
    by_seq = {e["seq"]: e for e in src}
    held = 0
    for ev in src:
        if ev["type"] == "assistant/message" and ev["seq"] in mapping:
            new = dst[mapping[ev["seq"]]]
            assert "sourceEventSeqs" not in new
            cited = [(by_seq[s]["time"], by_seq[s]["data"]["chunk"]) for s in ev.get("sourceEventSeqs") or []]
            assert expand_stream(new["data"]["stream"]) == cited
    for ev in dst:
        if ev["type"] in ("assistant/message", "assistant/attempt"):
            members = expand_stream(ev["data"]["stream"])
            held += len(members)
            if ev["type"] == "assistant/attempt":
                assert members and ev["time"] == members[-1][0]
    assert held == len(chunks)
    return out


# -- golden pairs and refusals ------------------------------------------------------------------


@pytest.mark.parametrize("case", PAIRS)
def test_golden_pair(case: str) -> None:
    source = (CASES / case / "in.jsonl").read_bytes()
    check_golden(CASES / case / "out.jsonl", upgrade(STEP, source))


@pytest.mark.parametrize("case", PAIRS)
def test_golden_pair_properties(case: str) -> None:
    check_v1_to_v2((CASES / case / "in.jsonl").read_bytes())


@pytest.mark.parametrize("case", REFUSALS)
def test_refusal(case: str) -> None:
    check_refusal(STEP, CASES / case)


def test_goldens_validate(sesstool: Sesstool) -> None:
    """Every output validates at v2 (and every input at v1) with no error finding."""
    for case in PAIRS:
        for name, version in (("in.jsonl", 1), ("out.jsonl", 2)):
            report = validate_json(sesstool, CASES / case / name)
            assert report["files"][0]["version"] == version
            assert no_error_findings(report) == [], (case, name)


def derived(sesstool: Sesstool, path: Path) -> list[tuple[Any, Any, Any]]:
    """``sesstool derive --format jsonl``: (id, role, content) of every derived message."""
    run = sesstool("derive", "--format", "jsonl", str(path))
    assert run.exit_code == 0, run.stderr
    messages = [json.loads(line) for line in run.stdout.splitlines() if line]
    return [(m["id"], m["role"], m["content"]) for m in messages]


def test_goldens_derive_the_same_messages(sesstool: Sesstool) -> None:
    """Message ids, roles and contents are unchanged by the step (compared with `derive`)."""
    for case in PAIRS:
        before = derived(sesstool, CASES / case / "in.jsonl")
        assert derived(sesstool, CASES / case / "out.jsonl") == before, case


def test_e9_is_the_spec_example() -> None:
    """§12 E9: the v1 log becomes exactly the v2 one (the dsh corpus holds both)."""
    v1 = (DSH / "v1-tiny" / "session.v1.jsonl").read_bytes()
    assert upgrade(STEP, v1) == (DSH / "v2-tiny" / "session.v2.jsonl").read_bytes()


def test_e10_cut_translation() -> None:
    out = (CASES / "e10-seeded-cut" / "out.jsonl").read_bytes()
    header, body = split(out)
    assert header["isSeeded"] is True and "seedLength" not in header
    marker = loads(body[3])
    assert (
        marker["type"] == "session/end-seed" and marker["seq"] == 3 and marker["data"] == {"inherited": True}
    )


def test_packed_rows_fold_like_unpacked_chunks() -> None:
    """Packed rows arrive as one record of expanded chunks: the result is the same."""
    packed = (CASES / "chunks-packed" / "out.jsonl").read_bytes()
    assert packed == (CASES / "chunks-unpacked" / "out.jsonl").read_bytes()


def test_chain_finds_the_step() -> None:
    step = step_for(1)
    assert (step.name, step.source, step.target) == ("session-format-v1-to-v2", 1, 2)
    assert step is STEP


def test_header() -> None:
    seeded = {
        "type": "session",
        "version": 1,
        "id": "k",
        "createdAt": 5,
        "seedLength": 0,
        "delegationDepth": 0,
    }
    assert STEP.header(seeded) == {
        "type": "session",
        "version": 2,
        "id": "k",
        "createdAt": 5,
        "delegationDepth": 0,
        "isSeeded": True,
    }
    assert encode_header(STEP.header(seeded)) == (
        b'{"type":"session","version":2,"id":"k","createdAt":5,"isSeeded":true,"delegationDepth":0}\n'
    )
    plain = {k: v for k, v in seeded.items() if k != "seedLength"}
    assert STEP.header(plain)["isSeeded"] is False
    assert seeded["version"] == 1  # the source header is not modified


def test_untouched_records_keep_their_bytes() -> None:
    """Records before the first change keep their original bytes (key order included)."""
    source = (CASES / "e9" / "in.jsonl").read_bytes()
    header, body = split(source)
    recs = list(STEP.run(header, decode_records(body)))
    assert [r.raw for r in recs[:4]] == body[:4]
    assert all(r.raw is None for r in recs[4:])


def test_cli_migrate_v1_to_v3(sesstool: Sesstool, tmp_path: Path) -> None:
    """The engine runs the chain and re-validates the output at the target version."""
    src = tmp_path / "session.v1.jsonl"
    src.write_bytes((CASES / "references" / "in.jsonl").read_bytes())
    for to in ("2", "3"):
        out = tmp_path / f"out{to}.jsonl"
        run = sesstool("migrate", str(src), "--to", to, "-o", str(out))
        assert run.exit_code == 0, run.stderr
        assert no_error_findings(validate_json(sesstool, out)) == []
    assert (tmp_path / "out2.jsonl").read_bytes() == (CASES / "references" / "out.jsonl").read_bytes()


def test_cli_migrate_refusal(sesstool: Sesstool, tmp_path: Path) -> None:
    src = tmp_path / "session.v1.jsonl"
    src.write_bytes((CASES / "refuse-uncited-message" / "in.jsonl").read_bytes())
    run = sesstool("migrate", str(src), "--to", "2", "-o", str(tmp_path / "out.jsonl"))
    assert run.exit_code == 4
    assert "does not cite its complete v1 chunk attempt" in run.stderr
    assert not (tmp_path / "out.jsonl").exists()


# -- properties over the repository's valid v1 logs ---------------------------------------------


def repository_v1_logs() -> list[tuple[str, bytes]]:
    """Valid v1 logs of the repository: the v1 corpus files, the inputs above, and the v0 corpus
    relabelled v1 where that is a valid v1 log (v0 and v1 rows are the same language)."""
    logs: list[tuple[str, bytes]] = []
    for path in sorted(DSH.glob("*/session*.jsonl")):
        data = path.read_bytes()
        first = data.split(b"\n", 1)[0]
        if b'"version":0,' in first:
            data = data.replace(b'"version":0,', b'"version":1,', 1)
        elif b'"version":1,' not in first:
            continue
        if not data.endswith(b"\n"):  # a torn tail: not a committed log
            continue
        try:
            result = scan(data)
        except Exception:  # pragma: no cover - a corpus file the scanner cannot read
            continue
        if result.verdict in ("clean", "interrupted") and not errors(result):
            logs.append((path.parent.name, data))
    return logs


REPO_V1 = repository_v1_logs()


def test_repository_has_v1_logs() -> None:
    assert len(REPO_V1) >= 5


@pytest.mark.parametrize("name", [n for n, _ in REPO_V1])
def test_repository_v1_log_properties(name: str) -> None:
    data = dict(REPO_V1)[name]
    if b"acme/telemetry" in data:  # an ignorable unknown: the closed inventory refuses it
        with pytest.raises(UpgradeRefused, match="unknown event type"):
            upgrade(STEP, data)
        return
    check_v1_to_v2(data)


# -- synthetic v1 logs --------------------------------------------------------------------------


class Builder:
    """Writes a v1 log one event at a time (optionally packing runs of ≥ 3 text deltas)."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.lines = [dumps(header)]
        self.seq = 0
        self.time = 1_000

    def ev(self, t: str, data: Any, gap: int = 1, **extra: Any) -> int:
        self.time += gap
        event = {"type": t, "seq": self.seq, "time": self.time, "data": data, **extra}
        self.lines.append(dumps(event))
        self.seq += 1
        return self.seq - 1

    def row(self, turn: int, step: int, index: int, dt: list[int], texts: list[str]) -> list[int]:
        self.time += 1
        data = {"turn": turn, "step": step, "index": index, "dt": dt, "texts": texts}
        self.lines.append(dumps({"type": "text-chunks", "seq0": self.seq, "time0": self.time, "data": data}))
        first = self.seq
        self.seq += len(texts)
        self.time += sum(dt)
        return list(range(first, self.seq))

    def data(self) -> bytes:
        return b"\n".join(self.lines) + b"\n"


_MODEL = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}

chunk_specs = st.one_of(
    st.tuples(st.just("text-delta"), st.sampled_from([0, 1]), st.sampled_from(["a", "bc", "", "ü"])),
    st.tuples(st.just("reasoning-delta"), st.just(0), st.sampled_from(["r", "s"])),
    st.tuples(
        st.just("tool-call-delta"),
        st.just(2),
        st.tuples(
            st.sampled_from(["c1", "c2", ""]),
            st.sampled_from([None, "bash", ""]),
            st.sampled_from(["{", "}"]),
        ),
    ),
    st.tuples(st.just("block-start"), st.sampled_from([0, 1]), st.just("text")),
    st.tuples(st.just("usage"), st.just(0), st.integers(0, 9)),
    st.tuples(st.just("text-run"), st.just(0), st.integers(3, 5)),  # text deltas a row may pack
)

attempts = st.lists(
    st.tuples(
        st.lists(st.tuples(chunk_specs, st.integers(-3, 40)), min_size=1, max_size=8),
        st.booleans(),  # ends with finish
        st.booleans(),  # pack a run of text deltas as a row
        st.booleans(),  # an unrelated event in the middle of the attempt
    ),
    max_size=3,
)

steps = st.lists(
    st.tuples(attempts, st.sampled_from(["claim", "empty", "absent", "none"]), st.booleans()),
    min_size=1,
    max_size=3,
)


@st.composite
def v1_logs(draw: st.DrawFn) -> bytes:
    turns = draw(st.lists(steps, min_size=1, max_size=3))
    seeded = draw(st.sampled_from([None, "at-cut", "before-cut"]))
    cut_after = draw(st.integers(1, len(turns)))
    header: dict[str, Any] = {"type": "session", "version": 1, "id": "syn", "createdAt": 1}
    if seeded:
        header["parentSession"] = "p"
        header["seedLength"] = 0  # patched below
    header["delegationDepth"] = 0
    b = Builder(header)
    surface: list[int] = []
    compaction = draw(st.booleans())
    for t, turn in enumerate(turns, start=1):
        b.ev("turn/start", {"turn": t})
        for s, (tries, ending, tool) in enumerate(turn, start=1):
            b.ev("step/start", {"turn": t, "step": s})
            if s == 1:
                content = [{"type": "text", "text": f"question {t}"}]
                surface.append(
                    b.ev(
                        "user/message",
                        {"id": f"u{t}", "role": "user", "source": {"kind": "user"}, "content": content},
                        surfaceOp="append",
                    )
                )
            last: list[int] = []
            for k, (specs, finish, pack, interleave) in enumerate(tries):
                last = []
                run: list[str] = []

                def flush_run(
                    run: list[str], pack: bool, t: int = t, s: int = s, last: list[int] = last
                ) -> None:
                    if pack and len(run) >= 3:
                        last.extend(b.row(t, s, 0, [1] * (len(run) - 1), run))
                    else:
                        for text in run:
                            last.append(
                                b.ev(
                                    "assistant/chunk",
                                    {
                                        "turn": t,
                                        "step": s,
                                        "chunk": {"type": "text-delta", "index": 0, "text": text},
                                    },
                                )
                            )
                    run.clear()

                for n, (spec, gap) in enumerate(specs):
                    kind, index = spec[0], spec[1]
                    value: Any = spec[2]
                    if kind == "text-delta" and index == 0 and value:
                        run.append(value)
                        continue
                    if kind == "text-run":
                        run.extend(f"t{i}" for i in range(value))
                        continue
                    flush_run(run, pack)
                    chunk: dict[str, Any] = {"type": kind, "index": index}
                    if kind in ("text-delta", "reasoning-delta"):
                        chunk["text"] = value
                    elif kind == "tool-call-delta":
                        cid, name, args = value
                        chunk["id"] = cid
                        if name is not None:
                            chunk["name"] = name
                        chunk["argumentsDelta"] = args
                    elif kind == "block-start":
                        chunk["blockType"] = value
                    else:
                        chunk = {"type": "usage", "usage": {"inputTokens": value, "outputTokens": 1}}
                    last.append(b.ev("assistant/chunk", {"turn": t, "step": s, "chunk": chunk}, gap=gap))
                    if interleave and n == 0:
                        b.ev("request/context", {"provider": "deepseek", "model": "deepseek-chat"})
                flush_run(run, pack)
                if finish:
                    last.append(
                        b.ev(
                            "assistant/chunk",
                            {"turn": t, "step": s, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
                        )
                    )
                if k < len(tries) - 1:
                    b.ev("llm/retry", {"turn": t, "step": s, "retryId": f"r{t}.{s}", "attempt": k + 1})
            message: dict[str, Any] = {
                "id": f"a{t}.{s}",
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {t}.{s}"}],
                "source": _MODEL,
            }
            if tool:
                message["content"].append(
                    {"type": "tool-call", "id": f"k{t}.{s}", "name": "bash", "arguments": "{}"}
                )
            data = {"turn": t, "step": s, "message": message}
            if ending == "claim" and last:
                surface.append(b.ev("assistant/message", data, sourceEventSeqs=last, surfaceOp="append"))
            elif ending == "empty" or (ending == "absent" and tries):
                surface.append(b.ev("assistant/message", data, sourceEventSeqs=[], surfaceOp="append"))
            elif ending == "absent" or ending == "claim":
                surface.append(b.ev("assistant/message", data, surfaceOp="append"))
            if tool and ending != "none":
                cid = f"k{t}.{s}"
                call = b.ev(
                    "tool/call", {"turn": t, "step": s, "callId": cid, "name": "bash", "arguments": "{}"}
                )
                result = {
                    "id": f"t{t}.{s}",
                    "role": "user",
                    "source": {"kind": "tool", "callId": cid},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": cid,
                            "content": [{"type": "text", "text": "ok"}],
                        }
                    ],
                }
                surface.append(
                    b.ev(
                        "tool/result",
                        {"turn": t, "step": s, "message": result},
                        sourceEventSeqs=[call],
                        surfaceOp="append",
                    )
                )
            b.ev("step/end", {"turn": t, "step": s})
        b.ev("turn/end", {"turn": t, "reason": {"kind": "completed"}})
        if seeded and t == cut_after:
            if seeded == "before-cut":
                b.ev("session/end-seed", {})
            header["seedLength"] = b.seq
            if seeded == "at-cut":
                b.ev("session/end-seed", {})
        if compaction and t == 1 and len(surface) >= 2:
            nodes = list(surface)
            b.ev(
                "compaction/summary",
                {
                    "compactionId": "c1",
                    "summary": [{"type": "text", "text": "sum"}],
                    "shadowedRange": {"start": nodes[0], "end": nodes[-1]},
                    "shadowedSeqs": nodes,
                    "shadowedTokenCount": 1,
                    "provider": "deepseek",
                    "model": "deepseek-chat",
                },
            )
            surface = [
                b.ev(
                    "user/message",
                    {
                        "id": "sum",
                        "role": "user",
                        "source": {"kind": "plugin", "plugin": "compact"},
                        "content": [],
                    },
                    sourceEventSeqs=nodes,
                    surfaceOp={"op": "replace", "start": nodes[0], "end": nodes[-1]},
                )
            ]
    if surface:
        b.ev("session/title", {"title": "t", "messageSeqs": surface[:2]})
    b.lines[0] = dumps(header)
    return b.data()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v1_logs())
def test_synthetic_v1_logs(source: bytes) -> None:
    check_v1_to_v2(source)


# -- streaming ----------------------------------------------------------------------------------


def big_v1_log(events: int) -> Iterator[bytes]:
    """A v1 body of about ``events`` events, generated lazily: turns of two steps, a retried
    (unclaimed) attempt, claimed attempts of unpacked and packed chunks, tool calls."""
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
        for step in (1, 2):
            yield line("step/start", {"turn": turn, "step": step})
            if step == 1:
                content = [{"type": "text", "text": "do it"}]
                yield line(
                    "user/message",
                    {"id": f"u{turn}", "role": "user", "source": {"kind": "user"}, "content": content},
                    surfaceOp="append",
                )
            yield line(
                "assistant/chunk",
                {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "x"}},
            )
            yield line(
                "assistant/chunk",
                {"turn": turn, "step": step, "chunk": {"type": "finish", "reason": {"kind": "error"}}},
            )
            yield line("llm/retry", {"turn": turn, "step": step, "retryId": "r", "attempt": 1})
            first = seq
            yield line(
                "assistant/chunk",
                {
                    "turn": turn,
                    "step": step,
                    "chunk": {"type": "block-start", "index": 0, "blockType": "text"},
                },
            )
            for _ in range(6):
                yield line(
                    "assistant/chunk",
                    {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "tok"}},
                )
            row = {"turn": turn, "step": step, "index": 0, "dt": [1, 1, 1], "texts": ["a", "b", "c", "d"]}
            time += 1
            yield dumps({"type": "text-chunks", "seq0": seq, "time0": time, "data": row})
            seq += 4
            time += 3
            yield line(
                "assistant/chunk",
                {"turn": turn, "step": step, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
            )
            message = {
                "id": f"a{turn}.{step}",
                "role": "assistant",
                "content": [{"type": "text", "text": "tok" * 6 + "abcd"}],
                "source": _MODEL,
            }
            yield line(
                "assistant/message",
                {"turn": turn, "step": step, "message": message},
                sourceEventSeqs=list(range(first, seq)),
                surfaceOp="append",
            )
            call = seq
            yield line(
                "tool/call",
                {"turn": turn, "step": step, "callId": f"c{turn}.{step}", "name": "bash", "arguments": "{}"},
            )
            result = {
                "id": f"t{turn}.{step}",
                "role": "user",
                "source": {"kind": "tool", "callId": f"c{turn}.{step}"},
                "content": [{"type": "tool-result", "toolCallId": f"c{turn}.{step}", "content": []}],
            }
            yield line(
                "tool/result",
                {"turn": turn, "step": step, "message": result},
                sourceEventSeqs=[call],
                surfaceOp="append",
            )
            yield line("step/end", {"turn": turn, "step": step})
        yield line("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def measure(step: Step, header: dict[str, Any], body: Iterator[bytes]) -> tuple[int, int, int]:
    """Stream a body through the step, keeping nothing; returns (input bytes, output records,
    tracemalloc peak)."""
    size = 0

    def counted() -> Iterator[bytes]:
        nonlocal size
        for raw in body:
            size += len(raw) + 1
            yield raw

    tracemalloc.start()
    try:
        count = 0
        for rec in step.run(header, decode_records(counted())):
            count += len(rec.events)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return size, count, peak


_MEASURE_BIG_LOG = """
import json
from tests.migrate.test_step_v2 import STEP, big_v1_log, measure
header = {"type": "session", "version": 1, "id": "big", "createdAt": 1, "delegationDepth": 0}
print(json.dumps(measure(STEP, header, big_v1_log(200_000))))
"""


@pytest.mark.slow
def test_streams_a_large_log() -> None:
    """Measured in a fresh interpreter: tracemalloc counts every thread's allocations, and a
    test session may keep threads of its own alive (the fleet suite's moto server and Dask
    cluster, then session fixtures, pushed the peak over the bound in full runs only)."""
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE_BIG_LOG],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    size, count, peak = json.loads(proc.stdout)
    assert size > 25_000_000 and count > 50_000
    assert peak < 2_000_000, f"peak {peak} bytes for {size} input bytes: the step holds the log"


def test_rec_shapes() -> None:
    """One output record per event; generated events carry no raw bytes."""
    source = (CASES / "retry-unclaimed-attempt" / "in.jsonl").read_bytes()
    header, body = split(source)
    recs: list[Rec] = list(STEP.run(header, decode_records(body)))
    assert all(len(r.events) == 1 for r in recs)
    attempts = [r for r in recs if r.events[0]["type"] == "assistant/attempt"]
    assert len(attempts) == 1 and attempts[0].raw is None


def test_released_codecs_rebuild_the_envelope_order() -> None:
    """docs/format.md "Where the published packages decided" 12: a v0/v1 record written
    ``surfaceOp`` first leaves the step with the writer's order; from v3 on the order is kept."""
    from sesstool.core.upgrade.records import encode_event, released_envelope

    event = {
        "type": "tool/result",
        "seq": 3,
        "time": 1,
        "data": {},
        "surfaceOp": "append",
        "sourceEventSeqs": [2],
    }
    canonical = released_envelope(event)
    assert list(canonical) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    assert released_envelope(canonical) is canonical
    assert encode_event(event, 2).index(b"sourceEventSeqs") < encode_event(event, 2).index(b"surfaceOp")
    assert encode_event(event, 3).index(b"surfaceOp") < encode_event(event, 3).index(b"sourceEventSeqs")
