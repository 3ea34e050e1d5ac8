"""The step v1 → v2 (spec §1.3 "v1 → v2", §2, §4.5, §9.4; the decisions where the spec is
silent are listed here and in fixtures/migrate/v1-to-v2/README.md).

* Header: ``version`` 2; the boolean ``isSeeded`` (= ``seedLength`` present) replaces
  ``seedLength``.
* Chunk folding: top-level ``assistant/chunk`` events (packed rows arrive expanded) are grouped
  into attempts per (turn, step). An attempt stops taking chunks at its ``finish`` chunk, or at
  ``step/end``, ``llm/retry``, ``llm/retry-started`` for its turn/step, or ``turn/end`` for its
  turn. An ``assistant/message`` of the same turn/step whose ``sourceEventSeqs`` are exactly the
  attempt's ordered chunk seqs absorbs it: the chunks vanish, the message gains ``data.stream``
  (compact §4.5 records) and loses ``sourceEventSeqs``. ``sourceEventSeqs: []`` and an absent
  list (allowed only while no unclaimed attempt of its turn/step exists) give an empty stream.
  An attempt still unclaimed when its step closes (``step/end`` of its turn/step, ``turn/end``
  of its turn, the next ``turn/start``, or the end of the log) becomes one log-only
  ``assistant/attempt {turn, step, stream}`` at the position and time of its last chunk.
* Dense renumbering with every declared reference remapped (``remap_references``); a reference
  to a consumed chunk, or to no earlier event, refuses.
* Inherited cut (seeded logs): an attempt whose chunks — or chunks and claiming message — lie
  on both sides of ``seedLength`` refuses; the untagged ``session/end-seed`` at seq
  ``seedLength`` becomes ``{inherited: true}``; when none sits there a tagged marker is inserted
  at the remapped cut (time of the first event after the cut, else of the last event, else the
  header's ``createdAt``).
* Bounded legacy fixes: (1) a ``turn/start`` of turn T+1 while turn T is open with no open step,
  directly preceded by an ``agent/inbox/spliced`` with ``target: 'next-turn'`` and a non-empty
  ``inserted`` list, gets ``turn/end {turn: T, reason: {kind: 'interrupted'}}`` (time of the
  ``turn/start``) inserted right before it; (2) a ``user/message`` whose source is
  ``{kind: 'goal', round: 0, change: {…}}`` becomes ``goal/change`` (data = the ``change``
  object, same time) followed by the message with source ``{kind: 'plugin', plugin: 'goal'}``.
* Closed first-party inventory: every event type outside the v1 vocabulary refuses, even one
  marked ignorable, and so do the legacy v0 names the v0 → v1 step normalises.

Streaming: only the events whose output position still depends on an undecided attempt are
held (from the first pending attempt of the current step to the point where it is decided), plus
the ``SeqRemap``; the log itself is never held. Both are bounded (issue 11 item 1): past a fixed
amount the held events go, in order, to the run's spill (``core.upgrade.slot_queue``) and so do
the remap's change points (``core.upgrade.remap``), when the engine gives the step one
(``with_spill``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from sesstool.core.humanize import chosen, chosen_repr
from sesstool.core.upgrade import Rec, StepShell, UpgradeRefused, UpgradeSpill, each_event
from sesstool.core.upgrade.records import released_envelope
from sesstool.core.upgrade.remap import Refuse, SeqRemap, remap_references
from sesstool.core.upgrade.slot_queue import Slot as _Slot
from sesstool.core.upgrade.slot_queue import SlotQueue
from sesstool.core.upgrade.streams import StreamBuilder
from sesstool.core.vocabulary import KNOWN, LEGACY_PREFIXES_V0, LEGACY_V0

NAME = "session-format-v1-to-v2"

# The frozen v1 inventory: everything a v1 reader knows, minus the legacy v0 names that the
# v0 → v1 step normalises (a v1 log cannot carry them).
INVENTORY_V1: frozenset[str] = KNOWN[1] - LEGACY_V0

_CHUNK_KEYS = frozenset({"type", "seq", "time", "data"})
_CHUNK_DATA_KEYS = frozenset({"turn", "step", "chunk"})
_CLOSES_STEP_ATTEMPT = frozenset({"llm/retry", "llm/retry-started"})

# -- the step ---------------------------------------------------------------------------------

_PENDING, _CLAIMED, _SETTLED = 0, 1, 2


class _Attempt:
    """One chunk attempt of a (turn, step): its chunk seqs (as runs of consecutive seqs), its
    compacted stream and where it stands."""

    __slots__ = (
        "closed",
        "first",
        "last_seq",
        "last_time",
        "slot",
        "spans",
        "state",
        "step",
        "stream",
        "turn",
    )

    def __init__(self, turn: int, step: int, first: int) -> None:
        self.turn = turn
        self.step = step
        self.first = first
        self.spans: list[list[int]] = []  # [first seq, last seq] of consecutive chunk seqs
        self.stream = StreamBuilder()
        self.last_seq = first
        self.last_time = 0
        self.closed = False  # takes no more chunks (still claimable until settled)
        self.state = _PENDING
        self.slot: _Slot | None = None  # its placeholder at the position of its last chunk

    def cited_by(self, seqs: list[Any]) -> bool:
        """``seqs`` are exactly this attempt's chunk seqs, in order."""
        i = 0
        for lo, hi in self.spans:
            n = hi - lo + 1
            if seqs[i : i + n] != list(range(lo, hi + 1)):
                return False
            i += n
        return i == len(seqs)


