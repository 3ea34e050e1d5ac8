"""Run the real Claude Code CLI headless against the mock Messages API (spec agent-formats §0).

Every run gets its own HOME / CLAUDE_CONFIG_DIR in a temporary directory, telemetry, error
reporting, auto-update and non-essential traffic off, and talks only to the mock on loopback.
The caller must already be inside a private network namespace (``netns.enter()``): the CLI
never sees a route off this machine. A run may be ended on purpose by a signal once a
condition holds (a tool is running, a reply is half streamed), which is how crashed
transcripts are made.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.claude_lane.mock_api import MockServer

Json = dict[str, Any]

# Size-only options: they keep committed fixtures small (no 50 KB system-prompt snapshot per turn)
# without changing how the transcript is written. The spec's command line is otherwise kept.
BASE_ARGS = (
    "--output-format",
    "stream-json",
    "--verbose",
    "--allowedTools",
    "Bash,Agent",
    "--system-prompt-snapshot",
    "off",
    "--tools",
    "Bash,Agent",
    "--system-prompt",
    "You are the sesstool lane agent.",
)


@dataclass(frozen=True, slots=True)
class Home:
    """One private Claude home: config dir, the cwd the CLI runs in, and where transcripts go."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / ".claude"

    @property
    def cwd(self) -> Path:
        return self.root / "work"

    def transcript(self, session_id: str) -> Path:
        found = sorted(self.config.glob(f"projects/*/{session_id}.jsonl"))
        if not found:
            raise FileNotFoundError(f"no transcript for session {session_id} under {self.config}")
        return found[0]

    def subagent_files(self, session_id: str) -> list[Path]:
        return sorted(self.config.glob(f"projects/*/{session_id}/subagents/agent-*.jsonl"))

    @staticmethod
    def make(parent: Path, name: str) -> Home:
        home = Home(parent / name)
        home.cwd.mkdir(parents=True, exist_ok=True)
        home.config.mkdir(parents=True, exist_ok=True)
        (home.root / "tmp").mkdir(parents=True, exist_ok=True)
        return home


@dataclass(frozen=True, slots=True)
class Kill:
    """End the run with ``sig`` once ``ready()`` is true (polled), then wait for the exit.

    ``group`` sends the signal to the CLI's whole process group (a crash takes its tool with
    it); otherwise only the CLI gets it, as a user's Ctrl-C or a service manager's TERM would.
    """

    ready: Callable[[], bool]
    sig: int = signal.SIGKILL
    group: bool = True
    settle: float = 0.7


@dataclass(slots=True)
class Result:
    returncode: int
    stdout: str
    stderr: str
    events: list[Json] = field(default_factory=list)
    killed: bool = False


def lane_env(home: Home, base_url: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home.root),
        "CLAUDE_CONFIG_DIR": str(home.config),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "dummy",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TMPDIR": str(home.root / "tmp"),
    }


def run_cli(
    binary: str,
    home: Home,
    mock: MockServer,
    prompt: str,
    *,
    session_id: str | None = None,
    resume: str | None = None,
    kill: Kill | None = None,
    extra: tuple[str, ...] = (),
    timeout: float = 120.0,
) -> Result:
    """One ``claude -p PROMPT`` run; returns its exit status, output and stream-json events."""
    args = [binary, "-p", prompt, *BASE_ARGS, *extra]
    if session_id is not None:
        args += ["--session-id", session_id]
    if resume is not None:
        args += ["--resume", resume]
    proc = subprocess.Popen(
        args,
        cwd=home.cwd,
        env=lane_env(home, mock.base_url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    killed = False
    if kill is not None:
        deadline = time.monotonic() + timeout
        while not kill.ready():
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise RuntimeError(f"the CLI exited ({proc.returncode}) before the kill point:\n{err}\n{out}")
            if time.monotonic() > deadline:
                _end(proc)
                raise TimeoutError("kill point never reached")
            time.sleep(0.05)
        time.sleep(kill.settle)
        if kill.group:
            os.killpg(proc.pid, kill.sig)
        else:
            proc.send_signal(kill.sig)
        killed = True
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(proc)
        out, err = proc.communicate()
        raise TimeoutError(f"claude did not finish in {timeout}s:\n{err}") from None
    finally:
        _reap_group(proc.pid)
    events = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
    return Result(proc.returncode, out, err, events, killed)


def _end(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _reap_group(pgid: int) -> None:
    # Tools the CLI started (a `sleep 30`) must not outlive the run: they belong to its group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def lines_of(path: Path) -> list[Json]:
    """The complete JSON lines of a transcript (a torn or unreadable line is skipped)."""
    if not path.exists():
        return []
    found = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def has_tool_use(path_of: Callable[[], Path | None], tool_id: str) -> Callable[[], bool]:
    def ready() -> bool:
        path = path_of()
        return path is not None and any(
            block.get("type") == "tool_use" and block.get("id") == tool_id
            for entry in lines_of(path)
            for block in _blocks(entry)
        )

    return ready


def has_tool_result(path_of: Callable[[], Path | None], tool_id: str) -> Callable[[], bool]:
    def ready() -> bool:
        path = path_of()
        return path is not None and any(
            block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id
            for entry in lines_of(path)
            for block in _blocks(entry)
        )

    return ready


def _blocks(entry: Json) -> list[Json]:
    message = entry.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
