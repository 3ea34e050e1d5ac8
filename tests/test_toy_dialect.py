"""A dialect is its package plus one registry line (issue 10): the test-only toy dialect
(``tests/toy_dialect``) gets ``inspect``, ``validate``, ``derive`` and ``repair`` — raw and zstd —
by being added to ``registry.DIALECTS``; nothing else in sesstool knows it."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sesstool.dialects import registry
from tests import toy_dialect
from tests.conftest import ROOT, Run, Sesstool

HEADER = b'{"toy":"log","version":1,"id":"toy-1"}\n'
BODY = [
    b'{"type":"toy/say","seq":0,"time":1000,"data":{"turn":1,"text":"hello"}}\n',
    b'{"type":"toy/end","seq":1,"time":1001,"data":{"turn":1}}\n',
    b'{"type":"toy/say","seq":2,"time":1002,"data":{"turn":2,"text":"again"}}\n',
]
TORN = b'{"type":"toy/say","seq":3,"ti'
CLOSER = b'{"type":"toy/end","seq":3,"time":1002,"data":{"turn":2}}\n'


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one registry line, added for the test."""
    monkeypatch.setattr(registry, "DIALECTS", (*registry.DIALECTS, toy_dialect.DIALECT))


def _zstd(*frames: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(compressor.compress(f) for f in frames)


def _logs(tmp_path: Path) -> dict[str, Path]:
    raw = tmp_path / "raw.jsonl"
    raw.write_bytes(HEADER + b"".join(BODY) + TORN)
    packed = tmp_path / "packed.jsonl.zstd"
    packed.write_bytes(_zstd(HEADER, b"".join(BODY)))
    return {"raw": raw, "zstd": packed}


def _json(run: Run) -> Any:
    return json.loads(run.stdout)


def test_the_registry_lists_one_dialect_per_line() -> None:
    """Adding a dialect is one line: ``PACKAGES`` is a tuple of ``(name, package)`` entries (the
    package imported when a log needs it, issue 14), and ``DIALECTS`` their ``DIALECT``s."""
    tree = ast.parse((ROOT / "sesstool" / "dialects" / "registry.py").read_text())
    (assign,) = [
        n for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", None) == "PACKAGES"
    ]
    assert isinstance(assign.value, ast.Tuple)
    lines = [e.lineno for e in assign.value.elts]
    assert len(set(lines)) == len(lines) >= 2
    for element in assign.value.elts:
        assert isinstance(element, ast.Tuple) and len(element.elts) == 2
        name, package = (ast.literal_eval(e) for e in element.elts)
        assert package == f"sesstool.dialects.{name}"
    assert [d.name for d in registry.DIALECTS] == [name for name, _ in registry.PACKAGES]


def test_unregistered_the_toy_log_is_not_read(sesstool: Sesstool, tmp_path: Path) -> None:
    log = _logs(tmp_path)["raw"]
    doc = _json(sesstool("inspect", "--json", str(log)))
    assert doc["verdict"]["verdict"] == "corrupt"
    assert doc["findings"][0]["rule"] == "header-invalid"


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_inspect(sesstool: Sesstool, tmp_path: Path, encoding: str) -> None:
    log = _logs(tmp_path)[encoding]
    doc = _json(sesstool("inspect", "--json", str(log)))
    assert doc["verdict"] == {
        "verdict": "torn" if encoding == "raw" else "interrupted",
        "reason": "the last record is torn (no newline)"
        if encoding == "raw"
        else "turn 2 is open at the end of the log",
        "address": doc["verdict"]["address"],
    }
    assert doc["stats"]["events"] == 3
    assert doc["stats"]["turns"] == 2
    assert doc["open"]["turn"] == 2
    assert doc["repair"] == {"repairable": True, "closers": [json.loads(CLOSER)]}
    text = sesstool("inspect", str(log)).stdout
    assert "toy-1 · format v1" in text
    assert f"  {CLOSER[:-1].decode()}" in text  # the default closer description: the record


@pytest.mark.usefixtures("toy")
def test_validate_reports_toy_rules(sesstool: Sesstool, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(HEADER + BODY[0] + b'{"type":"toy/end","seq":1,"time":1001,"data":{"turn":7}}\n')
    run = sesstool("validate", "--format", "json", "--fail-on", "warning", str(bad))
    doc = _json(run)
    (file,) = doc["files"]
    assert [(f["rule"], f["severity"], f["message"]) for f in file["findings"]] == [
        ("turn-end-mismatch", "warning", "toy/end 7 but the open turn is 1")
    ]
    assert file["verdict"]["verdict"] == "clean" and run.exit_code == 1
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_bytes(HEADER + b'{"type":"toy/say","seq":0,"time":1000,"data":{"turn":1}}\n')
    doc = _json(sesstool("validate", "--format", "json", str(corrupt)))
    (file,) = doc["files"]
    assert [f["rule"] for f in file["findings"]] == ["event-data"] and file["verdict"]["verdict"] == "corrupt"


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_derive(sesstool: Sesstool, tmp_path: Path, encoding: str) -> None:
    log = _logs(tmp_path)[encoding]
    doc = _json(sesstool("derive", "--format", "json", str(log)))
    assert doc["messages"] == [{"role": "toy", "content": "hello"}, {"role": "toy", "content": "again"}]
    assert doc["session"] == "toy-1"


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_repair(sesstool: Sesstool, tmp_path: Path, encoding: str) -> None:
    log = _logs(tmp_path)[encoding]
    out = tmp_path / f"out.{encoding}"
    run = sesstool("repair", "-o", str(out), str(log))
    assert run.exit_code == 0, run.stderr
    expected = HEADER + b"".join(BODY) + CLOSER
    if encoding == "raw":
        assert out.read_bytes() == expected  # the torn tail dropped, the closer appended
    else:
        data = out.read_bytes()
        assert data.startswith(_zstd(HEADER, b"".join(BODY)))  # the complete frames, verbatim
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        assert reader.read() == expected
    doc = _json(sesstool("inspect", "--json", str(out)))
    assert doc["verdict"]["verdict"] == "clean"
    assert not doc["findings"]


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_fork_rewrites_every_seed_line(sesstool: Sesstool, tmp_path: Path, encoding: str) -> None:
    log = _logs(tmp_path)[encoding]
    out = tmp_path / f"child.{encoding}"
    run = sesstool("fork", "--id", "kid", "-o", str(out), str(log))
    assert run.exit_code == 0, run.stderr
    expected = (
        b'{"toy":"log","version":1,"id":"kid","parent":"toy-1"}\n'
        + BODY[0].replace(b'"text":"', b'"text":"forked:')
        + BODY[1]
    )
    data = out.read_bytes()
    if encoding == "zstd":
        assert data.startswith(_zstd(expected[: expected.index(b"\n") + 1]))  # the header frame
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    assert data == expected  # default boundary: the end of the last completed turn (seq 1)
    assert _json(sesstool("inspect", "--json", str(out)))["verdict"]["verdict"] == "clean"


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_report_and_markdown(sesstool: Sesstool, tmp_path: Path, encoding: str) -> None:
    """The report page and the Markdown transcript of a dialect sesstool was never told about:
    its verdict, its findings linked, its conversation, its own closers; no timeline spans
    (its events open none) but every timed event on the axis."""
    log = _logs(tmp_path)[encoding]
    page = sesstool("report", str(log))
    assert page.exit_code == 0, page.stderr
    verdict = _json(sesstool("inspect", "--json", str(log)))["verdict"]["verdict"]
    assert f"data-verdict='{verdict}'" in page.stdout
    findings = _json(sesstool("validate", "--format", "json", str(log)))["files"][0]["findings"]
    for n in range(len(findings)):
        assert f"href='#mark-{n}'" in page.stdout and f"id='mark-{n}'" in page.stdout
    assert "<pre id='p-1-0'>again</pre>" in page.stdout
    if encoding == "raw":
        closer = CLOSER[:-1].decode().replace('"', "&quot;")
        assert closer in page.stdout
    md = sesstool("derive", "--format", "markdown", str(log))
    assert md.exit_code == 0, md.stderr
    assert "## 2 · toy\n\n```text\nagain\n```" in md.stdout


class _ToyWithSideFiles(toy_dialect.ToyDialect):
    """The toy dialect plus one hook: ``<stem>.side/*.jsonl`` belong to ``<stem>.jsonl``."""

    def companion_patterns(self, path: str) -> tuple[str, ...]:
        name = Path(path).name
        return (f"{name.removesuffix('.jsonl')}.side/*.jsonl",) if name.endswith(".jsonl") else ()


def test_side_files_are_one_hook(sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``companion_patterns`` alone makes inspect show a log's side files (the generic row:
    name and verdict) and validate check them after it, each under its own path; the engine
    knows no dialect's side files (Claude Code's subagents use the same hook)."""
    monkeypatch.setattr(registry, "DIALECTS", (*registry.DIALECTS, _ToyWithSideFiles()))
    log = tmp_path / "main.jsonl"
    log.write_bytes(HEADER + b"".join(BODY) + CLOSER)
    (tmp_path / "main.side").mkdir()
    side = tmp_path / "main.side" / "one.jsonl"
    side.write_bytes(HEADER + BODY[0] + b'{"type":"toy/end","seq":1,"time":1001,"data":{"turn":7}}\n')
    text = sesstool("inspect", str(log)).stdout
    assert "side file   one.jsonl: clean" in text
    doc = _json(sesstool("inspect", "--json", str(log)))
    (entry,) = doc["companions"]
    assert entry["path"] == str(side) and entry["verdict"]["verdict"] == "clean"
    assert [f["rule"] for f in entry["findings"]] == ["turn-end-mismatch"]
    run = sesstool("validate", "--format", "json", "--fail-on", "warning", str(log))
    assert [f["path"] for f in _json(run)["files"]] == [str(log), str(side)] and run.exit_code == 1
    alone = sesstool("validate", "--format", "json", "--fail-on", "warning", str(log), str(side), str(log))
    assert [f["path"] for f in _json(alone)["files"]] == [str(log), str(side)]
