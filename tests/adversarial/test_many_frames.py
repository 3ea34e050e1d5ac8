"""Issue 11 item 1, stop 37: a zstd log of many small frames — frames of one line, then two,
then one, none with a content checksum — must cost no more memory for more frames. The reader
reports a missing checksum once per frame, and the zstd frame of every line is what a finding
made at the end names (tests/cli/test_zstd_addresses.py).

Found in stop 37: the Claude scan kept every reader finding in a list of its own, uncapped by
``--max-findings``, and a map entry per frame: ``validate`` of a transcript whose every line was
a frame of its own peaked 49 MiB at 50,000 frames and 97 MiB at 200,000 (~330 bytes a frame).
Now the reader's findings are cut as the scan's are (``claude.findings.Findings.absorb``) and
the frames are runs (``store.frame_runs``). The peak RSS of a child
(``hostile_logs.run_measured``, the spill thresholds at 4,096 as ``_spilling_child`` sets them)
at N and 4N frames, for each dialect with a recording to grow. On the code before (0928aa9) the
Claude transcript grew +12.55 MiB (``validate``) and +12.76 (``repair``) from 20,000 to 80,000
frames, and ``repair`` of the Codex rollout failed (exit 6: the frames it copied have no
checksum, tests/cli/test_verbatim_frames.py). N is 40,000: from 20,000 the Claude ``validate``
grew +1.16 to +2.03 MiB (the spill file's caches still filling; +2.03 in a loaded full run);
from 40,000 every growth is +0.05 to +0.82 (two runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from tests.adversarial.hostile_logs import FIXED_MMAP, assert_flat, output_args, run_measured, v4_messages
from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow

N = 40_000
SPILL_AT = 4096  # the spill thresholds in the child (_spilling_child): N frames make ~N/2 runs
CLAUDE = FIXTURES / "claude" / "projects" / "tool-one" / "0efa8ac9-c14d-5541-8e5c-329bb653094f.jsonl"
CODEX = next((FIXTURES / "codex" / "kill-mid-stream").glob("rollout-*.jsonl"))
_PLAIN = zstandard.ZstdCompressor(write_checksum=False)


def framed(lines: list[bytes]) -> bytes:
    """``lines`` as zstd frames of one line, then two, then one, …: a run of frames per line
    broken at every other frame (the layout that costs the frame map the most)."""
    out: list[bytes] = []
    i, size = 0, 1
    while i < len(lines):
        out.append(_PLAIN.compress(b"".join(line + b"\n" for line in lines[i : i + size])))
        i, size = i + size, 3 - size
    return b"".join(out)


def repeated(recording: Path, at: int, n: int) -> list[bytes]:
    """The recording with its line ``at`` (one the dialect reads as an event of no consequence)
    written ``n`` times over."""
    lines = recording.read_bytes().split(b"\n")[:-1]
    return [*lines[:at], *[lines[at]] * n, *lines[at + 1 :]]


def build(dialect: str, n: int, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    if dialect == "claude":
        log, lines = where / (CLAUDE.name + ".zstd"), repeated(CLAUDE, 1, n)  # a queue dequeue
    elif dialect == "codex":
        log, lines = where / (CODEX.name + ".zst"), repeated(CODEX, 6, n)  # thread settings applied
    else:
        raw = v4_messages(where / "plain.jsonl", n, lambda seq: "hello")
        log, lines = where / "session.v4.jsonl.zstd", raw.read_bytes().split(b"\n")[:-1]
        raw.unlink()
    log.write_bytes(framed(lines))
    return log


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    where = tmp_path_factory.mktemp("many-frames")
    return {(d, n): build(d, n, where / f"{d}-{n}") for d in ("claude", "codex", "dsh") for n in (N, 4 * N)}


def _peak(log: Path, command: list[str]) -> int:
    measured = run_measured(
        [*command, *output_args(command, log.parent), str(log)],
        cwd=log.parent,
        env={"PYTHONPATH": str(ROOT), **FIXED_MMAP},
        module=("tests.adversarial._spilling_child", str(SPILL_AT)),  # the path millions take
    )
    assert "Traceback" not in measured.stderr, measured.stderr
    assert measured.exit_code in (0, 1), measured.stderr  # 1: validate's verdict on a damaged log
    return measured.peak_rss


def test_the_layout_is_what_it_is_named() -> None:
    blob = framed([b"a", b"b", b"c", b"d", b"e"])
    frames: list[bytes] = []
    while blob:
        size = zstandard.frame_content_size(blob)
        assert size > 0
        reader = zstandard.ZstdDecompressor().decompressobj()
        frames.append(reader.decompress(blob))
        blob = reader.unused_data
    assert frames == [b"a\n", b"b\nc\n", b"d\n", b"e\n"]


@pytest.mark.parametrize("dialect", ["claude", "codex", "dsh"])
@pytest.mark.parametrize("command", [["validate"], ["repair"]], ids=lambda c: c[0])
def test_more_frames_hold_no_more(
    logs: dict[tuple[str, int], Path], dialect: str, command: list[str]
) -> None:
    small, large = _peak(logs[dialect, N], command), _peak(logs[dialect, 4 * N], command)
    assert_flat(small, large, label=f"{dialect} {command[0]} {N} -> {4 * N} frames")
