"""Write commands: the -o suffix decides the output encoding; --encoding contradicting it is a
usage error (issue 15 item 6, docs/format.md "Output names and encodings")."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Sesstool

Source = Callable[[str, bool], str]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DSH = FIXTURES / "dsh"
SOURCES = {
    "repair": "torn-tail/session",
    "fork": "v0-tiny/session",
    "migrate": "v0-tiny/session",
    "redact": "v0-tiny/session",
}


@pytest.fixture
def source(tmp_path: Path) -> Callable[[str, bool], str]:
    """A copy of the command's fixture log in its own directory (a write command takes the
    session lock beside its source: never in the fixture tree); outputs go to ``tmp_path/out``."""
    (tmp_path / "out").mkdir()

    def copy(command: str, zstd: bool) -> str:
        name = SOURCES[command] + (".jsonl.zstd" if zstd else ".jsonl")
        target = tmp_path / "src" / ("z" if zstd else "r") / Path(name).name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DSH / name, target)
        return str(target)

    return copy


@pytest.mark.parametrize("command", sorted(SOURCES))
@pytest.mark.parametrize("name", ["out.jsonl.zstd", "out.zst", "OUT.JSONL.ZST"])
def test_zstd_suffix_writes_zstd_from_a_raw_source(
    sesstool: Sesstool, tmp_path: Path, source: Source, command: str, name: str
) -> None:
    out = tmp_path / "out" / name
    result = sesstool(command, source(command, False), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes().startswith(ZSTD_MAGIC)
    doc = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert doc["file"]["encoding"] == "zstd"
    assert doc["verdict"]["verdict"] in ("clean", "interrupted")


@pytest.mark.parametrize("command", sorted(SOURCES))
def test_jsonl_suffix_writes_raw_from_a_zstd_source(
    sesstool: Sesstool, tmp_path: Path, source: Source, command: str
) -> None:
    out = tmp_path / "out" / "out.jsonl"
    result = sesstool(command, source(command, True), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    data = out.read_bytes()
    assert not data.startswith(ZSTD_MAGIC) and data.startswith(b"{") and data.endswith(b"\n")
    doc = json.loads(sesstool("inspect", "--json", str(out)).stdout)
    assert doc["file"]["encoding"] == "raw"


@pytest.mark.parametrize("command", sorted(SOURCES))
@pytest.mark.parametrize(
    ("name", "encoding"), [("out.jsonl.zstd", "raw"), ("out.zst", "raw"), ("out.jsonl", "zstd")]
)
def test_encoding_contradicting_the_suffix_is_refused(
    sesstool: Sesstool, tmp_path: Path, source: Source, command: str, name: str, encoding: str
) -> None:
    out = tmp_path / "out" / name
    result = sesstool(command, source(command, False), "-o", str(out), "--encoding", encoding)
    assert result.exit_code == 2, result.stdout
    assert f"--encoding {encoding} contradicts the output name" in result.stderr
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("command", sorted(SOURCES))
def test_encoding_agreeing_with_the_suffix_or_an_unsuffixed_name(
    sesstool: Sesstool, tmp_path: Path, source: Source, command: str
) -> None:
    agreed = tmp_path / "out" / "a.jsonl.zstd"
    assert sesstool(command, source(command, False), "-o", str(agreed), "--encoding", "zstd").exit_code == 0
    assert agreed.read_bytes().startswith(ZSTD_MAGIC)
    plain = tmp_path / "out" / "b.log"  # no encoding suffix: --encoding decides, else the source's
    assert sesstool(command, source(command, True), "-o", str(plain), "--encoding", "raw").exit_code == 0
    assert plain.read_bytes().startswith(b"{")
    kept = tmp_path / "out" / "c.log"
    assert sesstool(command, source(command, True), "-o", str(kept)).exit_code == 0
    assert kept.read_bytes().startswith(ZSTD_MAGIC)