class _Run:
    """The state of one v1 → v2 pass."""

    def __init__(self, header: dict[str, Any], spill: UpgradeSpill | None = None) -> None:
        self.header = header
        self.seeded = "seedLength" in header
        cut = header.get("seedLength", 0)
        self.cut = cut if type(cut) is int else 0
        self.cut_done = not self.seeded
        self.remap = SeqRemap(spill)
        self.next = 0
        rows = (lambda: spill.rows("the events a v1→v2 migration holds")) if spill is not None else None
        self.buf = SlotQueue(_resolved, rows)
        self.open: dict[tuple[int, int], _Attempt] = {}  # the attempt taking chunks, per key
        self.pending: list[_Attempt] = []  # unclaimed, unsettled attempts in creation order
        created = header.get("createdAt")
        self.last_time: int = created if type(created) is int else 0
        # legacy restart pattern
        self.open_turn: Any = None
        self.open_step: Any = None
        self.prev_splice: Any = None  # data of the directly preceding agent/inbox/spliced

    # -- refusals

    def refuse(self, detail: str, seq: int | None = None, event_type: str | None = None) -> UpgradeRefused:
        return UpgradeRefused(NAME, 1, detail, seq, event_type)

    def refuser(self, seq: int, event_type: str) -> Refuse:
        return lambda detail: self.refuse(detail, seq, event_type)

    # -- input

    def event(self, event: dict[str, Any], raw: bytes | None) -> None:
        t = event.get("type")
        seq = event.get("seq")
        if type(seq) is not int:
            raise self.refuse(f"event without an integer seq: {chosen_repr(t)}")
        if not isinstance(t, str) or t not in INVENTORY_V1:
            if isinstance(t, str) and (t in LEGACY_V0 or t.startswith(LEGACY_PREFIXES_V0)):
                raise self.refuse(
                    f'legacy v0 event type "{t}" cannot occur in format v1 (the v0→v1 step normalises it)',
                    seq,
                    t,
                )
            raise self.refuse(
                f"format v1 contains unknown event type {_quote(t)}; the v1→v2 edge refuses every event "
                "outside its closed first-party inventory, even one marked ignorable",
                seq,
                t if isinstance(t, str) else None,
            )
        time = event.get("time")
        if type(time) is int:
            self.last_time = time
        data = event.get("data")
        splice = self.prev_splice
        self.prev_splice = data if t == "agent/inbox/spliced" else None
        if t == "assistant/chunk":
            self.chunk(event, seq)
            return
        if t == "assistant/message":
            self.message(event, seq)
            return
        d = data if isinstance(data, dict) else {}
        turn, step = d.get("turn"), d.get("step")
        if t == "step/end":
            self.close(lambda a: a.turn == turn and a.step == step, settle=True)
        elif t in _CLOSES_STEP_ATTEMPT:
            self.close(lambda a: a.turn == turn and a.step == step, settle=False)
        elif t == "turn/end":
            self.close(lambda a: a.turn == turn, settle=True)
        elif t == "turn/start":
            self.close(lambda a: True, settle=True)
            if _restart_pattern(self.open_turn, self.open_step, turn, splice):
                closer = {
                    "type": "turn/end",
                    "seq": seq,
                    "time": event.get("time"),
                    "data": {"turn": self.open_turn, "reason": {"kind": "interrupted"}},
                }
                self.buf.append(_Slot(closer, seq))
        elif t == "user/message" and _goal_round_zero(d):
            change = {
                "type": "goal/change",
                "seq": seq,
                "time": event.get("time"),
                "data": d["source"]["change"],
            }
            self.buf.append(_Slot(change, seq))
            message = {**event, "data": {**d, "source": {"kind": "plugin", "plugin": "goal"}}}
            self.buf.append(_Slot(message, seq, seq, None, True))
            return
        self.observe_turns(t, turn, step)
        self.buf.append(_Slot(event, seq, seq, raw))

    def observe_turns(self, t: str, turn: Any, step: Any) -> None:
        if t == "turn/start":
            self.open_turn, self.open_step = turn, None
        elif t == "turn/end":
            self.open_turn = self.open_step = None
        elif t == "step/start":
            self.open_step = step
        elif t == "step/end":
            self.open_step = None

    def chunk(self, event: dict[str, Any], seq: int) -> None:
        # the bulk of a v1 log: its refusals are built only when one is raised (issue 14)
        data = event.get("data")
        if event.keys() != _CHUNK_KEYS:
            extra = sorted(event.keys() ^ _CHUNK_KEYS)
            raise self.refuse(
                f"an assistant/chunk must have exactly type, seq, time, data to fold into a stream: {extra}",
                seq,
                "assistant/chunk",
            )
        if type(event["time"]) is not int:
            raise self.refuse("assistant/chunk time is not an integer", seq, "assistant/chunk")
        if not isinstance(data, dict) or data.keys() != _CHUNK_DATA_KEYS:
            raise self.refuse(
                "assistant/chunk data must be exactly {turn, step, chunk} to fold into a stream",
                seq,
                "assistant/chunk",
            )
        turn, step, chunk = data["turn"], data["step"], data["chunk"]
        if type(turn) is not int or type(step) is not int or not isinstance(chunk, dict):
            raise self.refuse(
                "assistant/chunk needs integer turn/step and a chunk object", seq, "assistant/chunk"
            )
        self.take(seq, event["time"], turn, step, chunk)

    def take(self, seq: int, time: int, turn: int, step: int, chunk: dict[str, Any]) -> None:
        """A checked chunk joins its attempt (``chunk``; the fused pass calls it directly for a
        chunk it checked the same way, ``core.upgrade.fused``)."""
        key = (turn, step)
        attempt = self.open.get(key)
        if attempt is None:
            attempt = _Attempt(turn, step, seq)
            self.open[key] = attempt
            self.pending.append(attempt)
        elif self.seeded:
            self.check_cut(attempt, seq, "assistant/chunk")
        spans = attempt.spans  # attempt.add, inlined: the bulk of a v1 log (issue 14)
        if spans and spans[-1][1] == seq - 1:
            spans[-1][1] = seq
        else:
            spans.append([seq, seq])
        attempt.last_seq = seq
        attempt.last_time = time
        attempt.stream.add(time, chunk)
        self.remap.drop(seq)
        buf = self.buf
        # The attempt now stands at its newest last chunk. When its slot is already the last
        # one buffered (its previous chunk came just before), that is the same position: the
        # slot stays, instead of a new one that supersedes it (an open attempt is pending, and
        # ``flush`` never passes a pending attempt's slot, so the slot is still buffered).
        last = buf.last()
        if last is None or last is not attempt.slot:
            before = attempt.slot
            slot = _Slot(None, seq, attempt=attempt)
            attempt.slot = slot
            buf.append(slot)
            if before is not None:
                buf.changed(before)  # superseded
        if chunk.get("type") == "finish":
            attempt.closed = True
            del self.open[key]

    def message(self, event: dict[str, Any], seq: int) -> None:
        refuse = self.refuser(seq, "assistant/message")
        data = event.get("data")
        if not isinstance(data, dict):
            raise refuse("assistant/message data is not an object")
        if "stream" in data:
            raise refuse("a v1 assistant/message already carries data.stream")
        key = (data.get("turn"), data.get("step"))
        cited = event.get("sourceEventSeqs")
        stream: list[dict[str, Any]] = []
        if cited is None:
            if any((a.turn, a.step) == key for a in self.pending):
                raise refuse("does not cite its complete v1 chunk attempt")
        elif not isinstance(cited, list):
            raise refuse("sourceEventSeqs is not a list of seqs")
        elif cited:
            attempt = next(
                (a for a in self.pending if (a.turn, a.step) == key and a.cited_by(cited)),
                None,
            )
            if attempt is None:
                raise refuse("chunk provenance is not one complete ordered attempt")
            self.check_cut(attempt, seq, "assistant/message")
            attempt.state = _CLAIMED
            self.pending.remove(attempt)
            if attempt.slot is not None:
                self.buf.changed(attempt.slot)
            if self.open.get((attempt.turn, attempt.step)) is attempt:
                del self.open[attempt.turn, attempt.step]
            stream = attempt.stream.records
        out = {k: v for k, v in event.items() if k != "sourceEventSeqs"}
        out["data"] = {**data, "stream": stream}
        self.buf.append(_Slot(out, seq, seq, None, True))

    def check_cut(self, attempt: _Attempt, member: int, event_type: str) -> None:
        if self.seeded and (attempt.first < self.cut) != (member < self.cut):
            raise self.refuse(
                f"the inherited cut {self.cut} splits one assistant attempt "
                f"(chunks from seq {attempt.first})",
                member,
                event_type,
            )

    def close(self, which: Callable[[_Attempt], bool], settle: bool) -> None:
        for key, attempt in list(self.open.items()):
            if which(attempt):
                attempt.closed = True
                del self.open[key]
        if settle:
            for attempt in [a for a in self.pending if which(a)]:
                attempt.state = _SETTLED
                self.pending.remove(attempt)
                if attempt.slot is not None:
                    self.buf.changed(attempt.slot)

    # -- output

    def flush(self) -> Iterator[Rec]:
        # a pending attempt's placeholder stops it: what follows waits (``SlotQueue.hold``)
        for slot in self.buf.released():
            yield from self.emit(slot)

    def emit(self, slot: _Slot) -> Iterator[Rec]:
        event = slot.event
        assert event is not None
        tag = False
        if not self.cut_done and slot.origin >= self.cut:
            self.cut_done = True
            if slot.old == self.cut and event.get("type") == "session/end-seed":
                tag = True
            else:
                yield Rec([_marker(self.next, event.get("time"))], None)
                self.next += 1
        new = self.next
        self.next += 1
        old = slot.old
        if old is None:  # a generated event
            yield Rec([{**event, "seq": new}], None)
            return
        self.remap.keep(old, new)
        refuse = self.refuser(old, str(event.get("type")))
        out, changed = remap_references(event, old, self.remap, refuse)
        if tag:
            out = {**out, "data": {"inherited": True}}
        if new != old:
            _check_not_started_repair(out, old, new, refuse)
            out = {**out, "seq": new}
        keep_raw = not (changed or tag or slot.touched or new != old)
        yield Rec([out], slot.raw if keep_raw else None)

    def finish(self) -> Iterator[Rec]:
        self.close(lambda a: True, settle=True)
        yield from self.flush()
        assert not self.buf
        if not self.cut_done:
            self.cut_done = True
            yield Rec([_marker(self.next, self.last_time)], None)
            self.next += 1


