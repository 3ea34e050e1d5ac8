"""Issue 11 item 1: the uuids a Claude Code transcript's compactions preserve no longer grow derive.
A ``compact_boundary`` names the entries it keeps (``compactMetadata.preservedMessages``, spec
agent-formats §1.6 "Compaction") and nothing limits how many: derive built a set of every
preserved uuid of every compaction (twice: its index, then each pass), a dict of them to their
first line, and a best-effort reason per preserved uuid not in the file. Now they are one
``dialects/claude/preserved.Preserved`` (a dict up to ``held.HELD_AT`` uuids, then rows of the
derivation's spill file) and the reasons for missing ones stop at ``FIRST_SEEN`` (64), then one
"more" reason (``core/first_seen.py``).

Two transcripts, N and 4N preserved uuids, N = 10,000 (20,000 until stop 31), ``PER`` (16) to
a compaction (625 and 2,500 compactions), every boundary and summary on the active chain:
``present`` — the preserved entries are in the file, pairs of a prompt and a reply on the chain
before their boundary; ``missing`` — 1,024 turns, then compactions whose uuids no entry has. The
children run with the thresholds and fixed buffers lowered (``lowered.CACHES_LOWERED``),
their peak RSS read from the kernel under an address-space limit, never timed.

Measured from N to 4N, derive JSONL / JSON / Markdown / Markdown ``--redact`` / ``report``, then
``validate`` / ``inspect`` (which walk the compactions' uuids and hold none): present +1.21 / +1.18
/ +1.34 / +0.74 / +0.75, +0.74 / +0.28 MiB; missing +1.59 / +1.57 / +1.52 / +0.82 / +1.52, +1.71 /
+1.41 MiB. On the code before (f76fb5c, the parent of a1bb627; the same children): present +9.69 /
+9.90 / +10.08 / +10.93 / +9.15, missing +14.71 / +26.13 / +14.09 / +19.72 / +9.01 MiB: every
derive case fails there (at N = 20,000 with derive's line cache at 4 MiB, main's code then: present
+20.3 / +19.0 / +20.2 / +20.0 / +20.6 (validate +0.32, inspect +0.90), missing +31.9 / +49.8 /
+31.8 / +39.4 / +21.0 (validate +1.29, inspect +1.86)). The bound is 3 MiB, not the usual 2: it
was 5 MiB while derive's read-back cache of lines (``store/line_fetch.py``, ``CACHE_BYTES``, 4 MiB)
was left at its size and the smaller transcripts did not fill it (traced in the ``missing`` derive
at N = 20,000: 2.54 MiB of cached lines at N, 4.18 at 4N) — a constant, not the preserved uuids.
With the cache lowered to 1 MiB, full at N, it is 3 MiB (stop 32): three runs of this file grew at
most +1.66, +1.61 and +1.62 MiB (missing json, jsonl, inspect), and the code before (f76fb5c)
at least +9.20 (missing report; present +10.04 to +11.21, missing +14.36 to +26.19), every derive
case failing there. Fewer, longer compactions (100 uuids to one, 200 → 800 records) also showed
``validate`` growing by 8.8 MiB: the records stayed in memory up to ``held.HELD_AT`` of them
whatever their length; they now move also past ``HELD_AT`` uuids in all (compactions.py;
tests/claude/test_preserved_spilled.py)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from sesstool.dialects.claude.preserved import MORE_MISSING
from tests.adversarial.claude_hostile import _entry
from tests.adversarial.hostile_logs import MiB
from tests.adversarial.lowered import (
    CACHES_LOWERED,
    DERIVE_COMMANDS,
    LoweredRuns,
    assert_flat,
    entries_to,
    lowered_runs,
)

pytestmark = pytest.mark.slow  # 28 children on transcripts of up to 18 MB

N = 10_000
PER = 16  # preserved uuids to a compaction (625 and 2,500 compactions: past HELD_AT uuids at N, see below)
_COMMANDS = {**DERIVE_COMMANDS, "validate": ["validate"], "inspect": ["inspect"]}


def _compaction(c: int, parent: str, kept: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``c``-th boundary, preserving ``kept``, hanging off ``parent``; and its summary."""
    boundary = _entry("system", (1 << 40) + (c << 8) + 5, parent, None)
    summary = _entry("user", (1 << 40) + (c << 8) + 6, boundary["uuid"], f"summary {c}")
    del boundary["message"]
    boundary.update(
        subtype="compact_boundary",
        logicalParentUuid=parent,
        compactMetadata={
            "trigger": "auto",
            "preTokens": 1000 + c,
            "preservedMessages": {"uuids": kept, "anchorUuid": summary["uuid"]},
        },
    )
    summary["isCompactSummary"] = True
    return boundary, summary


