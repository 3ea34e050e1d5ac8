"""The lane's scenarios: real Claude Code runs that end cleanly, crash, or are interrupted.

Each scenario runs the CLI in its own private home (session id fixed per scenario), copies the
transcript (and any subagent files) as the scenario left them, then resumes the session once
with ``lane: continue`` and keeps what the CLI sent to the model on that resume and what it
appended to the file. That is the ground truth the lane judges sesstool against (spec
agent-formats §0).
"""

from __future__ import annotations

import json
import shutil
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.claude_lane import damage
from tests.claude_lane.driver import Home, Kill, Result, has_tool_result, has_tool_use, lines_of, run_cli
from tests.claude_lane.mock_api import MockServer
from tests.claude_lane.script import is_compaction

Json = dict[str, Any]
NAMESPACE = uuid.UUID("5e557001-0000-4c1a-8de0-000000000017")
RESUME_PROMPT = "lane: continue"


def session_id_for(name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"sesstool claude lane {name}"))


@dataclass(frozen=True, slots=True)
class Recording:
    """One scenario's evidence, all inside ``directory``."""

    name: str
    session_id: str
    directory: Path
    runs: tuple[Json, ...]

    @property
    def transcript(self) -> Path:
        """The session file as the scenario left it (before the lane's resume)."""
        return self.directory / "session" / f"{self.session_id}.jsonl"

    @property
    def session_dir(self) -> Path:
        return self.directory / "session"

    @property
    def resumed(self) -> Path:
        """The same file after ``claude --resume`` appended to it."""
        return self.directory / "resumed" / f"{self.session_id}.jsonl"

    @property
    def resume_request(self) -> Path:
        return self.directory / "resume-request.json"


Step = Callable[["Context"], None]


@dataclass(slots=True)
class Context:
    binary: str
    mock: MockServer
    home: Home
    session_id: str
    runs: list[Json]

    def transcript_or_none(self) -> Path | None:
        found = sorted(self.home.config.glob(f"projects/*/{self.session_id}.jsonl"))
        return found[0] if found else None

    def subagent_or_none(self) -> Path | None:
        found = self.home.subagent_files(self.session_id)
        return found[0] if found else None

    def damage(self, how: Callable[[bytes], bytes]) -> None:
        """Hand-made damage to the session file before the lane's resume (tests/claude_lane/damage.py)."""
        path = self.home.transcript(self.session_id)
        path.write_bytes(how(path.read_bytes()))

    def run(
        self, prompt: str, *, first: bool = False, kill: Kill | None = None, session_id: str | None = None
    ) -> Result:
        own = session_id or self.session_id
        result = run_cli(
            self.binary,
            self.home,
            self.mock,
            prompt,
            session_id=own if first else None,
            resume=None if first else own,
            kill=kill,
        )
        self.runs.append(
            {
                "prompt": prompt,
                "returncode": result.returncode,
                "killed": result.killed,
                "signal": kill.sig if kill else None,
            }
        )
        if kill is None and result.returncode != 0:
            raise RuntimeError(f"claude -p {prompt!r} failed ({result.returncode}):\n{result.stderr}")
        return result


def _slow_tool_running(
    tool_id: str, sig: int = signal.SIGKILL, group: bool = True
) -> Callable[[Context], Kill]:
    return lambda ctx: Kill(has_tool_use(ctx.transcript_or_none, tool_id), sig=sig, group=group, settle=1.0)


def text(ctx: Context) -> None:
    ctx.run("lane: say hello", first=True)


def tool_one(ctx: Context) -> None:
    ctx.run("lane: run one tool", first=True)


def tool_parallel(ctx: Context) -> None:
    ctx.run("lane: run two tools", first=True)


def kill_tool(ctx: Context) -> None:
    ctx.run("lane: run a slow tool", first=True, kill=_slow_tool_running("toolu_lane_slow_0")(ctx))


def kill_parallel(ctx: Context) -> None:
    ready_fast = has_tool_result(ctx.transcript_or_none, "toolu_lane_mix_fast")
    ready_slow = has_tool_use(ctx.transcript_or_none, "toolu_lane_mix_slow")
    kill = Kill(lambda: ready_fast() and ready_slow(), settle=1.0)
    ctx.run("lane: run a fast and a slow tool", first=True, kill=kill)


def kill_mid_stream(ctx: Context) -> None:
    ctx.mock.stalling.clear()
    ctx.run("lane: stream slowly", first=True, kill=Kill(ctx.mock.stalling.is_set, settle=0.5))


def sigint_tool(ctx: Context) -> None:
    ctx.run(
        "lane: run a slow tool",
        first=True,
        kill=_slow_tool_running("toolu_lane_slow_0", signal.SIGINT, group=False)(ctx),
    )


def sigterm_tool(ctx: Context) -> None:
    ctx.run(
        "lane: run a slow tool",
        first=True,
        kill=_slow_tool_running("toolu_lane_slow_0", signal.SIGTERM, group=False)(ctx),
    )


