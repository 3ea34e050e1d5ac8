"""The upgrade chain in one pass (spec §1.3; issue 14): the same steps, driven event by event.

``chain.run_chain`` threads the records through one generator per step (v0 → v1 → v2 → v3 →
v4), each step re-walking the stream: a record is decoded into a ``Rec``, handed on by four
generators and re-wrapped by each. This module drives the very same per-step state machines
(``v1._Normaliser``, ``v2._Run``, ``v3._Run``, ``v4._Run``) directly: a decoded event is pushed
through the steps by plain calls, in the same order the generators would take it (depth first:
an event reaches the last step before the next record is decoded; v1 → v2 still releases its
held events only at a record's end), and encoded as ``records.encode_records`` would. Nothing
is decided here that a step does not decide itself, so the output and every refusal are the
step-by-step chain's (``tests/migrate/test_fused.py`` compares the two on every migrate fixture,
generated logs and mutated ones).

One shortcut: the ``assistant/chunk`` event (about 90 % of a chatty v0/v1 log) whose envelope
is exactly ``{type, seq, time, data}`` with integer ``seq``/``time`` and ``data`` exactly
``{turn, step, chunk}`` (integer turn/step, an object chunk) passes every check of v0 → v1
(§1.3: a chunk is never rewritten; its members are a subset of §4.1's) and of v1 → v2's chunk
intake, so it goes straight to ``v2._Run.take`` (its attempt, §4.5 stream records). Any other
chunk takes the general path and meets the steps' own checks and refusals.

Only chains that reach v2 or later are fused (a v0 → v1 migration keeps packed rows as rows:
``run_chain`` handles it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any

import orjson

from sesstool.core.chunk_rows import expand_row
from sesstool.core.jsonline import decode_fallback
from sesstool.core.seq_ranges import decode_seqs
from sesstool.core.upgrade import Step, StepShell, UpgradeSpill, v1, v2, v3, v4
from sesstool.core.upgrade.records import encode_event, released_envelope
from sesstool.core.vocabulary import PACKED_TAGS

_STEP_TYPES: dict[int, type] = {0: v1.V0ToV1, 1: v2.V1ToV2, 2: v3.V2ToV3, 3: v4.V3ToV4}
_CHUNK_KEYS = v2._CHUNK_KEYS
_CHUNK_DATA_KEYS = v2._CHUNK_DATA_KEYS

Push = Callable[[dict[str, Any], "bytes | None"], None]


def fusable(steps: Sequence[Step]) -> bool:
    """Whether ``steps`` are the dsh chain's own consecutive steps, ending at v2 or later."""
    if not steps or steps[-1].target < 2:
        return False
    source = steps[0].source
    return all(type(step) is _STEP_TYPES.get(source + i) for i, step in enumerate(steps))


def fused_chain(
    steps: Sequence[Step],
    header: dict[str, Any],
    lines: Iterable[bytes],
    closers: Collection[dict[str, Any]],
    target: int,
) -> tuple[dict[str, Any], Iterator[bytes]]:
    """(the header at ``target``, the encoded body lines): what ``run_chain`` then
    ``encode_records`` give for the body ``lines`` (already validated by a scan) followed by
    ``closers``. The header is checked by every step now, as ``run_chain`` does; the body when
    the lines are iterated."""
    assert fusable(steps)
    headers = []
    for step in steps:
        assert isinstance(step, StepShell)
        step.check(header)  # StepShell.run checks the source header before any event
        headers.append(header)
        header = step.header(header)
    return header, _lines(steps, headers, lines, closers, target)


def _lines(
    steps: Sequence[Step],
    headers: list[dict[str, Any]],
    lines: Iterable[bytes],
    closers: Collection[dict[str, Any]],
    target: int,
) -> Iterator[bytes]:
    by_source = {step.source: (step, headers[i]) for i, step in enumerate(steps)}
    out: list[bytes] = []  # the lines of one record (or of one event v1 → v2 releases), then yielded
    finishers: list[Callable[[], Iterator[None]]] = []
    into_v2, flush2, run2 = _v2_stage(by_source, _v3_on(by_source, out.append, target, finishers), finishers)
    normalise: Normalise | None = None
    if 0 in by_source:
        step0, header0 = by_source[0]
        normalise = v1._Normaliser(header0["id"], _spill_of(step0)).event
    finishers.reverse()  # the first step finishes first, its last records flowing on
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    pending = v2._PENDING
    for raw in lines:
        try:
            obj = loads(raw)
        except decode_error as exc:
            obj = decode_fallback(raw, exc)
        if run2 is not None and obj.get("type") == "assistant/chunk" and obj.keys() == _CHUNK_KEYS:
            seq, time, data = obj["seq"], obj["time"], obj["data"]
            if (
                type(seq) is int
                and type(time) is int
                and type(data) is dict
                and data.keys() == _CHUNK_DATA_KEYS
            ):
                turn, step, chunk = data["turn"], data["step"], data["chunk"]
                if type(turn) is int and type(step) is int and type(chunk) is dict:
                    # what v2._Run.event does for such a chunk before it takes it
                    run2.last_time = time
                    run2.prev_splice = None
                    run2.take(seq, time, turn, step, chunk)
                    head = run2.buf.first()
                    attempt = head.attempt
                    if attempt is None or head is not attempt.slot or attempt.state != pending:
                        for _ in flush2():
                            yield from out
                            out.clear()
                    continue
        _record(obj, raw, normalise, into_v2)
        for _ in flush2():
            yield from out
            out.clear()
        if out:
            yield from out
            out.clear()
    for closer in closers:
        _one(closer, None, normalise, into_v2)
        for _ in flush2():
            yield from out
            out.clear()
        if out:
            yield from out
            out.clear()
    for finish in finishers:
        for _ in finish():
            yield from out
            out.clear()
    yield from out


