"""A stateful fuzz of the write path (RELIABILITY item 25): a writer appends, leaves turns open and
tears its writes, while sesstool repairs, forks, migrates and validates. After every step: the
source was not changed by sesstool, every published file validates and never changes again,
no temporary file is left behind, and every exit status is a documented one."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.conftest import FIXTURES, examples, run_sesstool

DOCUMENTED = {0, 1, 2, 3, 4, 5, 6}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def committed_sha(path: Path) -> str:
    """SHA-256 of the log up to its last newline: all a repair's output depends on (a torn tail
    after it is dropped, whatever its bytes)."""
    data = path.read_bytes()
    return hashlib.sha256(data[: data.rfind(b"\n") + 1]).hexdigest()


class WritePath(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="sesstool-stateful-"))
        self.log = self.dir / "session.jsonl"
        shutil.copy(FIXTURES / "dsh" / "v0-tiny" / "session.jsonl", self.log)
        self.seq = 13
        self.turn = 1
        self.open_turn = False
        self.torn = False  # the file ends in a torn write (no newline)
        self.bad_line = False  # a write appended after a tear merged into a line nobody can read
        self.corrupt = False  # ... and a later turn/end committed it (§6.3)
        self.published: dict[Path, str] = {}
        self.repaired_from: dict[Path, str] = {}  # a repair's output → committed_sha of its log
        self.source_sha = sha(self.log)
        self.n = 0

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- the writer (not sesstool): the only thing allowed to change the source ------------------

    def _append(self, records: list[dict[str, Any]]) -> None:
        with self.log.open("ab") as f:
            for record in records:
                f.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        self.source_sha = sha(self.log)
        if self.torn:  # the first record completed the torn line: one undecodable line
            self.torn, self.bad_line = False, True
            records = records[1:]
        if self.bad_line and any(r["type"] == "turn/end" for r in records):
            self.corrupt = True

    def expected_verdict(self) -> str:
        """What §6.3 makes of the log the writer has produced so far."""
        if self.corrupt:
            return "corrupt"
        if self.torn or self.bad_line:
            return "torn"
        return "interrupted" if self.open_turn else "clean"

    def _event(self, kind: str, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
        record = {"type": kind, "seq": self.seq, "time": 2000 + self.seq, "data": data, **extra}
        self.seq += 1
        return record

    @rule()
    def append_turn(self) -> None:
        if self.open_turn:
            return
        self.turn += 1
        t = self.turn
        self._append(
            [
                self._event("turn/start", {"turn": t}),
                self._event("step/start", {"turn": t, "step": 1}),
                self._event(
                    "user/message",
                    {
                        "id": f"u{t}",
                        "role": "user",
                        "source": {"kind": "user"},
                        "content": [{"type": "text", "text": f"hi {t}"}],
                    },
                    surfaceOp="append",
                ),
                self._event("step/end", {"turn": t, "step": 1}),
                self._event("turn/end", {"turn": t, "reason": {"kind": "completed"}}),
            ]
        )

    @rule()
    def leave_a_call_open(self) -> None:
        if self.open_turn:
            return
        self.turn += 1
        t = self.turn
        call = {"type": "tool-call", "id": f"c{t}", "name": "bash", "arguments": "{}"}
        self._append(
            [
                self._event("turn/start", {"turn": t}),
                self._event("step/start", {"turn": t, "step": 1}),
                self._event(
                    "assistant/message",
                    {
                        "turn": t,
                        "step": 1,
                        "message": {
                            "id": f"a{t}",
                            "role": "assistant",
                            "content": [call],
                            "source": {"kind": "model", "provider": "p", "model": "m"},
                        },
                    },
                    surfaceOp="append",
                ),
                self._event(
                    "tool/call", {"turn": t, "step": 1, "callId": f"c{t}", "name": "bash", "arguments": "{}"}
                ),
            ]
        )
        self.open_turn = True

    @rule()
    def finish_the_open_turn(self) -> None:
        if not self.open_turn:
            return
        t = self.turn
        self._append(
            [
                self._event(
                    "tool/result",
                    {
                        "turn": t,
                        "step": 1,
                        "message": {
                            "id": f"r{t}",
                            "role": "user",
                            "source": {"kind": "tool", "callId": f"c{t}"},
                            "content": [
                                {
                                    "type": "tool-result",
                                    "toolCallId": f"c{t}",
                                    "content": [{"type": "text", "text": "ok"}],
                                    "isError": False,
                                }
                            ],
                        },
                    },
                    sourceEventSeqs=[self.seq - 1],
                    surfaceOp="append",
                ),
                self._event("step/end", {"turn": t, "step": 1}),
                self._event("turn/end", {"turn": t, "reason": {"kind": "completed"}}),
            ]
        )
        self.open_turn = False

    @rule(cut=st.integers(1, 40))
    def tear_a_write(self, cut: int) -> None:
        record = json.dumps(self._event("todo/write", {"todos": []})).encode()
        with self.log.open("ab") as f:
            f.write(record[:cut])  # a crash mid-append: no newline
        self.source_sha = sha(self.log)
        self.torn = True

    # -- sesstool ------------------------------------------------------------------------------

    def _run(self, *args: str, expect: int | None = None) -> dict[str, Any] | None:
        self.n += 1
        result = run_sesstool(*args)
        assert result.exit_code in DOCUMENTED, (args, result.exit_code, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        if expect is not None:
            assert result.exit_code == expect, (args, self.expected_verdict(), result.stderr)
        if result.exit_code == 0 and args[-1] != "--dry-run" and "--json" in args:
            doc: dict[str, Any] = json.loads(result.stdout)
            return doc
        return None

    def _record(self, doc: dict[str, Any] | None) -> None:
        if doc is None or not doc.get("output"):
            return
        out = Path(doc["output"]["path"])
        assert out not in self.published, "a path was published twice"
        self.published[out] = sha(out)
        checked = run_sesstool("validate", "--format", "json", str(out))
        report = json.loads(checked.stdout)["files"][0]
        errors = [f for f in report["findings"] if f["severity"] == "error"]
        assert not errors, (out, errors)

    @rule()
    def repair(self) -> None:
        out = self.dir / f"repaired-{self.n}.jsonl"
        verdict = self.expected_verdict()
        doc = self._run(
            "repair", "--json", "-o", str(out), str(self.log), expect=3 if verdict == "corrupt" else 0
        )
        if doc is not None:
            assert doc["status"] == ("balanced" if verdict == "clean" else "repaired"), (verdict, doc)
        self._record(doc)
        if doc is not None and doc.get("output"):
            self.repaired_from[out] = committed_sha(self.log)

    @rule()
    def repair_again_to_the_same_target(self) -> None:
        if not self.published:
            return
        target = next(iter(self.published))
        result = run_sesstool("repair", "-o", str(target), str(self.log))
        # never overwrites: 6 — unless there is nothing to write (balanced, 0), the log is
        # corrupt (3, refused before any target is considered), or the target is the repair of
        # this log's committed bytes — a torn tail written since is dropped either way — (repair
        # is deterministic: "already published, identical", 0, nothing linked; issue 15 item
        # 12, docs/format.md)
        identical = self.repaired_from.get(target) == committed_sha(self.log)
        expected = {"clean": 0, "corrupt": 3}.get(self.expected_verdict(), 0 if identical else 6)
        assert result.exit_code == expected, (self.expected_verdict(), result.stderr)
        if identical and expected == 0:
            assert "already published, identical" in result.stdout, result.stdout

    @rule()
    def fork(self) -> None:
        expect = 3 if self.expected_verdict() == "corrupt" else 0
        self._record(self._run("fork", "--json", "--id", f"child-{self.n}", str(self.log), expect=expect))

    @rule()
    def migrate(self) -> None:
        out = self.dir / f"migrated-{self.n}.v4.jsonl"
        expect = 3 if self.expected_verdict() == "corrupt" else 0
        self._record(self._run("migrate", "--json", "-o", str(out), str(self.log), expect=expect))

    @rule()
    def validate(self) -> None:
        result = run_sesstool("validate", "--format", "json", str(self.log))
        assert result.exit_code in (0, 1)
        verdict = json.loads(result.stdout)["files"][0]["verdict"]["verdict"]
        assert verdict == self.expected_verdict()
        assert result.exit_code == (1 if verdict == "corrupt" else 0)

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def source_only_changed_by_the_writer(self) -> None:
        assert sha(self.log) == self.source_sha

    @invariant()
    def published_files_never_change(self) -> None:
        for path, digest in self.published.items():
            assert sha(path) == digest, path

    @invariant()
    def no_temporary_debris(self) -> None:
        assert not [p for p in self.dir.rglob("*") if p.name.endswith(".tmp")]


WritePath.TestCase.settings = settings(
    max_examples=examples(100),
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestWritePath = WritePath.TestCase


def test_repairing_a_torn_log_again_to_the_same_target_is_identical() -> None:
    """Pinned (found by `make test-deep`, issue 12): a torn write, a repair, the same repair to
    the same target — identical bytes, exit 0, not the refusal (6) the machine once expected."""
    state = WritePath()
    try:
        state.start()
        state.tear_a_write(cut=1)
        state.repair()
        state.repair_again_to_the_same_target()
        state.published_files_never_change()
    finally:
        state.teardown()
