"""The compact scanner (flat arrays, exact keys, exceptions to "the parent is the entry
before") against a plain model of the same rules written with dicts of whole entries: random
transcripts with branches, forward and missing parents, replayed uuids, sidechains, two
sessions, replies split over entries and parallel results on side branches."""

from __future__ import annotations

import itertools
import json
from typing import Any
from unittest import mock
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sesstool.dialects.claude import key_index
from sesstool.dialects.claude.key_index import KeyIndex
from sesstool.dialects.claude.transcript import TranscriptScanner

Entry = dict[str, Any]
SESSION = "s-main"


_UUIDS = [str(UUID(int=n * 0x9E3779B97F4A7C15 + n)) for n in range(5)]
_KEYS = (
    st.sampled_from(_UUIDS)
    | st.sampled_from([u.upper() for u in _UUIDS])
    | st.sampled_from(
        ["", "toolu_01", "toolu_01 ", "\ud800", "é", _UUIDS[0][:-1], _UUIDS[0] + "\n", "<no uuid: line 3>"]
    )
    | st.text(max_size=40)
)


def _collide(key: str) -> int:
    return 7  # every key starts its search at one slot


@pytest.mark.parametrize("slot_hash", [None, _collide], ids=["hash", "all-collide"])
@given(keys=st.lists(_KEYS, max_size=200), probe=_KEYS)
def test_key_index_answers_like_a_dict(slot_hash: Any, keys: list[str], probe: str) -> None:
    """Keys are exact (docs/format.md): different keys are different items even when every key
    hashes to one slot; a uuid in capitals is not the same key as in lowercase."""
    index = KeyIndex(slot_hash)
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        assert index.find(key) == first.get(key, -1)
        assert index.add(key) == first.get(key, -1)
        first.setdefault(key, i)
        assert index.key(i) == key
    assert all(index.find(key) == item for key, item in first.items())
    assert index.find(probe) == first.get(probe, -1)
    assert index.intern(probe) == first.get(probe, len(keys))
    twin = index.copy()
    twin.add("only in the twin")
    assert index.find("only in the twin") == first.get("only in the twin", -1)


_STAMPS = [f"2026-01-01T00:00:0{k}.{ms:03d}Z" for k in range(4) for ms in (0, 500)]


@st.composite
def transcripts(draw: st.DrawFn) -> list[Entry]:
    count = draw(st.integers(1, 30))
    entries: list[Entry] = []
    for i in range(count):
        kind = draw(st.sampled_from(["user", "user", "assistant", "assistant", "attachment", "system"]))
        uuid = f"u{i}" if draw(st.integers(0, 9)) else f"u{draw(st.integers(0, max(i - 1, 0)))}"
        parent_kind = draw(
            st.sampled_from(["before", "before", "before", "earlier", "later", "missing", "root"])
        )
        parent = {
            "before": f"u{i - 1}" if i else None,
            "earlier": f"u{draw(st.integers(0, max(i - 1, 0)))}",
            "later": f"u{draw(st.integers(i, count + 1))}",
            "missing": f"gone{draw(st.integers(0, 3))}",
            "root": None,
        }[parent_kind]
        entry: Entry = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION}
        stamp = draw(st.sampled_from([*_STAMPS, *_STAMPS, None, "2026-01-01 00:00:02", 1767225602000]))
        if stamp is not None:  # a bridge over a missing parent goes by them (entry_graph.bridge)
            entry["timestamp"] = stamp
        if draw(st.integers(0, 12)) == 0:
            entry["sessionId"] = "s-other"
        if draw(st.integers(0, 10)) == 0:
            entry["isSidechain"] = True
        tools = st.lists(st.sampled_from([f"t{k}" for k in range(6)]), max_size=2)
        if kind == "assistant":
            blocks = [{"type": "tool_use", "id": t, "name": "Bash", "input": {}} for t in draw(tools)]
            message: Entry = {"role": "assistant", "content": blocks or [{"type": "text", "text": "ok"}]}
            if draw(st.integers(0, 4)):
                message["id"] = f"msg{draw(st.integers(0, 5))}"
            entry["message"] = message
        elif kind == "user":
            results = [{"type": "tool_result", "tool_use_id": t, "content": "x"} for t in draw(tools)]
            entry["message"] = {
                "role": "user",
                "content": results or draw(st.sampled_from(["hi", "<local-command-stdout>x"])),
            }
        entries.append(entry)
    if draw(st.booleans()):  # the CLI's own uuids: canonical, kept as 128-bit keys
        canonical = {
            f"{prefix}{n}": str(UUID(int=(k << 64) + n))
            for k, prefix in enumerate(["u", "gone"])
            for n in range(count + 4)  # "later" parents reach count + 1, missing ones gone3
        }
        for entry in entries:
            entry["uuid"] = canonical[entry["uuid"]]
            if entry["parentUuid"] is not None:
                entry["parentUuid"] = canonical[entry["parentUuid"]]
    return entries


