"""The whole chain through the CLI (issue 4 "Done when"): v0 logs with streaming chunks, forks,
compaction and tool calls migrate to v4, validate at v4, derive the same conversation, and the
v0 file is untouched; steps compose; migrate publishes once; derive --as-version agrees."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, Sesstool

RICH = ["clean-multiturn", "chunks-unpacked", "chunks-packed", "compaction", "forked-child",
        "subagent", "crash-not-started", "bad-surrogate", "v0-tiny"]  # fmt: skip
LOGS = [(name, zstd) for name in RICH for zstd in (False, True)]
IDS = [f"{n}-{'zstd' if z else 'raw'}" for n, z in LOGS]


def copy(tmp_path: Path, name: str, zstd: bool) -> Path:
    src = FIXTURES / "dsh" / name / ("session.jsonl.zstd" if zstd else "session.jsonl")
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    return dst


def texts(content: Any) -> list[str]:
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                out.append(block["text"])
            if block.get("type") == "tool-call":
                out.append(f"call {block.get('name')} {block.get('arguments')}")
            out += texts(block.get("content"))
    return out


def conversation(messages: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(role, texts): a tool result is role "tool" whatever its version's wrapper."""
    conv = []
    for m in messages:
        source = m.get("source")
        kind = source.get("kind") if isinstance(source, dict) else None
        role = "tool" if kind == "tool" else str(m.get("role"))
        conv.append((role, texts(m.get("content"))))
    return conv


def run_json(sesstool: Sesstool, *args: str) -> dict[str, Any]:
    result = sesstool(*args)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


@pytest.mark.parametrize(("name", "zstd"), LOGS, ids=IDS)
def test_v0_to_v4_keeps_the_conversation(sesstool: Sesstool, tmp_path: Path, name: str, zstd: bool) -> None:
    src = copy(tmp_path, name, zstd)
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    report = run_json(sesstool, "migrate", "--json", str(src))
    assert report["status"] == "migrated" and report["to_version"] == 4
    out = Path(report["output"]["path"])
    assert out.name == ("session.v4.jsonl.zstd" if zstd else "session.v4.jsonl")
    checked = run_json(sesstool, "validate", "--format", "json", str(out))["files"][0]
    assert checked["version"] == 4
    assert not [f for f in checked["findings"] if f["severity"] == "error"]
    old = run_json(sesstool, "derive", str(src))
    new = run_json(sesstool, "derive", str(out))
    # the same conversation; v3 only adds the system head (the prompts of the request headers)
    new_conv = conversation(new["messages"])
    assert [c for c in new_conv if c[0] != "system"] == conversation(old["messages"])
    prompts = {old["request"]["header"].get("system")} if old["request"]["header"] else set()
    assert {t for role, ts in new_conv if role == "system" for t in ts} == prompts - {None}
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before  # v0 file untouched
    # derive --as-version 4 on the v0 file sees exactly what the published v4 file holds
    assert run_json(sesstool, "derive", "--as-version", "4", str(src))["messages"] == new["messages"]
    # ... and so does standard input, read back from the copy taken while it was scanned
    piped = sesstool("derive", "--as-version", "4", "-", input=src.read_bytes())
    assert piped.exit_code == 0, piped.stderr
    assert json.loads(piped.stdout)["messages"] == new["messages"]


@pytest.mark.parametrize("name", ["clean-multiturn", "chunks-packed", "compaction", "forked-child"])
def test_steps_compose(sesstool: Sesstool, tmp_path: Path, name: str) -> None:
    """v0→v2 directly equals v0→v1 then v1→v2 (and so on up to v4), byte for byte."""
    src = copy(tmp_path, name, False)
    for target in (2, 3, 4):
        direct = tmp_path / f"direct-{target}.jsonl"
        run_json(sesstool, "migrate", "--json", "--to", str(target), "-o", str(direct), str(src))
        stepwise = src
        for version in range(1, target + 1):
            nxt = tmp_path / f"step-{target}-{version}.jsonl"
            run_json(sesstool, "migrate", "--json", "--to", str(version), "-o", str(nxt), str(stepwise))
            stepwise = nxt
        assert direct.read_bytes() == stepwise.read_bytes(), target


def test_migrate_publishes_once(sesstool: Sesstool, tmp_path: Path) -> None:
    src = copy(tmp_path, "clean-multiturn", False)
    first = run_json(sesstool, "migrate", "--json", str(src))
    out = Path(first["output"]["path"])
    content = out.read_bytes()
    again = sesstool("migrate", str(src))  # the same generation: already there (issue 15 item 12)
    assert again.exit_code == 0 and "already published, identical" in again.stdout
    assert run_json(sesstool, "migrate", "--json", str(tmp_path))["status"] == "up-to-date"
    assert out.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.lock", "session.v4.jsonl"]


def test_as_version_refuses_a_downgrade_and_what_a_step_refuses(sesstool: Sesstool) -> None:
    v2 = str(FIXTURES / "dsh" / "v2-tiny" / "session.v2.jsonl")
    assert sesstool("derive", "--as-version", "1", v2).exit_code == 2
    ignorable = str(FIXTURES / "dsh" / "unknown-ignorable" / "session.jsonl")
    refused = sesstool("derive", "--as-version", "4", ignorable)
    assert refused.exit_code == 4 and "session-format-v0-to-v1 refuses" in refused.stderr
    same = run_json(sesstool, "derive", "--as-version", "2", v2)
    assert same["version"] == 2 and same["messages"]