def _check_not_started_repair(event: dict[str, Any], old: int, new: int, refuse: Refuse) -> None:
    """A ``TOOL_NOT_STARTED`` repair result whose seq moves refuses (docs/format.md "Where the
    published packages decided"): the released chain validates the v2 artifact with the v0
    relationship rule that the repair's id is ``interrupted-tool-result-<callId>-<its seq>``, and
    renumbering keeps the id, so the published v1-to-v2 edge refuses every such log ("is not the
    exact TOOL_NOT_STARTED repair")."""
    if event.get("type") != "tool/result" or event.get("surfaceOp") != "append":
        return
    data = event.get("data")
    error = data.get("error") if type(data) is dict else None
    if type(error) is not dict or error.get("code") != "TOOL_NOT_STARTED":
        return
    message = data.get("message") if type(data) is dict else None
    source = message.get("source") if type(message) is dict else None
    call_id = source.get("callId") if type(source) is dict else None
    raise refuse(
        f"tool/result {call_id} is not the exact TOOL_NOT_STARTED repair once renumbered (seq {old} "
        f"becomes {new}, but its id must name its own seq); the released chain refuses it"
    )


def _quote(value: Any) -> str:
    return f'"{chosen(value)}"' if isinstance(value, str) else chosen_repr(value)