def present(n: int, per: int = PER) -> Iterator[dict[str, Any]]:
    """``n`` preserved uuids in the file: per compaction, ``per // 2`` prompt-and-reply pairs on
    the chain, then a boundary preserving them all and its summary."""
    parent: str | None = None
    for c in range(n // per):
        kept: list[str] = []
        for j in range(per // 2):
            at = (c * per + j) << 8
            prompt = _entry("user", at + 1, parent, f"go {c}.{j}")
            reply = _entry(
                "assistant", at + 2, prompt["uuid"], [{"type": "text", "text": "ok"}], f"msg_{c}_{j}"
            )
            parent = reply["uuid"]
            kept += [prompt["uuid"], reply["uuid"]]
            yield from (prompt, reply)
        assert parent is not None
        boundary, summary = _compaction(c, parent, kept)
        parent = summary["uuid"]
        yield from (boundary, summary)


def missing(n: int, per: int = PER, turns: int = 0) -> Iterator[dict[str, Any]]:
    """``turns`` prompt-and-reply pairs, then ``n`` preserved uuids no entry has, ``per`` to a
    compaction."""
    parent: str | None = None
    for t in range(turns):
        prompt = _entry("user", (t << 8) + 1, parent, f"go {t}")
        reply = _entry(
            "assistant", (t << 8) + 2, prompt["uuid"], [{"type": "text", "text": "ok"}], f"msg_{t}"
        )
        parent = reply["uuid"]
        yield from (prompt, reply)
    if parent is None:
        first = _entry("user", 1, None, "go")
        parent = first["uuid"]
        yield first
    for c in range(n // per):
        kept = [str(uuid.UUID(int=(1 << 100) + c * per + k)) for k in range(per)]
        boundary, summary = _compaction(c, parent, kept)
        parent = summary["uuid"]
        yield from (boundary, summary)


def _missing(n: int) -> Iterator[dict[str, Any]]:
    """``missing`` after 1,024 turns: the entry graph is past its (lowered) threshold at N as at
    4N, so what is measured is the uuids, not the graph's one-time move to the spill file."""
    return missing(n, turns=1024)


_WRITERS = {"present": present, "missing": _missing}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-preserved", CACHES_LOWERED)


@pytest.mark.parametrize("command", sorted(_COMMANDS))
@pytest.mark.parametrize("case", sorted(_WRITERS))
def test_memory_does_not_grow_with_preserved_uuids(runs: LoweredRuns, case: str, command: str) -> None:
    args = _COMMANDS[command]
    peaks = []
    for n in (N, 4 * N):
        log = runs.log(f"{case}-{n}", entries_to(_WRITERS[case](n)))
        measured = runs.run(log, args)
        peaks.append(measured.peak_rss)
    written = measured.stdout
    if command == "json":
        doc = json.loads(written)
        notes = doc["best_effort"]
        if case == "missing":  # the first 64 named, then that there were more
            assert len(notes) == 65 and notes[-1] == MORE_MISSING, notes[-3:]
        else:
            assert notes == ["a preserved message is also on the chain"]
    if command == "jsonl" and case == "present":  # each summary followed by its preserved prompts
        last = 4 * N // PER - 1
        assert f"go {last}.{PER // 2 - 1}".encode() in written and f"summary {last}".encode() in written
    small, large = peaks
    assert_flat(small, large, bound=3 * MiB, label=f"{case} {command}")