Normalise = Callable[[dict[str, Any]], dict[str, Any]]


def _record(obj: dict[str, Any], raw: bytes, normalise: Normalise | None, into_v2: Push) -> None:
    """One decoded record other than the plain chunk (``records.decode_records``), onward."""
    if obj.get("type") in PACKED_TAGS and "seq0" in obj:
        row = expand_row(obj)
        if normalise is not None:  # v0 → v1 checks the whole row before v1 → v2 sees it
            for event in row:
                normalise(event)
        for event in row:
            into_v2(event, None)
        return
    src = obj.get("sourceEventSeqs")
    if isinstance(src, list) and any(isinstance(v, list) for v in src):
        obj["sourceEventSeqs"] = decode_seqs(src, obj["seq"], True)
    _one(obj, raw, normalise, into_v2)


def _one(event: dict[str, Any], raw: bytes | None, normalise: Normalise | None, into_v2: Push) -> None:
    """A single-event record through v0 → v1 (when in the chain), then onward."""
    if normalise is not None:
        new = released_envelope(normalise(event))
        into_v2(new, raw if new is event else None)
    else:
        into_v2(event, raw)


Stages = dict[int, tuple[Step, dict[str, Any]]]
Finish = Callable[[], Iterator[None]]
# events v1 → v2 may release from one flush into the lines of one record; a flush of more pauses
# after each (a step closing behind every event it held releases them all)
_PASSED_AT_ONCE = 64


def _v3_on(by_source: Stages, emit: Callable[[bytes], None], target: int, finishers: list[Finish]) -> Push:
    """The push into v2 → v3 (or v3 → v4, or the encoder: the first of them in the chain),
    each step pushing into the next and the last into the encoder (``records.encode_records``)."""

    def encode(event: dict[str, Any], raw: bytes | None) -> None:
        emit(raw + b"\n" if raw is not None else encode_event(event, target))

    push: Push = encode
    if 3 in by_source:
        step4, header3 = by_source[3]
        assert isinstance(step4, v4.V3ToV4)
        run4 = step4.start(header3)
        after4 = push

        def push4(event: dict[str, Any], raw: bytes | None) -> None:
            held: list[dict[str, Any]] = []
            if run4.event(event, held):
                for new in held:
                    after4(new, None)
            else:
                after4(event, raw)

        def finish4() -> Iterator[None]:
            for rec in run4.finish():
                for new in rec.events:
                    after4(new, None)
            yield

        push = push4
        finishers.append(finish4)
    if 2 in by_source:
        step3, header2 = by_source[2]
        run3 = v3._Run(header2, _spill_of(step3))
        after3 = push

        def push3(event: dict[str, Any], raw: bytes | None) -> None:
            for rec in run3.event(event, raw):
                after3(rec.events[0], rec.raw)

        def finish3() -> Iterator[None]:
            run3.finish()
            yield

        push = push3
        finishers.append(finish3)
    return push


def _v2_stage(
    by_source: Stages, after2: Push, finishers: list[Finish]
) -> tuple[Push, Callable[[], Iterable[None]], v2._Run | None]:
    """(the push into v1 → v2, its flush at a record's end, its state), or the push onward,
    a flush that does nothing and None when the chain starts later. The flush and the finish
    pause after each event they release (a step that closes may release every event held behind
    its attempt: they are passed on, never gathered)."""
    if 1 not in by_source:
        return after2, _nothing, None
    step2, header1 = by_source[1]
    state2 = v2._Run(header1, _spill_of(step2))

    def push2(event: dict[str, Any], raw: bytes | None) -> None:
        canonical = released_envelope(event)
        state2.event(canonical, raw if canonical is event else None)

    def flush2() -> Iterable[None]:
        if len(state2.buf) <= _PASSED_AT_ONCE:
            for rec in state2.flush():
                after2(rec.events[0], rec.raw)
            return ()
        return drain()

    def drain() -> Iterator[None]:
        for rec in state2.flush():
            after2(rec.events[0], rec.raw)
            yield

    def finish2() -> Iterator[None]:
        for rec in state2.finish():
            after2(rec.events[0], rec.raw)
            yield

    finishers.append(finish2)
    return push2, flush2, state2


def _nothing() -> Iterable[None]:
    return ()


def _spill_of(step: Step) -> UpgradeSpill | None:
    """The spill the engine gave the step for this run (``Step.with_spill``)."""
    assert isinstance(step, StepShell)
    return step.spill


__all__ = ["fusable", "fused_chain"]
