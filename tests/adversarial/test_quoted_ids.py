"""Issue 11 item 1: a finding, a closer's description or an inspect row quotes an id a log chose
(a parent uuid, an entry's uuid, a tool id, a Codex call id or turn id) cut to its first
``humanize.CHOSEN_CHARS`` (128) characters and its length — ``0 ppp…[65,536 characters]`` —
in every format of ``validate`` (text, json, github, junit, sarif) and in ``inspect``, so that the
findings kept (``--max-findings``) hold a bounded message each whatever the ids weigh. An id up to
128 characters is quoted whole, as before (the goldens are unchanged)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sesstool.core.humanize import CHOSEN_CHARS, chosen, chosen_repr
from tests.adversarial.claude_hostile import SESSION, _call, _entry
from tests.adversarial.codex_hostile import Lines, meta
from tests.adversarial.lowered import entries_to
from tests.conftest import Sesstool

LONG = 64 << 10
FORMATS = ["text", "json", "github", "junit", "sarif"]
CUT = "…[65,536 characters]"


def _long(fill: str) -> str:
    return f"0 {fill}".ljust(LONG, fill)


def _claude(path: Path) -> None:
    """A prompt naming a parent no entry has, a call with a long tool id never answered, an
    entry whose long uuid is used twice, an entry of a long unknown type, a reply with a block
    of a long type (derive names it)."""

    def entries() -> Iterator[dict[str, Any]]:
        prompt = _entry("user", 3, _long("p"), "go")
        yield prompt
        call = _call(1, _long("t"), prompt["uuid"])
        yield call
        twice = _entry("user", 5, call["uuid"], "again")
        twice["uuid"] = _long("u")
        yield twice
        yield {**twice, "parentUuid": twice["uuid"]}
        yield {**_entry("user", 7, None, "odd"), "type": _long("y")}
        block = {"type": _long("b"), "text": "?"}
        yield _entry("assistant", 9, twice["uuid"], [block], "msg_b")

    entries_to(entries())(path)


def _codex(path: Path) -> None:
    """A turn with a long id never ended, a call with a long id never answered, an output for a
    long call id no call has."""
    lines = Lines()
    with path.open("wb") as out:
        out.write(orjson.dumps(meta()) + b"\n")
        out.write(lines.event("task_started", turn_id=_long("u")))
        call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": _long("c")}
        out.write(lines.line("response_item", call))
        output = {"type": "function_call_output", "call_id": _long("o"), "output": "ok"}
        out.write(lines.line("response_item", output))


LOGS = {
    "claude": (f"{SESSION}.jsonl", _claude, "tpuy"),
    "codex": ("rollout-2026-12-01T13-00-00-01a231e1-985a-79f2-b0b7-1aef24b0bd09.jsonl", _codex, "uco"),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for dialect, (name, write, _) in LOGS.items():
        path = tmp_path_factory.mktemp(dialect) / name
        write(path)
        made[dialect] = path
    return made


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dialect", sorted(LOGS))
def test_validate_quotes_long_ids_cut_in_every_format(
    sesstool: Sesstool, logs: dict[str, Path], dialect: str, fmt: str
) -> None:
    run = sesstool("validate", "--format", fmt, "--fail-on", "info", str(logs[dialect]))
    assert run.exit_code in (0, 1), run.stderr
    out = run.stdout
    for fill in LOGS[dialect][2]:
        whole = _long(fill)
        assert whole not in out  # nowhere whole ...
        assert whole[:CHOSEN_CHARS] in out  # ... but named by its start ...
        assert CUT in out  # ... and its length
    assert len(run.stdout_bytes) < 32 << 10  # three ids of 64 KiB each, a few lines about them


@pytest.mark.parametrize("dialect", sorted(LOGS))
def test_inspect_and_its_closers_quote_long_ids_cut(
    sesstool: Sesstool, logs: dict[str, Path], dialect: str
) -> None:
    run = sesstool("inspect", str(logs[dialect]))
    assert run.exit_code in (0, 1), run.stderr
    assert _long("t" if dialect == "claude" else "c") not in run.stdout and CUT in run.stdout
    assert len(run.stdout_bytes) < 32 << 10


def test_derive_names_a_long_block_type_cut(sesstool: Sesstool, logs: dict[str, Path]) -> None:
    """derive's best-effort reasons quote a value the log chose for a field cut too (the
    messages it writes keep the block whole: that is output, not a quotation)."""
    run = sesstool("derive", "--format", "json", str(logs["claude"]))
    assert run.exit_code == 0, run.stderr
    reasons = orjson.loads(run.stdout_bytes)["best_effort"]
    said = f"content block {_long('b')[:CHOSEN_CHARS]!r}{CUT}: sent as recorded (not verified)"
    assert said in reasons and all(len(reason) < 400 for reason in reasons)


def test_json_messages_are_bounded_and_name_the_id() -> None:
    message = f"user x names parent {chosen(_long('p'))}, which is not in the file"
    assert message == f"user x names parent {_long('p')[:CHOSEN_CHARS]}{CUT}, which is not in the file"


@pytest.mark.parametrize("length", [0, 1, 36, CHOSEN_CHARS - 1, CHOSEN_CHARS])
def test_a_value_up_to_the_limit_is_quoted_whole(length: int) -> None:
    value = "é" * length
    assert chosen(value) == value and chosen_repr(value) == repr(value)


@pytest.mark.parametrize("length", [CHOSEN_CHARS + 1, 1000, LONG])
def test_a_longer_value_is_cut_and_says_its_length(length: int) -> None:
    value = "\ud800" + "x" * (length - 1)  # a lone surrogate is a character like any other
    assert chosen(value) == value[:CHOSEN_CHARS] + f"…[{length:,} characters]"
    assert chosen_repr(value) == repr(value[:CHOSEN_CHARS]) + f"…[{length:,} characters]"


def test_other_values_are_quoted_as_before() -> None:
    assert chosen(None) == "None" and chosen(12) == "12" and chosen_repr(None) == "None"
    assert chosen_repr(7) == "7" and chosen_repr("a'b") == repr("a'b")
    assert chosen_repr(["x" * 400]) == repr(["x" * 400])[:CHOSEN_CHARS] + "…[404 characters]"
