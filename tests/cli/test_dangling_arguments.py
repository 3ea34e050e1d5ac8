"""inspect shows what a dangling call was doing: its arguments, cut and escaped (issue 15 item 8).

Every dialect whose inspect lists dangling calls shows them: dsh and mini here (the shared
envelope rows), Codex and Claude Code in their own goldens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sesstool.core.humanize import PREVIEW_CHARS
from tests.conftest import FIXTURES, Sesstool

# a command with a terminal escape, a newline and a bidi override, long enough to be cut
HOSTILE = '{\\"cmd\\":\\"printf \\u001b[2J; echo \\u202e done\\n' + "x" * 400 + '\\"}'
SHOWN = '{"cmd":"printf \\x1b[2J; echo \\u202e done\\n'


@pytest.mark.parametrize(
    ("fixture", "original", "pending"),
    [
        (
            "dsh/crash-dangling-call",
            '{\\"cmd\\":\\"rm -r tmp\\"}',
            "pending call_7 bash (step 1): started at seq 4, outcome unknown; arguments ",
        ),
        (
            "mini/dangling-call",
            '{\\"cmd\\":\\"ls src | wc -l\\"}',
            "pending call_1 bash: started at seq 5, outcome unknown; arguments ",
        ),
    ],
)
def test_pending_call_shows_its_arguments_cut_and_escaped(
    sesstool: Sesstool, tmp_path: Path, fixture: str, original: str, pending: str
) -> None:
    text = (FIXTURES / fixture / "session.jsonl").read_text()
    assert text.count(original) == 2  # the advertised call and its tool/call
    log = tmp_path / "session.jsonl"
    log.write_text(text.replace(original, HOSTILE))
    run = sesstool("inspect", str(log))
    assert run.exit_code == 0, run.stderr
    (row,) = [line for line in run.stdout.splitlines() if "pending call_" in line]
    shown = row.split(pending, 1)[1]
    assert shown.startswith(SHOWN)
    assert "\x1b" not in run.stdout and "\u202e" not in run.stdout
    assert shown.endswith("x…")
    # PREVIEW_CHARS characters of the decoded arguments, each escape spelled out
    assert len(shown) == PREVIEW_CHARS + 1 + len("\\x1b") - 1 + len("\\u202e") - 1 + len("\\n") - 1


def test_the_untouched_fixture_shows_the_command(sesstool: Sesstool) -> None:
    run = sesstool("inspect", "fixtures/dsh/crash-dangling-call/session.jsonl")
    assert 'outcome unknown; arguments {"cmd":"rm -r tmp"}' in run.stdout
