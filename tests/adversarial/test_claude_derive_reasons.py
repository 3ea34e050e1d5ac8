"""Issue 11 item 1: the best-effort reasons of a Claude ``derive`` that name a value the log chose
(a ``system`` entry's subtype, a content block's type, an attachment's ``renderedRole``; spec
agent-formats §1.6, §1.7 C: nothing limits them). A reason was kept per distinct value, so a
transcript that chooses a new one on every line made derive hold (and print) one reason per
line. Now each field names its first ``first_seen.FIRST_SEEN`` values, in the words derive always
used, then says once that there were more (docs/format.md, "Memory").

The memory test: the same transcript of N and 4N chosen values, N = 6,500 (13,000 for
``report``; 20,000 until stop 31), children run with the thresholds and fixed buffers lowered
(``lowered.CACHES_LOWERED``), their peak RSS read from the kernel, never timed.
Measured from N to 4N, derive JSONL / JSON / Markdown / Markdown ``--redact`` / ``report``: +0.46
/ +0.46 / +0.30 / −0.09 / +0.79 MiB. On the code before this change (21fc290, the parent of
a2489ab) the same children grew +14.7 / +29.6 / +14.8 / +21.4 / +15.9 MiB (+49.6 / +104.7 /
+49.0 / +67.6 / +24.7 at N = 20,000 for all: ``report`` grows the least a value, hence its
larger N): every one fails there."""

from __future__ import annotations

import functools
import json
import uuid
from pathlib import Path

import pytest

from sesstool.core.first_seen import FIRST_SEEN
from tests.adversarial.lowered import CACHES_LOWERED, DERIVE_COMMANDS, LoweredRuns, assert_flat, lowered_runs

N = 6_500  # chosen values in the smaller transcript (the docstring: what the code before grew)
N_OF = {"report": 13_000}  # report grew the least a value on the code before: a larger N
SESSION = "5f0c0a3e-0000-4000-8000-000000000078"


def write(path: Path, n: int) -> None:
    """A prompt, then ``n`` times: a reply whose one block has a type of its own, a ``system``
    entry of a subtype of its own and an attachment rendered with a role of its own, one chain."""
    parent: str | None = None
    serial = 0

    def entry(kind: str, **fields: object) -> str:
        nonlocal parent, serial
        serial += 1
        me = str(uuid.UUID(int=serial))
        doc = {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": me, "sessionId": SESSION}
        doc["timestamp"] = "2026-01-01T00:00:00.000Z"
        parent = me
        return json.dumps({**doc, **fields}) + "\n"

    with path.open("w") as out:
        out.write(entry("user", message={"role": "user", "content": "go"}))
        for i in range(n):
            blocks = [{"type": f"kind-{i}"}]
            reply = {"role": "assistant", "id": f"msg_{i}", "type": "message", "content": blocks}
            out.write(entry("assistant", message=reply))
            out.write(entry("system", subtype=f"sub-{i}", content="noted"))
            out.write(entry("attachment", rendered=[{"content": "seen"}], renderedRole=f"role-{i}"))


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> LoweredRuns:
    return lowered_runs(tmp_path_factory, "claude-derive-reasons", CACHES_LOWERED)


def _log(where: LoweredRuns, n: int) -> Path:
    return where.log(f"reasons-{n}", functools.partial(write, n=n), SESSION)


def _reasons(where: LoweredRuns, n: int) -> list[str]:
    doc = json.loads(where.run(_log(where, n), ["derive", "--format", "json"]).stdout)
    reasons = doc["best_effort"]
    assert isinstance(reasons, list)
    return reasons


def test_each_field_names_its_first_values_then_says_there_were_more(where: LoweredRuns) -> None:
    reasons = _reasons(where, FIRST_SEEN + 6)
    blocks = [r for r in reasons if r.startswith("content block")]
    systems = [r for r in reasons if r.startswith("system entry")]
    roles = [r for r in reasons if r.startswith("attachment renderedRole")]
    recorded, not_sent = "sent as recorded (not verified)", "taken as not sent to the model"
    assert blocks == [f"content block 'kind-{i}': {recorded}" for i in range(FIRST_SEEN)] + [
        f"content block types beyond the first {FIRST_SEEN} named: {recorded}"
    ]
    assert systems == [f"system entry 'sub-{i}': {not_sent}" for i in range(FIRST_SEEN)] + [
        f"system entry subtypes beyond the first {FIRST_SEEN} named: {not_sent}"
    ]
    assert roles == [f"attachment renderedRole 'role-{i}'" for i in range(FIRST_SEEN)] + [
        f"attachment renderedRoles beyond the first {FIRST_SEEN} named"
    ]
    # nothing else: the reasons are these, each once, the "beyond" one after the values it follows
    assert len(reasons) == len(set(reasons)) == 3 * (FIRST_SEEN + 1)
    assert reasons.index(blocks[-1]) > reasons.index(blocks[-2])


def test_up_to_first_seen_values_every_one_is_named_as_before(where: LoweredRuns) -> None:
    reasons = _reasons(where, FIRST_SEEN)
    assert len(reasons) == 3 * FIRST_SEEN and not any("beyond" in r for r in reasons)
    assert "system entry 'sub-0': taken as not sent to the model" in reasons


@pytest.mark.slow
@pytest.mark.parametrize("command", DERIVE_COMMANDS)
def test_derive_memory_does_not_grow_with_chosen_values(where: LoweredRuns, command: str) -> None:
    args, n = DERIVE_COMMANDS[command], N_OF.get(command, N)
    small = where.run(_log(where, n), args).peak_rss
    assert_flat(small, where.run(_log(where, 4 * n), args).peak_rss)