def _model(entries: list[Entry]) -> dict[str, Any]:
    """The rules of entry_graph.py / active_chain.py, spelled out over whole entries."""
    index: dict[str, int] = {}
    dup = []
    for i, e in enumerate(entries):
        dup.append(e["uuid"] in index)
        index.setdefault(e["uuid"], i)

    sessions = [e["sessionId"] for e in entries]
    session = SESSION if SESSION in sessions else sessions[0]  # the file name's session when it is there

    def eligible(i: int) -> bool:
        return not dup[i] and not entries[i].get("isSidechain") and entries[i]["sessionId"] == session

    def msg(i: int) -> str | None:
        m = entries[i].get("message")
        return m.get("id") if entries[i]["type"] == "assistant" and isinstance(m, dict) else None

    def blocks(i: int, kind: str, key: str) -> list[str]:
        m = entries[i].get("message") or {}
        content = m.get("content")
        return [b[key] for b in content if b.get("type") == kind] if isinstance(content, list) else []

    uses = [
        blocks(i, "tool_use", "id") if entries[i]["type"] == "assistant" else [] for i in range(len(entries))
    ]
    results = [
        blocks(i, "tool_result", "tool_use_id") if entries[i]["type"] == "user" else []
        for i in range(len(entries))
    ]

    def stamp(i: int) -> str | None:
        value = entries[i].get("timestamp")
        return value if isinstance(value, str) else None

    def bridge(current: int, walked: list[int], bridged: dict[int, str]) -> int | None:
        """2.1.332: the newest earlier tip written no later (last on a tie), not walked, not a
        system root."""
        at = stamp(current)
        if at is None:
            return None
        earlier = [j for j in range(current) if eligible(j) and stamp(j) is not None and str(stamp(j)) <= at]
        named = {bridged.get(j, entries[j]["parentUuid"]) for j in earlier}
        best = None
        for j in earlier:
            if j in walked or entries[j]["uuid"] in named:
                continue
            if entries[j]["type"] == "system" and entries[j]["parentUuid"] is None:
                continue
            if best is None or str(stamp(j)) >= str(stamp(best)):
                best = j
        return best

    leaf = next((i for i in range(len(entries) - 1, -1, -1) if eligible(i)), None)
    chain: list[int] = []
    bridged: dict[int, str] = {}
    current = leaf
    while current is not None and current not in chain:
        chain.append(current)
        parent = entries[current]["parentUuid"]
        if parent is None:
            break
        found = index.get(parent)
        if found is None and len(bridged) < 16:
            found = bridge(current, chain, bridged)
            if found is not None:
                bridged[current] = entries[found]["uuid"]
        current = found
    chain.reverse()
    groups: dict[str, list[int]] = {}
    for i in range(len(entries)):
        if msg(i) is not None and eligible(i):
            groups.setdefault(msg(i), []).append(i)  # type: ignore[arg-type]
    issued: dict[str, None] = {}
    attached: set[int] = set()
    seen_msgs: set[str] = set()
    for i in chain:
        if entries[i]["type"] != "assistant":
            continue
        m = msg(i)
        if m is None:
            issued.update(dict.fromkeys(uses[i]))
        elif m not in seen_msgs:
            seen_msgs.add(m)
            # the reply's entries in the session, and those of its entries the chain runs through
            for member in sorted({*groups.get(m, []), *(j for j in chain if msg(j) == m)}):
                attached.add(member)
                issued.update(dict.fromkeys(uses[member]))
    first_result: dict[str, int] = {}
    for i in range(len(entries)):  # measured: a sidechain entry's result answers its call too
        for t in results[i]:
            first_result.setdefault(t, i)
    calls = {t for u in uses for t in u}
    dangling = [t for t in issued if t not in first_result]
    orphans = [t for i in chain for t in results[i] if t not in issued]
    reattached = {i for i in attached if i not in chain}
    reattached |= {first_result[t] for t in issued if t in first_result and first_result[t] not in chain}
    turns = sum(
        1
        for i, e in enumerate(entries)
        if e["type"] == "user" and not results[i] and not dup[i] and not e.get("isSidechain")
        and isinstance(e["message"]["content"], str) and not e["message"]["content"].startswith("<local")
    )  # fmt: skip
    children: dict[int, list[int]] = {}
    for i, e in enumerate(entries):
        parent = index.get(e["parentUuid"]) if e["parentUuid"] is not None else None
        if not eligible(i) or parent is None or results[i] or (msg(i) is not None and msg(i) == msg(parent)):
            continue
        children.setdefault(parent, []).append(i)
    last = list(range(len(entries)))
    for i in range(len(entries) - 1, -1, -1):
        parent = index.get(entries[i]["parentUuid"]) if entries[i]["parentUuid"] is not None else None
        if parent is not None and parent < i and not dup[i]:
            last[parent] = max(last[parent], last[i])
    branches = interleaved = 0
    for kids in children.values():
        siblings = [k for k in kids if msg(k) is None or [msg(o) for o in kids].count(msg(k)) == 1]
        if len(siblings) >= 2:
            branches += len(siblings) - 1
            spans = sorted((k, last[k]) for k in siblings)
            interleaved += any(start < end for (_, end), (start, _) in itertools.pairwise(spans))
    return {
        "branches": branches,
        "interleaved": interleaved,
        "chain": [i + 1 for i in chain],
        "reattached": sorted(i + 1 for i in reattached),
        "dangling": dangling,
        "orphans": orphans,
        "turns": turns,
        "tool_uses": len(calls),
        "tool_results": len(first_result),
        "answered": len(calls & set(first_result)),
        "leaf": entries[leaf]["uuid"] if leaf is not None else None,
        "missing": sorted(
            i + 1
            for i, e in enumerate(entries)
            if e["parentUuid"] is not None and e["parentUuid"] not in index and not dup[i]
        ),
    }


