"""A parent missing from the file, bridged as 2.1.332 bridges it on resume (entry_graph.bridge,
docs/format.md "A missing parent").

The lane's ``damaged-broken-parent`` deletes the attachment between the first prompt and the
``model`` attachment. The CLI stamps the prompt and that attachment in the same millisecond or
the prompt one later, and that decides what resume sends: the recorded fixture (the prompt
1 ms later) and ``bridge/tie`` (recorded on 2026-12-03, the same millisecond) are both judged
against the request the CLI sent. The rest are the rule's clauses, one transcript each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sesstool.dialects.claude import entry_graph
from sesstool.dialects.claude.derive import derive
from sesstool.dialects.claude.entry_stamps import ODD, stamp_key
from sesstool.dialects.claude.key_index import KeyIndex
from tests.claude._support import CLAUDE, RESUME_PROMPT, Scenario, entries_for, scan_bytes, scan_file
from tests.claude_lane.judge import plain, resume_mismatch

TIE = CLAUDE / "bridge" / "tie"
SESSION = "s-bridge"
PROMPT = "lane: run one tool"


def _derived(path: Path) -> list[dict[str, Any]]:
    scan = scan_file(path)
    messages = derive(scan, entries_for(path, scan)).messages
    return plain({"role": m.role, "content": m.content} for m in messages)


def _sent_prompt(messages: list[dict[str, Any]]) -> bool:
    return any(PROMPT in json.dumps(m["content"]) for m in messages)


@pytest.mark.parametrize("spill_at", [entry_graph.SPILL_AT, 0], ids=["in-memory", "spilled"])
def test_a_tie_bridges_to_the_prompt_as_the_cli_did(spill_at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry_graph, "SPILL_AT", spill_at)
    (transcript,) = TIE.glob("*.jsonl")
    request = json.loads((TIE / "resume-request.json").read_text())
    assert _sent_prompt(request)  # what the CLI sent: the prompt, its parent link bridged
    derived = _derived(transcript)
    assert resume_mismatch(derived, request, RESUME_PROMPT) is None
    assert _sent_prompt(derived)
    assert 3 in scan_file(transcript).chain  # the prompt's line


@pytest.mark.parametrize("spill_at", [entry_graph.SPILL_AT, 0], ids=["in-memory", "spilled"])
def test_a_prompt_one_ms_later_is_not_bridged_to(spill_at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry_graph, "SPILL_AT", spill_at)
    scenario = Scenario("damaged-broken-parent")
    assert not _sent_prompt(scenario.resume_request)
    derived = _derived(scenario.transcript)
    assert resume_mismatch(derived, scenario.resume_request, RESUME_PROMPT) is None
    assert not _sent_prompt(derived)


def _at(second: int | str | None) -> dict[str, Any]:
    if second is None:
        return {}
    return {"timestamp": second if isinstance(second, str) else f"2026-12-03T10:00:{second:02d}.000Z"}


def _entry(uuid: str, parent: str | None, second: int | str | None, kind: str = "user", **more: Any) -> bytes:
    entry: dict[str, Any] = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION}
    if kind == "user":
        entry["message"] = {"role": "user", "content": f"prompt {uuid}"}
    elif kind == "assistant":
        entry["message"] = {"role": "assistant", "content": [{"type": "text", "text": f"reply {uuid}"}]}
    return json.dumps({**entry, **_at(second), **more}).encode()


def _chain(*lines: bytes) -> list[str]:
    """The uuids of the active chain, root first."""
    scan = scan_bytes(b"\n".join(lines) + b"\n", f"{SESSION}.jsonl", SESSION)
    return [json.loads(lines[line - 1])["uuid"] for line in scan.chain]


def test_the_newest_tip_written_no_later_is_the_new_parent() -> None:
    lines = (
        _entry("a", None, 1),
        _entry("b", "a", 2, "assistant"),  # a's child: not a tip
        _entry("c", None, 5),  # newer than the orphan: not a candidate
        _entry("d", None, 3, "attachment"),  # the newest tip no later than the orphan
        _entry("e", None, 2),  # an older tip later in the file
        _entry("x", "gone", 4, "assistant"),
    )
    assert _chain(*lines) == ["d", "x"]


def test_a_tie_goes_to_the_later_line() -> None:
    lines = (_entry("a", None, 3), _entry("b", None, 3), _entry("x", "gone", 3, "assistant"))
    assert _chain(*lines) == ["b", "x"]


def test_without_a_timestamp_the_chain_ends_there() -> None:
    assert _chain(_entry("a", None, 1), _entry("x", "gone", None, "assistant")) == ["x"]
    # ... and an entry without one is never the new parent
    assert _chain(_entry("a", None, None), _entry("x", "gone", 4, "assistant")) == ["x"]


def test_a_system_root_and_a_sidechain_entry_are_passed_over() -> None:
    lines = (
        _entry("a", None, 1),
        _entry("s", None, 2, "system", subtype="informational"),
        _entry("side", None, 3, isSidechain=True),
        _entry("x", "gone", 4, "assistant"),
    )
    assert _chain(*lines) == ["a", "x"]
    # a system entry that has a parent is a tip like any other
    parented = (_entry("a", None, 1), _entry("s", "a", 2, "system", subtype="informational"))
    assert _chain(*parented, _entry("x", "gone", 4, "assistant")) == ["a", "s", "x"]


def test_an_entry_already_walked_is_not_bridged_to_again() -> None:
    # y, x's child written above it (a forward link), is the newest tip above x: walked already
    lines = (
        _entry("a", None, 1),
        _entry("y", "x", 3),
        _entry("x", "gone", 5, "assistant"),
        _entry("w", "y", 6),
    )
    assert _chain(*lines) == ["a", "x", "y", "w"]


def test_timestamps_compare_as_the_strings_written() -> None:
    odd = "2026-12-03T10:00:03"  # not the CLI's form: compared as text, as the CLI does
    lines = (_entry("a", None, 1), _entry("b", None, odd), _entry("x", "gone", 4, "assistant"))
    assert _chain(*lines) == ["b", "x"]
    lines = (_entry("a", None, 1), _entry("b", None, "2026-12-03U"), _entry("x", "gone", 4, "assistant"))
    assert _chain(*lines) == ["a", "x"]
    # digits of another script read as the text they are ("２" sorts after "9"), never as numbers
    wide = "２０２６-12-03T10:00:03.000Z"
    lines = (_entry("a", None, 1), _entry("b", None, wide), _entry("x", "gone", 4, "assistant"))
    assert _chain(*lines) == ["a", "x"]
    assert stamp_key(wide) == ODD and stamp_key("2026-12-03T10:00:03.000Z") == 20261203100003000


def test_at_most_sixteen_bridges_a_walk() -> None:
    """Seventeen broken links: the walk bridges sixteen and ends at the seventeenth."""
    lines = [_entry("r", None, 0)]
    for i in range(17):
        prompt = _entry(f"p{i}", f"x{i - 1}" if i else "r", 1 + 2 * i)
        lines += [prompt, _entry(f"x{i}", f"gone{i}", 2 + 2 * i, "assistant")]
    chain = _chain(*lines)
    assert chain[0] == "x0"  # bridges 17..2 reached p1 → x0, whose own link is the 17th
    assert len(chain) == 2 * 16 + 1


@pytest.mark.parametrize("spill_at", [entry_graph.SPILL_AT, 0], ids=["in-memory", "spilled"])
def test_a_walk_looks_each_missing_parent_up_once(spill_at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: the scan of 400 prompts, each naming a parent that is not in the file
    (each a bridge; sixteen are made), asks the uuid index twice per entry (the scan's add,
    then ``settle``, whose answers the missing-parent finding and the walk share). Each bridge
    asked again for every candidate before it, twice (here 2,636 lookups; a transcript of
    52,000 such prompts took 11.5 s to validate against 2.5 s before the bridge, now 3.3 s);
    the chain is the same."""
    monkeypatch.setattr(entry_graph, "SPILL_AT", spill_at)
    calls = 0
    real = KeyIndex.find

    def find(self: KeyIndex, key: str) -> int:
        nonlocal calls
        calls += 1
        return real(self, key)

    monkeypatch.setattr(KeyIndex, "find", find)
    n = 400
    lines = [_entry(f"p{i}", f"gone{i}", i % 60) for i in range(n)]
    chain = _chain(*lines)
    assert len(chain) == 17 and chain[-1] == f"p{n - 1}"
    assert calls <= 2 * n, calls