def compact(ctx: Context) -> None:
    ctx.run("lane: run one tool", first=True)
    ctx.run("/compact")


def subagent(ctx: Context) -> None:
    ctx.run("lane: delegate", first=True)


def kill_subagent(ctx: Context) -> None:
    kill = Kill(has_tool_use(ctx.subagent_or_none, "toolu_lane_subslow_0"), settle=1.0)
    ctx.run("lane: delegate slow", first=True, kill=kill)


def damaged(how: Callable[[bytes], bytes], prompt: str = "lane: run one tool") -> Step:
    def step(ctx: Context) -> None:
        ctx.run(prompt, first=True)
        ctx.damage(how)

    return step


def two_sessions(ctx: Context) -> None:
    other = session_id_for("two-sessions-other")
    ctx.run("lane: say hello", first=True, session_id=other)
    ctx.run("lane: run one tool", first=True)
    ctx.damage(damage.foreign_session(ctx.home.transcript(other).read_bytes()))


def concurrent_writers(ctx: Context) -> None:
    """Two CLI processes resume the same session at once (§1.8 "concurrent writers fork the
    DAG"): the second starts while the first one's tool runs, so their entries interleave."""
    from concurrent.futures import ThreadPoolExecutor

    ctx.run("lane: say hello", first=True)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(ctx.run, "lane: run a medium tool")
        ready = has_tool_use(ctx.transcript_or_none, "toolu_lane_medium_0")
        while not ready():
            if first.done():
                first.result()
                raise RuntimeError("the medium tool never started")
            time.sleep(0.05)
        second = pool.submit(ctx.run, "lane: run one tool")
        first.result()
        second.result()


SCENARIOS: dict[str, Step] = {
    "text": text,
    "tool-one": tool_one,
    "tool-parallel": tool_parallel,
    "kill-tool": kill_tool,
    "kill-parallel-one-answered": kill_parallel,
    "kill-mid-stream": kill_mid_stream,
    "sigint-tool": sigint_tool,
    "sigterm-tool": sigterm_tool,
    "compact": compact,
    "subagent": subagent,
    "kill-subagent": kill_subagent,
    "damaged-torn-tail": damaged(damage.cut_last_line),
    "damaged-nul-run": damaged(damage.nul_run),
    "damaged-orphan-result": damaged(damage.delete_tool_use),
    "damaged-broken-parent": damaged(damage.delete_attachment),
    "damaged-duplicate-uuid": damaged(damage.duplicate_prompt),
    "damaged-unknown-type": damaged(damage.unknown_type),
    "damaged-two-sessions": two_sessions,
    "damaged-entry-shape": damaged(damage.drop_uuid),
    "damaged-sidechain-result": damaged(damage.sidechain_result),
    "damaged-sidechain-orphan": damaged(damage.sidechain_orphan),
    "concurrent-writers": concurrent_writers,
}


def normalize_messages(messages: list[Json]) -> list[Json]:
    """A request's messages without transport detail: string content as one text block, no
    ``cache_control`` markers (the CLI moves them between requests; they are not content)."""
    normalized = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Json] = [{"type": "text", "text": content}]
        else:
            blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in content or []]
        normalized.append({"role": message.get("role"), "content": blocks})
    return normalized


def record(name: str, binary: str, mock: MockServer, work: Path, out: Path) -> Recording:
    """Run scenario ``name`` in a fresh home under ``work``; write its evidence to ``out``."""
    session_id = session_id_for(name)
    home = Home.make(work, name)
    ctx = Context(binary, mock, home, session_id, [])
    SCENARIOS[name](ctx)
    out.mkdir(parents=True, exist_ok=True)
    _copy_session(home, session_id, out / "session")
    before = len(mock.recorder.snapshot())
    ctx.run(RESUME_PROMPT)
    requests = [
        r["body"]
        for r in mock.recorder.snapshot()[before:]
        if r["path"].startswith("/v1/messages") and not is_compaction(r["body"])
    ]
    if not requests:
        raise RuntimeError(f"{name}: the resume sent no request to the model")
    (out / "resume-request.json").write_text(
        json.dumps(normalize_messages(requests[0]["messages"]), indent=1, ensure_ascii=False) + "\n"
    )
    _copy_session(home, session_id, out / "resumed")
    (out / "runs.json").write_text(json.dumps(ctx.runs, indent=1) + "\n")
    return Recording(name, session_id, out, tuple(ctx.runs))


def _copy_session(home: Home, session_id: str, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    source = home.transcript(session_id)
    shutil.copyfile(source, dest / source.name)
    side = source.parent / session_id / "subagents"
    if side.is_dir():
        target = dest / session_id / "subagents"
        target.mkdir(parents=True, exist_ok=True)
        for item in sorted(side.iterdir()):
            if item.is_file():
                shutil.copyfile(item, target / item.name)


def entries(path: Path) -> list[Json]:
    return lines_of(path)