def _marker(seq: int, time: Any) -> dict[str, Any]:
    return {"type": "session/end-seed", "seq": seq, "time": time, "data": {"inherited": True}}


def _resolved(slot: _Slot) -> _Slot | None:
    """What an attempt's placeholder stands for now: itself while the attempt is pending, nothing
    once it was superseded (the attempt moved to a later chunk) or claimed, its log-only
    ``assistant/attempt`` once settled."""
    attempt: _Attempt = slot.attempt
    if slot is not attempt.slot or attempt.state == _CLAIMED:
        return None
    if attempt.state == _PENDING:
        return slot
    return _Slot(_attempt_event(attempt), attempt.last_seq)


def _attempt_event(attempt: _Attempt) -> dict[str, Any]:
    return {
        "type": "assistant/attempt",
        "seq": attempt.last_seq,
        "time": attempt.last_time,
        "data": {"turn": attempt.turn, "step": attempt.step, "stream": attempt.stream.records},
    }


def _restart_pattern(open_turn: Any, open_step: Any, turn: Any, splice: Any) -> bool:
    """§1.3 legacy fix 1: the next turn starts while the previous one is open between steps,
    right after a non-empty next-turn inbox splice."""
    return (
        type(open_turn) is int
        and open_step is None
        and type(turn) is int
        and turn == open_turn + 1
        and isinstance(splice, dict)
        and splice.get("target") == "next-turn"
        and isinstance(splice.get("inserted"), list)
        and len(splice["inserted"]) > 0
    )


def _goal_round_zero(data: dict[str, Any]) -> bool:
    """§1.3 legacy fix 2: a goal-sourced round-zero user message that inlines its goal
    mutation (``source.change``)."""
    source = data.get("source")
    return (
        isinstance(source, dict)
        and source.get("kind") == "goal"
        and type(source.get("round")) is int
        and source["round"] == 0
        and isinstance(source.get("change"), dict)
    )


class V1ToV2(StepShell, name=NAME, source=1):
    def edit_header(self, header: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in header.items() if k != "seedLength"}
        out["version"] = 2
        out["isSeeded"] = "seedLength" in header
        return out

    def events(self, header: dict[str, Any], recs: Iterator[Rec]) -> Iterator[Rec]:
        state = _Run(header, self.spill)
        for event, raw, last in each_event(recs):
            canonical = released_envelope(event)
            state.event(canonical, raw if canonical is event else None)
            if last:
                yield from state.flush()
        yield from state.finish()


STEP = V1ToV2()
