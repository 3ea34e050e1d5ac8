"""zstd twins of the Claude fixtures (``fixtures/claude/zstd/<scenario>/<session>.jsonl.zstd``, and
``<session>/subagents/agent-*.jsonl.zstd`` beside it for the subagents' files, each with its
``agent-*.meta.json`` sidecar copied as it is).

Claude Code writes plain JSONL; sesstool also reads compressed copies (issue 17). Each twin is
a multi-frame zstd file (libzstd level 3, content checksums), one frame per eight lines, like
an archiver that compresses as it goes; a torn last line gets a frame of its own cut in half,
so the twin of a torn transcript is a torn zstd file. Deterministic for a given libzstd.
"""

from __future__ import annotations

from pathlib import Path

import zstandard

LINES_PER_FRAME = 8


def twin(raw: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    cut = raw.rfind(b"\n") + 1
    lines = [line + b"\n" for line in raw[:cut].split(b"\n")[:-1]]
    frames = [
        compressor.compress(b"".join(lines[i : i + LINES_PER_FRAME]))
        for i in range(0, len(lines), LINES_PER_FRAME)
    ]
    if cut < len(raw):
        last = compressor.compress(raw[cut:])
        frames.append(last[: len(last) // 2])
    return b"".join(frames)


def sources(claude: Path) -> list[Path]:
    """Every transcript that gets a twin: the sessions and their subagents' files, whose twins
    sit in the same layout (``<session>/subagents/agent-*.jsonl.zstd`` beside the session's)."""
    projects = claude / "projects"
    return sorted([*projects.glob("*/*.jsonl"), *projects.glob("*/*/subagents/agent-*.jsonl")])


def twin_path(claude: Path, source: Path) -> Path:
    relative = source.relative_to(claude / "projects")
    return claude / "zstd" / relative.parent / (source.name + ".zstd")


def sidecars(claude: Path) -> list[Path]:
    """The subagents' ``agent-*.meta.json`` files: the CLI writes them beside the transcripts,
    uncompressed, and a compressed copy of a session keeps them as they are."""
    return sorted((claude / "projects").glob("*/*/subagents/agent-*.meta.json"))


def sidecar_path(claude: Path, source: Path) -> Path:
    return claude / "zstd" / source.relative_to(claude / "projects")


def build(claude: Path) -> list[Path]:
    """Write every twin, and copy every sidecar beside its twin; returns the twins' paths."""
    written = []
    for source in sources(claude):
        target = twin_path(claude, source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(twin(source.read_bytes()))
        written.append(target)
    for source in sidecars(claude):
        sidecar_path(claude, source).write_bytes(source.read_bytes())
    return written
