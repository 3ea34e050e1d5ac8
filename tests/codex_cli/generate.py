"""Regenerate fixtures/codex/ from the real Codex CLI (``make codex-fixtures``).

Runs every scenario of ``scenarios.py`` against the mock Responses API inside a private network
namespace, copies each rollout under its own file name, derives the defective rollouts from
real ones (``scenarios.MUTATIONS``), writes a zstd copy of each (a single frame, as Codex's
compression worker writes; ``multi-frame`` is split into frames of three lines), and records
what ``codex exec resume`` does with each file: accepted or refused, and the input of its first
model request. Nothing is normalised by hand; timestamps and ids are whatever the run produced.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import zstandard

from tests.codex_cli.netns import ensure_private_net

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "fixtures" / "codex"
SETUP = Path(__file__).resolve().parent / "setup.sh"
HOME_SCENARIOS = ("text", "kill-during-command", "compressed")


def codex_binary() -> Path:
    proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"codex setup failed ({proc.returncode}):\n{proc.stderr}")
    return Path(proc.stdout.strip().splitlines()[-1])


def plain_name(name: str) -> str:
    return name[: -len(".zst")] if name.endswith(".zst") else name


def single_frame(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(data)


def multi_frame(data: bytes, lines_per_frame: int = 3) -> bytes:
    lines = data.splitlines(keepends=True)
    comp = zstandard.ZstdCompressor(level=3, write_checksum=True)
    return b"".join(
        comp.compress(b"".join(lines[i : i + lines_per_frame])) for i in range(0, len(lines), lines_per_frame)
    )


def resume_record(
    lane: Any,
    home: Any,
    thread_id: str,
    rollout_name: str,
    data: bytes,
    scratch: Path,
    keep: dict[str, bytes] | None = None,
) -> dict[str, Any]:
    """Put ``data`` in place of the thread's rollout in a copy of its home and resume it once
    (``keep``, when given, receives the rollout as the resume left it, under "after")."""
    from tests.codex_cli.scenarios import RESUME_PROMPT, copy_home, resume_input

    copy = copy_home(home, scratch)
    current = copy.rollout_of(thread_id)
    current.unlink()
    (current.parent / rollout_name).write_bytes(data)
    run, inputs = resume_input(lane, copy, thread_id)
    if run.requests:
        resumed = copy.rollout_of(thread_id)
        if RESUME_PROMPT.encode() not in resumed.read_bytes():
            raise AssertionError(f"the resume did not append to the copy {resumed}")
        if keep is not None:
            keep["after"] = resumed.read_bytes()
    return {
        "command": "codex exec resume <thread> --json --skip-git-repo-check "
        "--dangerously-bypass-approvals-and-sandbox PROMPT",
        "prompt": "continue from where you stopped",
        "returncode": run.returncode,
        "accepted": bool(run.requests),
        "errors": [e for e in run.events if e.get("type") in ("error", "turn.failed")],
        "stderr_tail": "\n".join(line for line in run.stderr.splitlines()[-5:] if "PATH aliases" not in line),
        "input": inputs,
    }


def write_fixture(
    name: str, rollout_name: str, data: bytes, resume: dict[str, Any], *, zstd: bytes | None = None
) -> None:
    target = OUT / name
    target.mkdir(parents=True)
    plain = plain_name(rollout_name)
    (target / plain).write_bytes(data)
    (target / (plain + ".zst")).write_bytes(zstd if zstd is not None else single_frame(data))
    (target / "resume.json").write_text(json.dumps(resume, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    ensure_private_net()
    from tests.codex_cli.driver import Lane
    from tests.codex_cli.scenarios import MUTATIONS, SCENARIOS

    codex = codex_binary()
    root = Path(tempfile.mkdtemp(prefix="sesstool-codex-"))
    lane = Lane(codex, root / "runs")
    try:
        recorded = {}
        for name, scenario in SCENARIOS.items():
            print(f"recording {name}", file=sys.stderr)
            recorded[name] = scenario(lane)
        if OUT.exists():
            for child in OUT.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
        OUT.mkdir(parents=True, exist_ok=True)
        for name, rec in recorded.items():
            raw = rec.rollout.read_bytes()
            real_zstd = None
            if rec.rollout.name.endswith(".zst"):
                real_zstd = raw
                raw = zstandard.ZstdDecompressor().decompressobj().decompress(real_zstd)
            resume = resume_record(
                lane, rec.home, rec.thread_id, rec.rollout.name, real_zstd or raw, root / "resume" / name
            )
            write_fixture(name, rec.rollout.name, raw, resume, zstd=real_zstd)
        tool = recorded["tool-call"]
        raw = tool.rollout.read_bytes()
        write_fixture(
            "multi-frame",
            tool.rollout.name,
            raw,
            resume_record(
                lane,
                tool.home,
                tool.thread_id,
                tool.rollout.name + ".zst",
                multi_frame(raw),
                root / "resume" / "multi-frame",
            ),
            zstd=multi_frame(raw),
        )
        for name, source, mutate in MUTATIONS:
            rec = recorded[source]
            raw = (OUT / source / plain_name(rec.rollout.name)).read_bytes()
            data = mutate(raw)
            print(f"mutating {source} -> {name}", file=sys.stderr)
            keep: dict[str, bytes] = {}
            resume = resume_record(
                lane,
                rec.home,
                rec.thread_id,
                plain_name(rec.rollout.name),
                data,
                root / "resume" / name,
                keep,
            )
            write_fixture(name, rec.rollout.name, data, resume)
            if name == "torn-tail":
                # What Codex itself leaves after resuming a torn rollout: it writes "\n" first, so
                # the torn fragment stays mid-file (agent-formats §0).
                after = keep["after"]
                write_fixture(
                    "torn-tail-resumed",
                    rec.rollout.name,
                    after,
                    resume_record(
                        lane,
                        rec.home,
                        rec.thread_id,
                        plain_name(rec.rollout.name),
                        after,
                        root / "resume" / "torn-tail-resumed",
                    ),
                )
        # A Codex home (sessions/YYYY/MM/DD/rollout-*) holding three of the rollouts as the CLI
        # left them, one of them compressed.
        home_dir = OUT / "home"
        for name in HOME_SCENARIOS:
            rec = recorded[name]
            rel = rec.rollout.relative_to(rec.home.path)
            dest = home_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(rec.rollout, dest)
    finally:
        lane.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
