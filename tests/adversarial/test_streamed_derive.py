"""Issue 11 item 1: ``derive`` holds neither a Claude Code transcript's entries nor, with
``--format markdown --redact``, the messages. For a Claude transcript the scan keeps
each line's offset, and the derivation reads back the entries it needs (``store/line_fetch.py``),
for a file and for standard input (its private copy), raw and zstd. Peak RSS is read from the
kernel for a child under an address-space limit, against ``inspect`` of the same log (which
holds the same scan); no clock is involved. Held, the entries add more than twice the log's
size."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from bench.claude_memory import generate
from sesstool.core.options import ScanOptions
from sesstool.engine.derive import DeriveRequest, run_derive
from sesstool.engine.scan import scan_source
from tests.adversarial.hostile_logs import Measured, run_measured, v4_messages
from tests.conftest import FIXTURES

MiB = 1 << 20
TRANSCRIPT = 18 << 20  # bytes: about 600 turns
TURNS = 600
SHORT = 20_000


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One long session (the bench's: the ``tool-one`` turn repeated with fresh ids, the last cut
    after its tool call) raw, and as zstd frames of 64 lines (as a compressing writer makes)."""
    where = tmp_path_factory.mktemp("claude-long")
    raw = where / "5f0c0a3e-0000-4000-8000-000000000001.jsonl"
    generate(raw, TRANSCRIPT)
    lines = raw.read_bytes().splitlines(keepends=True)
    packed = where / "5f0c0a3e-0000-4000-8000-000000000002.jsonl.zstd"
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    with open(packed, "wb") as f:
        for i in range(0, len(lines), 64):
            f.write(compressor.compress(b"".join(lines[i : i + 64])))
    return {"raw": raw, "zstd": packed}


@pytest.fixture(scope="module")
def inspected() -> Callable[[Path], Measured]:
    """``inspect --json`` of a log, measured once for every test that compares with it (the
    file and the stdin variants of a test share the log and so the baseline)."""

    @functools.cache
    def measure(log: Path) -> Measured:
        return run_measured(["inspect", "--json", str(log)], address_space=2 << 30, cwd=log.parent)

    return measure


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
@pytest.mark.parametrize("given", ["file", "stdin"])
def test_claude_derive_memory_does_not_grow_with_the_entries(
    transcripts: dict[str, Path], inspected: Callable[[Path], Measured], encoding: str, given: str
) -> None:
    log = transcripts[encoding]
    cwd = log.parent
    plain = inspected(log)
    assert plain.exit_code == 0, plain.stderr
    source, stdin = (str(log), None) if given == "file" else ("-", log)
    derived = run_measured(
        ["derive", "--format", "jsonl", source], address_space=2 << 30, cwd=cwd, stdin=stdin
    )
    assert derived.exit_code == 0, derived.stderr
    # held, the entries would add ~40 MB (more than twice the 18 MB of lines)
    assert derived.peak_rss - plain.peak_rss < 12 * MiB, (derived.peak_rss, plain.peak_rss)
    messages = [json.loads(line) for line in derived.stdout.splitlines()]
    assert sum(1 for m in messages if m["role"] == "assistant") >= 2 * TURNS
    assert messages[-1]["origin"] == "resume"  # the last turn ends on its tool call: closed


def test_streamed_claude_derive_equals_the_in_memory_one(transcripts: dict[str, Path]) -> None:
    """The by-entries derivation (read back by offset, from a file or a stream's copy) writes
    the messages a scan that keeps every entry derives."""
    held = scan_source(str(transcripts["raw"]), ScanOptions(collect_messages=True)).scan
    assert held.messages is not None and len(held.messages) > 2 * TURNS
    for log in transcripts.values():
        report = run_derive(DeriveRequest(str(log)))
        assert list(report.messages) == list(held.messages)
        assert report.notes == ()


