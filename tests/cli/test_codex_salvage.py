"""`sesstool repair --salvage` on Codex rollouts: every line Codex reads is kept, every line it
skips is dropped into the sidecar and listed (docs/format.md "Salvage of a rollout"). The
fixture goldens are in tests/golden/test_codex_goldens.py; these are the damage the fixtures
do not hold, built from recorded rollouts by byte-level edits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sesstool.dialects.codex.salvage import readable_from
from tests.conftest import examples, run_sesstool
from tests.dialects.codex._support import plaintext, rollout

TOOL_CALL = rollout("tool-call").read_bytes()
KILLED = rollout("kill-during-command").read_bytes()


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _salvage(src: Path, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    result = run_sesstool("repair", "--salvage", "--json", str(src), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(Path(str(out) + ".dropped.json").read_text())
    return json.loads(result.stdout), manifest


def _items(path: Path) -> list[dict[str, Any]]:
    result = run_sesstool("derive", "--format", "json", str(path))
    assert result.exit_code == 0, result.stderr
    items: list[dict[str, Any]] = json.loads(result.stdout)["messages"]
    return items


def test_readable_from() -> None:
    good = _lines(TOOL_CALL)[3].rstrip(b"\n")
    assert readable_from(good) == 0
    assert readable_from(b"") == 0 and readable_from(b"  ") == 0
    assert readable_from(good[:100] + good) == 100
    assert readable_from(b"\0" * 40 + good) == 40
    assert readable_from(b"\0" * 600) is None
    assert readable_from(b"not a rollout line") is None
    assert readable_from(good[:-1]) is None  # a torn line: nothing complete in it
    assert readable_from(good + good[:50]) is None  # complete, then a fragment: not Codex's shape
    assert readable_from(b'{"timestamp":1}' + b'{"timestamp":"x","type":"t","payload":null}') == 15


def test_an_interleaved_output_is_recovered(tmp_path: Path) -> None:
    """#24425 on the output line: Codex drops it and sends "aborted" on resume; the salvage keeps
    the complete output written after the fragment, so the call is answered as it was."""
    lines = _lines(TOOL_CALL)
    at = next(i for i, line in enumerate(lines) if b'"function_call_output"' in line)
    damaged = [*lines[:at], lines[at][:120] + lines[at], *lines[at + 1 :]]
    src = tmp_path / "rollout.jsonl"
    src.write_bytes(b"".join(damaged))
    out = tmp_path / "salvaged.jsonl"
    doc, manifest = _salvage(src, out)
    assert out.read_bytes() == TOOL_CALL and doc["plan"]["closers"] == []
    assert manifest["recovered_lines"] == 1
    [dropped] = manifest["dropped"]
    assert (dropped["rule"], dropped["line"], dropped["bytes"]) == ("codex-interleaved-line", at + 1, 120)
    assert dropped["rest_of_line_kept"] is True
    outputs = [i for i in _items(out) if i["type"] == "function_call_output"]
    assert outputs and all(i["output"] != "aborted" for i in outputs)


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zst"])
def test_every_kind_of_damage_at_once(tmp_path: Path, zstd: bool) -> None:
    """A killed rollout with an undecodable line, a bulk run of NUL lines, a NUL-prefixed line and
    a torn tail: everything readable is kept in order, the call and the turn are closed."""
    lines = _lines(KILLED)
    junk = b"\0" * 30 + b"\n"
    body = (
        lines[:3]
        + [b"garbage\n"]
        + lines[3:5]
        + [junk] * 100  # the reader's bulk filler path (>= 64 lines)
        + [b"\0" * 7 + lines[5]]
        + lines[6:]
        + [lines[2][:40]]  # torn tail
    )
    data = b"".join(body)
    src = tmp_path / ("rollout.jsonl.zst" if zstd else "rollout.jsonl")
    src.write_bytes(zstandard.ZstdCompressor().compress(data) if zstd else data)
    out = tmp_path / ("salvaged.jsonl.zst" if zstd else "salvaged.jsonl")
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    doc, manifest = _salvage(src, out)
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    closers = [
        json.dumps(c, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        for c in doc["plan"]["closers"]
    ]
    assert plaintext(out) == KILLED + b"".join(closers)
    assert [c["payload"]["type"] for c in doc["plan"]["closers"]] == ["function_call_output", "turn_aborted"]
    rules = [r["rule"] for r in manifest["dropped"]]
    assert rules == ["codex-undecodable-line", "codex-nul-run", "codex-interleaved-line", "codex-torn-tail"]
    sidecar = Path(str(out) + ".dropped").read_bytes()
    assert sidecar == b"garbage\n" + junk * 100 + b"\0" * 7 + lines[2][:40]
    assert manifest["dropped_sha256"] == hashlib.sha256(sidecar).hexdigest()
    again = run_sesstool("validate", "--format", "json", str(out))
    assert again.exit_code == 0 and json.loads(again.stdout)["files"][0]["findings"] == []


def test_a_torn_zstd_frame_is_kept_in_the_sidecar(tmp_path: Path) -> None:
    data = b"".join([*_lines(KILLED)[:1], b"garbage\n", *_lines(KILLED)[1:]])
    frames = zstandard.ZstdCompressor(write_checksum=True)
    first, second = frames.compress(data[:2000]), frames.compress(data[2000:])
    src = tmp_path / "rollout.jsonl.zst"
    src.write_bytes(first + second[:-30])
    out = tmp_path / "salvaged.jsonl.zst"
    _doc, manifest = _salvage(src, out)
    torn = manifest["dropped"][-1]
    assert torn["plaintext_offset"] is None and torn["file_offset"] == len(first)
    assert torn["bytes"] == len(second) - 30
    assert Path(str(out) + ".dropped").read_bytes().endswith(second[:-30])
    check = run_sesstool("inspect", "--json", str(out))
    assert json.loads(check.stdout)["verdict"]["verdict"] == "clean"


def test_salvage_is_refused_past_an_over_long_line(tmp_path: Path) -> None:
    lines = _lines(TOOL_CALL)
    src = tmp_path / "rollout.jsonl"
    src.write_bytes(b"".join([*lines[:4], b"x" * 5000 + b"\n", *lines[4:]]))
    result = run_sesstool(
        "repair", "--salvage", "--max-line-bytes", "4096", str(src), "-o", str(tmp_path / "o.jsonl")
    )
    assert result.exit_code == 3, result.stderr
    assert "cannot salvage" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rollout.jsonl"]


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_salvage_keeps_exactly_the_lines_codex_reads(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Any mix of damaged lines between real ones: the output is the readable lines in order
    (plus closers), the sidecar every other byte, and nothing else."""
    lines = _lines(TOOL_CALL)
    junk = st.sampled_from([b"garbage", b"\0" * 20, b"{", b'{"timestamp":"x"}', b"[1,2]"])
    body = [lines[0]]
    dropped = b""
    for line in lines[1:]:
        if data.draw(st.booleans(), "damage before"):
            piece = data.draw(junk, "junk")
            if data.draw(st.booleans(), "same line"):
                body.append(piece + line)
                dropped += piece
                continue
            body.append(piece + b"\n")
            dropped += piece + b"\n"
        body.append(line)
    tmp = tmp_path_factory.mktemp("salvage")
    src = tmp / "rollout.jsonl"
    src.write_bytes(b"".join(body))
    out = tmp / "salvaged.jsonl"
    result = run_sesstool("repair", "--salvage", "--json", str(src), "-o", str(out))
    if not dropped:
        assert result.exit_code == 0 and not out.exists()  # clean: nothing to salvage
        return
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes() == TOOL_CALL
    assert Path(str(out) + ".dropped").read_bytes() == dropped
