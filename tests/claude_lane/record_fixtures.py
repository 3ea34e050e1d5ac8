"""Regenerate fixtures/claude/ from real Claude Code runs (``make claude-fixtures``).

Runs every lane scenario (tests/claude_lane/scenarios.py) inside a private network namespace
against the mock API, under a fixed scratch path so the recorded cwd is stable, and writes:

  fixtures/claude/projects/<scenario>/<session-id>.jsonl   the session as the scenario left it
      (+ <session-id>/subagents/agent-*.jsonl and .meta.json): a Claude home's layout
  fixtures/claude/lane/<scenario>/resume-request.json      what the CLI sent on --resume
  fixtures/claude/lane/<scenario>/resumed/<session-id>.jsonl   the file after that resume
  fixtures/claude/lane/<scenario>/runs.json                 how each run ended

and ``fixtures/claude/zstd/<scenario>/<session-id>.jsonl.zstd``, a multi-frame zstd twin of
each (twins.py). ``damaged-*`` scenarios are real sessions damaged by hand
(tests/claude_lane/damage.py) before the resume, so the CLI's reaction to each defect is
recorded too. uuids and timestamps differ on every regeneration; goldens must then be
refreshed (``make goldens``) after reading their diff.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.claude_lane import netns  # noqa: E402


def main() -> None:
    netns.reexec_private([sys.executable, *sys.argv])
    from tests.claude_lane import twins
    from tests.claude_lane.mock_api import MockServer
    from tests.claude_lane.scenarios import SCENARIOS, record
    from tests.claude_lane.script import respond

    binary = (
        subprocess.run(
            ["bash", str(ROOT / "tests/claude_lane/setup.sh")], check=True, capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    scratch = Path("/tmp/sesstool-claude-lane")
    shutil.rmtree(scratch, ignore_errors=True)
    target = ROOT / "fixtures" / "claude"
    names = sys.argv[1:] or list(SCENARIOS)
    if names == list(SCENARIOS):
        for sub in ("projects", "lane"):
            shutil.rmtree(target / sub, ignore_errors=True)
    for name in names:
        for sub in ("projects", "lane"):
            shutil.rmtree(target / sub / name, ignore_errors=True)
    with MockServer(respond) as mock:
        for name in names:
            rec = record(name, binary, mock, scratch, scratch / "evidence" / name)
            shutil.copytree(rec.session_dir, target / "projects" / name)
            lane = target / "lane" / name
            lane.mkdir(parents=True)
            shutil.copytree(rec.directory / "resumed", lane / "resumed")
            shutil.copyfile(rec.resume_request, lane / "resume-request.json")
            shutil.copyfile(rec.directory / "runs.json", lane / "runs.json")
            print(f"recorded {name}: {json.dumps(rec.runs)}", flush=True)
    for twin in twins.build(target):
        print(f"zstd twin {twin.relative_to(target)}", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
