"""A repair copies the source's complete zstd frames as they were (DESIGN §4: byte for byte),
and its read-back must not refuse them for what they always lacked. Found in stop 37: Codex's
compression worker writes its ``.jsonl.zst`` without content checksums (agent-formats §0,
observed), and ``repair`` of such a rollout failed with exit 6, "verification: the new file has
zstd-no-checksum", after planning the closers. A frame sesstool writes has a checksum, and a
frame without one past the copied bytes is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from sesstool.core.errors import WriteRefusedError
from sesstool.engine.write import read_back_lines
from sesstool.store.source import ReadLimits
from tests.conftest import FIXTURES, Sesstool

CODEX = next((FIXTURES / "codex" / "kill-during-command").glob("rollout-*.jsonl"))
DSH = FIXTURES / "dsh" / "crash-dangling-call" / "session.jsonl"
_BARE = zstandard.ZstdCompressor(write_checksum=False)


def frames_of(data: bytes) -> list[tuple[bytes, bool]]:
    """Each frame's plaintext and whether it carries a content checksum."""
    out: list[tuple[bytes, bool]] = []
    while data:
        params = zstandard.get_frame_parameters(data)
        reader = zstandard.ZstdDecompressor().decompressobj()
        out.append((reader.decompress(data), params.has_checksum))
        data = reader.unused_data
    return out


def test_a_codex_rollout_without_checksums_is_repaired(sesstool: Sesstool, tmp_path: Path) -> None:
    source = tmp_path / (CODEX.name + ".zst")
    plain = CODEX.read_bytes()
    source.write_bytes(_BARE.compress(plain))  # one frame, as the Codex worker writes it
    out = tmp_path / "out"
    out.mkdir()
    result = sesstool("repair", "-o", str(out), str(source))
    assert result.exit_code == 0, result.stderr
    (made,) = out.iterdir()
    written = frames_of(made.read_bytes())
    assert written[0] == (plain, False)  # the source's frame, verbatim
    assert made.read_bytes().startswith(source.read_bytes())
    assert len(written) > 1 and all(checksum for _, checksum in written[1:])  # the closers' frames
    assert sesstool("validate", str(made)).exit_code == 0


def test_a_dsh_log_without_checksums_is_repaired(sesstool: Sesstool, tmp_path: Path) -> None:
    """The harness layout (the header alone in frame 0, then a frame per record), no checksums."""
    lines = DSH.read_bytes().split(b"\n")
    complete = lines[:-1]  # the fixture's torn tail stays out: a frame per append ends on a record
    source = tmp_path / "session.jsonl.zstd"
    source.write_bytes(b"".join(_BARE.compress(line + b"\n") for line in complete))
    out = tmp_path / "out"
    out.mkdir()
    result = sesstool("repair", "-o", str(out), str(source))
    assert result.exit_code == 0, result.stderr
    (made,) = out.iterdir()
    assert made.read_bytes().startswith(source.read_bytes())
    written = frames_of(made.read_bytes())
    appended = len(written) - len(complete)  # the closers' frames
    assert [checksum for _, checksum in written] == [False] * len(complete) + [True] * appended
    assert len(written) > len(complete)


@pytest.mark.parametrize("verbatim", [0, 5])
def test_a_frame_without_checksum_past_the_copied_bytes_is_refused(tmp_path: Path, verbatim: int) -> None:
    first = zstandard.ZstdCompressor(write_checksum=True).compress(b"a\n")
    tmp = tmp_path / "new.zstd"
    tmp.write_bytes(first + _BARE.compress(b"b\n"))
    with pytest.raises(WriteRefusedError, match="zstd-no-checksum"):
        read_back_lines(tmp, "zstd", iter([b"a", b"b"]), ReadLimits(), False, "the new file", verbatim)
    read_back_lines(tmp, "zstd", iter([b"a", b"b"]), ReadLimits(), False, "the new file", len(first) + 1)
