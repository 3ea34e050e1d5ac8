"""Issue 11 item 1, one report per file (docs/reliability.md, "Audit, stop 29", "Still growing,
not bounded" (3)): ``validate`` kept a ``FileResult`` with its whole scan per path and per side
file until it rendered, ``inspect`` a ``Companion`` with its scan per subagent file, ``list`` a
row per log — about 7 KiB a tiny file. Now each file's result is cut down to what the views
print of it as it is made and kept in a ``store.spool.ItemSpool`` (here lowered to 64 KiB in
memory, then an unnamed temporary file), the totals added up as the files are checked.

Peak RSS of a child (``hostile_logs.run_measured``, one malloc arena and a fixed mmap threshold)
for a Claude Code session of N = 200 and 4N = 800 tiny subagent files: within 2 MiB. On main's
code before (a74b652) every ``validate`` and ``inspect`` case grew by more and fails (validate
text/json/github/junit/sarif +3.7/+5.2/+3.5/+3.5/+7.0 MiB, inspect/--json +4.1/+8.2). The
``list`` cases are guards of its streamed document and spilled sort only: main's ``list`` grew
+0.56 / +1.89 MiB here and passes; a root of many more logs still grows by its paths
(docs/reliability.md, "Still growing, not bounded" (3))."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.hostile_logs import FIXED_MMAP, Measured, MiB, assert_flat, run_measured
from tests.adversarial.many_files import write_session
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

N = 200
LOWERED = "from sesstool.store import spool\nspool.ITEMS_MEMORY = 64 << 10\n"

CASES = [
    ["validate"],
    ["validate", "--format", "json"],
    ["validate", "--format", "github"],
    ["validate", "--format", "junit"],
    ["validate", "--format", "sarif"],
    ["inspect"],
    ["inspect", "--json"],
    ["list"],
    ["list", "--json"],
]


class Runs:
    def __init__(self, where: Path) -> None:
        self.where = where
        (where / "site").mkdir(exist_ok=True)
        (where / "site" / "sitecustomize.py").write_text(LOWERED)
        self.homes: dict[int, Path] = {}

    def home(self, n: int) -> tuple[Path, Path]:
        """(the Claude Code home of a session of ``n`` subagent files, its main transcript)."""
        home = self.where / f"home-{n}"
        main = home / "projects" / "many" / "e7114e93-e94d-5201-934d-81e8a6bea216.jsonl"
        if not main.exists():
            write_session(home, n)
        return home, main

    def run(self, n: int, args: list[str]) -> Measured:
        home, main = self.home(n)
        target = home if args[0] == "list" else main
        measured = run_measured(
            [*args, str(target)],
            address_space=2 << 30,
            cwd=self.where,
            env={"PYTHONPATH": f"{self.where / 'site'}:{ROOT}", **FIXED_MMAP},
        )
        assert measured.exit_code in (0, 1), measured.stderr
        return measured


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory.mktemp("many-files"))


def test_the_session_holds_what_it_is_named_for(runs: Runs) -> None:
    """Every subagent file is checked, shown and listed (one in ten not a session log)."""
    text = runs.run(40, ["validate"]).stdout.decode()
    assert "41 file(s) checked, 4 failing" in text
    assert text.count("not a session log") == 4
    shown = runs.run(40, ["inspect"]).stdout.decode()
    assert shown.count("agent file") == 40 and shown.count("agent meta") == 36
    assert "left without result: Bash toolu_7 " in shown
    listed = runs.run(40, ["list"]).stdout.decode()
    assert "41 files: 37 session logs, 4 not session logs" in listed


@pytest.mark.parametrize("args", CASES, ids=["-".join(a.lstrip("-") for a in c) for c in CASES])
def test_memory_does_not_grow_with_the_files(runs: Runs, args: list[str]) -> None:
    small = runs.run(N, args).peak_rss
    large = runs.run(4 * N, args).peak_rss
    print(args, N, round(small / MiB, 2), "→", round(large / MiB, 2))
    assert_flat(small, large)