@pytest.mark.parametrize("slot_hash", [None, _collide], ids=["hash", "all-collide"])
@given(entries=transcripts())
def test_the_compact_scan_agrees_with_the_plain_model(slot_hash: Any, entries: list[Entry]) -> None:
    """``all-collide``: every uuid and tool id hashes to one slot, and the verdicts stay exact."""
    with mock.patch.object(key_index, "slot_of", slot_hash or key_index.slot_of):
        scanner = TranscriptScanner("t.jsonl", SESSION)
        scanner.feed_lines([json.dumps(e).encode() for e in entries], 0, 1)
        scan = scanner.finish()
    want = _model(entries)
    got = {
        "branches": scan.branches,
        "interleaved": sum(
            1 for f in scan.findings if f.rule == "claude-concurrent-writers" and "branch" in f.message
        ),
        "chain": list(scan.chain),
        "reattached": list(scan.reattached),
        "dangling": [c.id for c in scan.dangling],
        "orphans": list(scan.orphan_results),
        "turns": scan.turns,
        "tool_uses": scan.tool_uses,
        "tool_results": scan.tool_results,
        "answered": scan.answered,
        "leaf": scan.leaf,
        "missing": sorted(f.address.line or 0 for f in scan.findings if f.rule == "claude-parent-missing"),
    }
    assert got == want
    assert scanner.finish() == scan  # finish leaves the scanner as it was


def _reply(i: int, msg: str, parent: str | None, tokens: int) -> Entry:
    usage = {"input_tokens": tokens, "output_tokens": 1}
    message = {"role": "assistant", "id": msg, "content": [{"type": "text", "text": "ok"}], "usage": usage}
    return {
        "type": "assistant",
        "uuid": f"u{i}",
        "parentUuid": parent,
        "sessionId": SESSION,
        "message": message,
    }


def test_usage_counts_a_reply_once_while_its_id_is_recent() -> None:
    """docs/format.md: a reply's usage counts once (the last block written) while its id is among
    the last MESSAGE_WINDOW ids; an id that comes back after that counts again."""
    from sesstool.dialects.claude.entry_graph import MESSAGE_WINDOW

    entries = [_reply(0, "m0", None, 10), _reply(1, "m0", "u0", 20)]  # one reply, two blocks
    entries += [_reply(i, f"other{i}", f"u{i - 1}", 1) for i in range(2, MESSAGE_WINDOW + 2)]
    entries.append(_reply(MESSAGE_WINDOW + 2, "m0", f"u{MESSAGE_WINDOW + 1}", 5))
    scanner = TranscriptScanner("t.jsonl", SESSION)
    scanner.feed_lines([json.dumps(e).encode() for e in entries], 0, 1)
    scan = scanner.finish()
    assert scan.usage.input_tokens == 20 + MESSAGE_WINDOW + 5
    assert scan.usage.output_tokens == MESSAGE_WINDOW + 2
    assert len(scan.chain) == len(entries) and scan.verdict == "clean"
