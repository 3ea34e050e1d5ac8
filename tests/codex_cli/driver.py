"""Drive the real Codex CLI (``codex exec --json``) headless against the mock Responses API.

Each run gets the Codex home it is given (``CODEX_HOME``, config per agent-formats §0), the
scripted replies, and optionally a signal sent when a condition holds (a marker file the
command creates, a line in the rollout, a reply served). The result keeps the exit status, the
``--json`` events, every request body the mock recorded, and the rollout file the run wrote.
Must run inside a private network namespace (``netns.ensure_private_net``).
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

from tests.codex_cli.mock_responses import MockResponses, Script, Step

Json = dict[str, Any]

CONFIG = """\
model = "mock-model"
model_provider = "mock"
model_instructions_file = "{instructions}"
check_for_update_on_startup = false
{extra}
[model_providers.mock]
name = "mock"
base_url = "{base_url}"
wire_api = "responses"
env_key = "SESSTOOL_MOCK_KEY"

[skills]
include_instructions = false

[skills.bundled]
enabled = false
{tables}
"""

INSTRUCTIONS = "You are the sesstool lane's test agent. Answer briefly.\n"


@dataclass(frozen=True, slots=True)
class Home:
    """A Codex home (``CODEX_HOME``) and the working directory runs use."""

    path: Path
    work: Path

    @property
    def sessions(self) -> Path:
        return self.path / "sessions"

    def rollouts(self) -> list[Path]:
        return sorted(p for p in self.sessions.rglob("rollout-*") if p.is_file())

    def rollout_of(self, thread_id: str) -> Path:
        found = [p for p in self.rollouts() if thread_id in p.name]
        if len(found) != 1:
            raise AssertionError(f"expected one rollout for thread {thread_id}, found {found}")
        return found[0]


@dataclass(slots=True)
class Run:
    """What one ``codex exec`` invocation did."""

    args: list[str]
    returncode: int
    events: list[Json]
    stderr: str
    requests: list[Json]
    signalled: int | None = None
    thread_id: str | None = None
    notes: list[str] = field(default_factory=list)

    def model_inputs(self) -> list[list[Json]]:
        return [list(body.get("input") or []) for body in self.requests]


Trigger = Callable[["Watch"], bool]


@dataclass(slots=True)
class Watch:
    """What a trigger may look at while the CLI runs."""

    home: Home
    mock: MockResponses
    started: float

    def rollout_text(self) -> str:
        texts = []
        for path in self.home.rollouts():
            if path.suffix == ".jsonl":
                try:
                    texts.append(path.read_text(errors="replace"))
                except FileNotFoundError:
                    continue
        return "\n".join(texts)


def when_file(name: str) -> Trigger:
    return lambda w: (w.home.work / name).exists()


def when_rollout_has(*needles: str) -> Trigger:
    return lambda w: all(n in w.rollout_text() for n in needles)


def when_served(count: int) -> Trigger:
    return lambda w: w.mock.wait_for_replies(count, 0)


def all_of(*triggers: Trigger) -> Trigger:
    return lambda w: all(t(w) for t in triggers)


@dataclass(frozen=True, slots=True)
class Kill:
    """Send ``signum`` once ``trigger`` holds, after ``settle`` seconds more."""

    signum: int
    trigger: Trigger
    settle: float = 0.5


class Lane:
    def __init__(self, codex: Path, root: Path) -> None:
        self.codex = codex
        self.root = root
        self.mock = MockResponses().start()
        root.mkdir(parents=True, exist_ok=True)
        self._instructions = root / "instructions.md"
        self._instructions.write_text(INSTRUCTIONS)

    def close(self) -> None:
        self.mock.stop()

    def new_home(self, name: str, *, extra: str = "", tables: str = "") -> Home:
        path = self.root / name / "codex-home"
        work = self.root / name / "work"
        path.mkdir(parents=True)
        work.mkdir(parents=True)
        (path / "config.toml").write_text(
            CONFIG.format(
                instructions=self._instructions,
                base_url=self.mock.base_url,
                extra=extra,
                tables=tables,
            )
        )
        return Home(path=path, work=work)

    def env(self, home: Home) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home.path.parent),
            "CODEX_HOME": str(home.path),
            "SESSTOOL_MOCK_KEY": "dummy",
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
        }
        return env

    def exec(
        self,
        home: Home,
        prompt: str,
        replies: list[list[Step]],
        *,
        resume: str | None = None,
        kill: Kill | None = None,
        default: list[Step] | None = None,
        timeout: float = 90.0,
    ) -> Run:
        """``codex exec [resume ID] --json ... PROMPT`` with the scripted replies."""
        self.mock.load(Script(replies=list(replies), default=default))
        args = [str(self.codex), "exec"]
        if resume is not None:
            args += ["resume", resume]
        args += ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt]
        proc = subprocess.Popen(
            args,
            cwd=home.work,
            env=self.env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        watch = Watch(home=home, mock=self.mock, started=time.monotonic())
        signalled: int | None = None
        notes: list[str] = []
        if kill is not None:
            deadline = time.monotonic() + timeout
            while proc.poll() is None and time.monotonic() < deadline:
                if kill.trigger(watch):
                    time.sleep(kill.settle)
                    if proc.poll() is None:
                        proc.send_signal(kill.signum)
                        signalled = kill.signum
                    break
                time.sleep(0.05)
            else:
                notes.append("kill trigger never held")
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            notes.append("timed out")
        if signalled is not None:
            # Whatever the CLI left running in its session (a `sleep`) goes too.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        events = []
        for line in out.decode(errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                notes.append(f"stdout line is not JSON: {line[:200]}")
        thread_id = next((e.get("thread_id") for e in events if e.get("type") == "thread.started"), None)
        return Run(
            args=args,
            returncode=proc.returncode,
            events=events,
            stderr=err.decode(errors="replace"),
            requests=self.mock.model_requests(),
            signalled=signalled,
            thread_id=thread_id,
            notes=notes,
        )


def reap(home: Home) -> None:
    """Kill what a signalled run left behind: processes whose working directory is the run's."""
    work = str(home.work)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "cwd") == work:
                os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue
