"""Fixture access for the Claude dialect's pure tests: scenarios recorded by the real-CLI lane."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sesstool.dialects.claude.scan_facts import TranscriptScan
from sesstool.dialects.claude.transcript import TranscriptScanner
from tests.conftest import FIXTURES

CLAUDE = FIXTURES / "claude"
PROJECTS = CLAUDE / "projects"
LANE = CLAUDE / "lane"
EXPECTED_DIR = CLAUDE / "expected"  # goldens
SCENARIOS = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())
RESUME_PROMPT = "lane: continue"


@dataclass(frozen=True)
class Scenario:
    name: str

    @property
    def transcript(self) -> Path:
        (found,) = sorted(p for p in (PROJECTS / self.name).glob("*.jsonl"))
        return found

    @property
    def session_id(self) -> str:
        return self.transcript.name.removesuffix(".jsonl")

    @property
    def resumed(self) -> Path:
        return LANE / self.name / "resumed" / self.transcript.name

    @property
    def resume_request(self) -> list[dict[str, Any]]:
        loaded: list[dict[str, Any]] = json.loads((LANE / self.name / "resume-request.json").read_text())
        return loaded

    @property
    def subagents(self) -> list[Path]:
        return sorted((PROJECTS / self.name / self.session_id / "subagents").glob("agent-*.jsonl"))


def zstd_twin(path: Path) -> Path:
    """The zstd twin of a fixture transcript (tests/claude_lane/twins.py), in the same layout
    under ``fixtures/claude/zstd``."""
    return CLAUDE / "zstd" / path.relative_to(PROJECTS).parent / (path.name + ".zstd")


def scan_bytes(data: bytes, path: str, session: str | None, subagent: bool = False) -> TranscriptScan:
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    scanner = TranscriptScanner(path, session, subagent=subagent)
    scanner.feed_lines(lines, 0, 1)
    torn = (end, len(data) - end, len(lines) + 1) if end < len(data) else None
    return scanner.finish(torn)


def scan_file(path: Path, subagent: bool = False) -> TranscriptScan:
    session = path.parent.parent.name if subagent else path.name.removesuffix(".jsonl")
    return scan_bytes(path.read_bytes(), str(path), session, subagent)


def entries_for(path: Path, scan: TranscriptScan) -> dict[int, dict[str, Any]]:
    wanted = set(scan.chain) | set(scan.reattached)
    found: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(path.read_bytes().split(b"\n"), 1):
        if number in wanted:
            found[number] = json.loads(line.lstrip(b"\0"))
    return found
