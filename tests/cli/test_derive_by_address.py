"""derive streamed by address (issue 14) is the in-memory derive, byte for byte: a file is read
back by address, standard input from the private copy taken while it was scanned (issue 11).
Every dsh, mini-agent and migration fixture: file and standard input give the same exit status
and bytes (JSON and JSONL), and both equal the messages a scan holding them in memory derives."""

from __future__ import annotations

from pathlib import Path

import pytest

from sesstool.core.jsonline import dumps
from sesstool.core.options import ScanOptions
from sesstool.engine.scan import scan_source
from tests.conftest import FIXTURES, Sesstool

LOGS = sorted(
    p
    for root in ("dsh", "mini", "migrate")
    for p in (FIXTURES / root).rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts
)


def test_there_are_fixtures_to_compare() -> None:
    assert len(LOGS) > 50 and any("steering" in str(p) for p in LOGS)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_file_derives_what_its_bytes_derive_on_standard_input(
    sesstool: Sesstool, log: Path, fmt: str
) -> None:
    from_file = sesstool("derive", "--format", fmt, str(log))
    from_stdin = sesstool("derive", "--format", fmt, "-", input=log.read_bytes())
    assert from_file.exit_code == from_stdin.exit_code
    if fmt == "json":
        # the members that may differ name the input: the document's path, the verdict's address
        file_lines = from_file.stdout_bytes.splitlines()
        stdin_lines = from_stdin.stdout_bytes.splitlines()
        differ = [(a, b) for a, b in zip(file_lines, stdin_lines, strict=True) if a != b]
        assert all(a.lstrip().startswith((b'"path"', b'"file"')) for a, _ in differ), differ[:3]
        assert all(b.lstrip() in (b'"path": "-",', b'"file": "-",') for _, b in differ), differ[:3]
    else:
        assert from_file.stdout_bytes == from_stdin.stdout_bytes


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_read_back_by_address_equals_the_messages_held_in_memory(sesstool: Sesstool, log: Path) -> None:
    held = scan_source(log, ScanOptions(collect_messages=True)).scan
    derived = sesstool("derive", "--format", "jsonl", str(log))
    if held.verdict in ("corrupt", "unsupported"):
        assert derived.exit_code in (3, 4) and derived.stdout_bytes == b""
        return
    assert derived.exit_code == 0, derived.stderr
    assert held.messages is not None
    assert derived.stdout_bytes == b"".join(dumps(m) + b"\n" for m in held.messages)
