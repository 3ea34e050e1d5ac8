"""Reading the Codex fixtures through the store readers, for the dialect's unit tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from sesstool.core.model import ScanResult
from sesstool.dialects.codex.history import DerivedHistory, HistoryBuilder
from sesstool.dialects.codex.scanner import CodexScanner
from sesstool.dialects.codex.vocabulary import is_rollout_line
from sesstool.store.readers import make_reader
from sesstool.store.source import ReadLimits, sniff
from tests.conftest import FIXTURES

CODEX = FIXTURES / "codex"


def fixture_dirs() -> list[Path]:
    return sorted(p.parent for p in CODEX.glob("*/resume.json"))


def rollout(name: str, zstd: bool = False) -> Path:
    suffix = ".jsonl.zst" if zstd else ".jsonl"
    found = [p for p in (CODEX / name).glob("rollout-*") if p.name.endswith(suffix)]
    assert len(found) == 1, found
    return found[0]


def resume_record(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CODEX / name / "resume.json").read_text())
    return loaded


def scan_bytes(data: bytes, path: str = "rollout.jsonl") -> ScanResult:
    import io

    encoding = sniff(data[:4])
    reader = make_reader(io.BytesIO(data), encoding, ReadLimits())
    scanner = CodexScanner(path)
    for item in reader.batches():
        scanner.feed(item)
    return scanner.finish(reader.summary)


def scan(path: Path) -> ScanResult:
    return scan_bytes(path.read_bytes(), path.name)


def plaintext(path_or_data: Path | bytes) -> bytes:
    import io

    data = path_or_data.read_bytes() if isinstance(path_or_data, Path) else path_or_data
    encoding = sniff(data[:4])
    reader = make_reader(io.BytesIO(data), encoding, ReadLimits())
    out = bytearray()
    for item in reader.batches():
        if isinstance(item, tuple):
            for line in item[0]:
                out += line + b"\n"
    return bytes(out)


def derive_bytes(data: bytes) -> DerivedHistory:
    builder = HistoryBuilder()
    for line in plaintext(data).split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if is_rollout_line(obj):
            builder.feed(obj)
    return builder.derive()
