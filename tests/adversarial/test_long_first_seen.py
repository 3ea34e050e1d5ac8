"""Issue 11 item 1 ("still open" 1): the values ``core/first_seen`` keeps, each as long as a log
chose it. A field keeps its first ``FIRST_SEEN`` (64) distinct values; before stop 32 each was held
whole (64 × the longest line per field) and the inspect rows, ``inspect --json`` and Claude's
``claude-writer-version`` printed them whole. Now a value past ``humanize.CHOSEN_CHARS`` (128)
characters is held as it is quoted (its first 128 characters and its length) with a 32-byte digest
of the whole value, by which values are still told apart (docs/format.md, "Memory").

Peak RSS of a child under an address-space limit, the mmap threshold fixed
(``hostile_logs.FIXED_MMAP``), never timed: the same log of ``COUNT`` (80: past the 64 kept)
distinct values per field, each value ``SHORT`` (16 KiB) and then 4 × as long (64 KiB). A line
carries one long value, so what a line costs while it is read differs by 48 KiB between the two.
Claude: session ids, writer versions, cwds, git branches, models and entry types (a line each);
Codex: line types and ``response_item`` types; dsh: ignorable event types and ``turn/end``
reason kinds. Figures (main's code / now, MiB, 16 → 64 KiB values) are in the commit message
that added this file; every case fails on main's code by more than the 2 MiB bound."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sesstool.core.first_seen import FIRST_SEEN
from sesstool.core.humanize import chosen
from tests.adversarial.claude_hostile import SESSION, _entry
from tests.adversarial.codex_hostile import Lines, meta
from tests.adversarial.hostile_logs import (
    FIXED_MMAP,
    V4_HEADER,
    assert_flat,
    json_objects,
    output_of,
    run_measured,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # 12 children on logs of 8 to 31 MB

COUNT = FIRST_SEEN + 16
SHORT = 16 << 10  # characters of each value in the smaller log; the larger: 4 ×
ROLLOUT = "rollout-2026-12-01T13-00-00-01a231e1-985a-79f2-b0b7-1aef24b0bd09.jsonl"


def _long(i: int, fill: str, length: int) -> str:
    return f"{fill}{i} ".ljust(length, fill)


def claude(length: int) -> Iterator[dict[str, Any]]:
    """A chain of prompts (replies for the models), each choosing one field long; then entries of
    long unknown types."""
    parent: str | None = None
    for i in range(COUNT):
        for field, fill in (("sessionId", "s"), ("version", "v"), ("cwd", "c"), ("gitBranch", "g")):
            entry = _entry("user", (i << 8) + len(fill) + ord(fill), parent, "go")
            entry[field] = _long(i, fill, length)
            parent = entry["uuid"]
            yield entry
        reply = _entry("assistant", (i << 8) + 1, parent, [{"type": "text", "text": "hi"}], f"msg_{i}")
        reply["message"]["model"] = _long(i, "m", length)
        parent = reply["uuid"]
        yield reply
    for i in range(COUNT):
        yield {
            "type": _long(i, "t", length),
            "uuid": str(uuid.UUID(int=(1 << 100) + i)),
            "sessionId": SESSION,
        }


def codex(length: int) -> Iterator[bytes]:
    lines = Lines()
    yield orjson.dumps(meta()) + b"\n"
    for i in range(COUNT):
        yield lines.line(_long(i, "l", length), {})
        yield lines.line("response_item", {"type": _long(i, "r", length)})


def dsh(length: int) -> Iterator[bytes]:
    yield V4_HEADER
    for i in range(COUNT):
        seq, when, turn = 3 * i, 1001 + i, i + 1
        reason = {"kind": _long(i, "k", length)}
        for event in (
            {"type": "turn/start", "seq": seq, "time": when, "data": {"turn": turn}},
            {"type": "turn/end", "seq": seq + 1, "time": when, "data": {"turn": turn, "reason": reason}},
            {
                "type": "x/" + _long(i, "x", length),
                "seq": seq + 2,
                "time": when,
                "data": {},
                "ignorable": True,
            },
        ):
            yield orjson.dumps(event) + b"\n"


WRITERS: dict[str, tuple[str, Callable[[int], Iterator[bytes]]]] = {
    "claude": (f"{SESSION}.jsonl", lambda length: (orjson.dumps(e) + b"\n" for e in claude(length))),
    "codex": (ROLLOUT, codex),
    "dsh": ("session.v4.jsonl", dsh),
}
COMMANDS = {"validate": ["validate"], "inspect-json": ["inspect", "--json"]}


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("long-first-seen")


def _log(where: Path, dialect: str, length: int) -> Path:
    name, write = WRITERS[dialect]
    log = where / f"{dialect}-{length}" / name
    if not log.exists():
        log.parent.mkdir()
        with log.open("wb") as out:
            out.writelines(write(length))
    return log


@pytest.mark.parametrize("dialect", sorted(WRITERS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_memory_does_not_grow_with_the_length_of_the_values_kept(
    where: Path, dialect: str, command: str
) -> None:
    peaks, printed = [], []
    for length in (SHORT, 4 * SHORT):
        log = _log(where, dialect, length)
        env = {"PYTHONPATH": str(ROOT), **FIXED_MMAP}
        measured = run_measured(
            [*COMMANDS[command], str(log)], address_space=2 << 30, cwd=log.parent, env=env
        )
        assert measured.exit_code in (0, 1), measured.stderr
        peaks.append(measured.peak_rss)
        printed.append(len(measured.stdout))
    assert_flat(peaks[0], peaks[1])
    assert max(printed) < 1 << 20  # each value quoted cut: not 64 × 64 KiB a field


def test_long_values_are_listed_cut_told_apart_whole_and_written_back_whole(tmp_path: Path) -> None:
    """Two cwds alike in their first 128 characters and their length are two values, each listed
    as quoted; the session id resume follows (the first, here) is kept whole apart from the list,
    so ``inspect --json`` names it whole and ``repair`` writes it whole into its closers."""
    one, two, session = "/w/" + "c" * 200 + "1", "/w/" + "c" * 200 + "2", "s" * 300
    assert chosen(one) == chosen(two)
    log = tmp_path / "long.jsonl"
    entries, parent = [], None
    for i, cwd in enumerate((one, two, one)):
        entry = _entry("user", i + 1, parent, "go")
        entries.append({**entry, "cwd": cwd, "sessionId": session})
        parent = entry["uuid"]
    call = _entry(
        "assistant", 9, parent, [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}], "m"
    )
    entries.append({**call, "sessionId": session, "cwd": two})
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    doc = orjson.loads(output_of(["inspect", "--json"], log))
    body = next(o for o in json_objects(doc) if "git_branch" in o)
    assert body["cwd"] == [chosen(one), chosen(one)] and "more" not in body
    assert body["session_id"] == session and body["sessions"] == [chosen(session)]
    text = output_of(["inspect"], log).decode()
    assert f"cwd         {chosen(one)}, {chosen(one)}\n" in text and "also in this file" not in text
    repaired = tmp_path / "out.jsonl"
    assert run_measured(["repair", "-o", str(repaired), str(log)], cwd=tmp_path).exit_code == 0
    appended = repaired.read_bytes().splitlines()[len(entries) :]
    assert appended and all(orjson.loads(line)["sessionId"] == session for line in appended)