@pytest.fixture(scope="module")
def short_messages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20,000 current surface messages of a few bytes each (held, ~25 MB of Python objects)."""
    return v4_messages(tmp_path_factory.mktemp("short") / "session.v4.jsonl", SHORT, lambda seq: f"m{seq}")


def test_markdown_redact_memory_does_not_grow_with_the_messages(short_messages: Path) -> None:
    """Issue 11 item 1: ``derive --format markdown --redact`` states the redaction counts in its
    heading; it reads the messages once for the redactor and once to write them, never holding
    them (as ``--format json --redact`` never did: the baseline, with the same redactor)."""
    cwd = short_messages.parent
    base = run_measured(
        ["derive", "--format", "json", "--redact", str(short_messages)], address_space=2 << 30, cwd=cwd
    )
    markdown = run_measured(
        ["derive", "--format", "markdown", "--redact", str(short_messages)], address_space=2 << 30, cwd=cwd
    )
    assert base.exit_code == markdown.exit_code == 0, markdown.stderr
    assert markdown.peak_rss - base.peak_rss < 8 * MiB, (markdown.peak_rss, base.peak_rss)
    text = markdown.stdout.decode()
    assert (
        f"{SHORT} message(s)" in text
        and f"## {SHORT} · user" in text
        and text.endswith(f"m{SHORT - 1}\n```\n")
    )


CODEX_TURNS = 2_000
PAD = "lorem " * 500
CODEX_SEED = sorted((FIXTURES / "codex" / "kill-during-command").glob("*.jsonl"))[0]


@pytest.fixture(scope="module")
def long_rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Codex rollout whose response items (three messages and a call that was killed) repeat
    ``CODEX_TURNS`` times with fresh call ids: one thread of 8,000 history items, 25 MB."""
    lines = [json.loads(line) for line in CODEX_SEED.read_bytes().splitlines()]
    head = [e for e in lines if e["type"] == "session_meta"]
    items = [e for e in lines if e["type"] == "response_item"]
    path = tmp_path_factory.mktemp("codex-long") / CODEX_SEED.name
    ordinal = 0
    with open(path, "wb") as f:
        for turn in range(CODEX_TURNS):
            for e in head if turn == 0 else []:
                f.write(json.dumps({**e, "ordinal": ordinal}).encode() + b"\n")
                ordinal += 1
            for e in items:
                payload = dict(e["payload"])
                if isinstance(payload.get("call_id"), str):
                    payload["call_id"] = f"{payload['call_id']}_{turn}"
                if isinstance(payload.get("content"), list):  # ~3 KB more per message
                    payload["content"] = [{**b, "text": f"{b.get('text')} {PAD}"} for b in payload["content"]]
                f.write(json.dumps({**e, "ordinal": ordinal, "payload": payload}).encode() + b"\n")
                ordinal += 1
    return path


@pytest.mark.parametrize("given", ["file", "stdin"])
def test_codex_derive_memory_does_not_grow_with_the_history(
    long_rollout: Path, inspected: Callable[[Path], Measured], given: str
) -> None:
    """Issue 11 item 1: a Codex rollout's history is kept as a few machine words per item and
    read back by address (held, the items add ~20 MB to ``inspect``'s peak)."""
    cwd = long_rollout.parent
    plain = inspected(long_rollout)
    source, stdin = (str(long_rollout), None) if given == "file" else ("-", long_rollout)
    derived = run_measured(
        ["derive", "--format", "jsonl", source], address_space=2 << 30, cwd=cwd, stdin=stdin
    )
    assert plain.exit_code == 0 and derived.exit_code == 0, derived.stderr
    assert derived.peak_rss - plain.peak_rss < 8 * MiB, (derived.peak_rss, plain.peak_rss)
    items = [json.loads(line) for line in derived.stdout.splitlines()]
    held = scan_source(str(long_rollout), ScanOptions(collect_messages=True)).scan.messages
    assert held is not None and items == list(held) and len(items) == 5 * CODEX_TURNS
    assert sum(1 for i in items if i.get("output") == "aborted") == CODEX_TURNS  # one per call
