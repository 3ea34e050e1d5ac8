"""The history Codex rebuilds on resume, as the input items of its first model request.

agent-formats §3.4 (``reconstruct_history_from_rollout``, ``context_manager/normalize.rs``):
the newest ``compacted.replacement_history`` is the base history; response items after it are
replayed (a later ``session_meta`` line starts it afresh: observed with 0.171);
``thread_rolled_back{num_turns}`` drops the newest user turns; legacy
``ghost_snapshot`` items and items of unknown types are not sent; then the prompt is
normalised: a synthetic ``"aborted"`` output goes right after every call without one (its id is
a UUIDv5 of the call's id, as Codex derives it) and outputs without a call are dropped. Keys
Codex keeps only locally (``internal_chat_message_metadata_passthrough``) are not sent.

What this does NOT contain, because Codex builds it from configuration rather than from the
rollout (checked against 0.171's requests by the CLI lane): the developer message with the base
instructions Codex puts first in every request, and everything after the history (context
updates for settings that changed since the thread was recorded, the new user prompt).
"""

from __future__ import annotations

import uuid
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

import orjson

from sesstool.dialects.base import counting_pass
from sesstool.dialects.codex.vocabulary import (
    DROPPED_ON_LOAD,
    LOCAL_ONLY_KEYS,
    RESPONSE_ITEM_TYPES,
)

if TYPE_CHECKING:
    from sesstool.store.spill import ArraySpill, IntArray, SpilledArray, SpillFile

SPILL_AT = 1 << 18  # history items held in memory; past them the columns move to a spill file
_SORT_SLICE = 4096  # sorted values read back per statement

# codex-rs/core/src/context_manager/normalize.rs: SYNTHETIC_OUTPUT_ID_NAMESPACE.
SYNTHETIC_OUTPUT_NAMESPACE = uuid.UUID("90d38d3e-6a5b-4d52-bfe2-2f1e634bfac4")
ABORTED = "aborted"
EXCLUDED = (
    "the developer message with the base instructions that Codex puts first in every request "
    "(built from session configuration, not replayed from the rollout)",
    "context updates Codex adds after the history when settings or the cwd changed since the "
    "thread was recorded",
    "the new user prompt of the resumed turn",
)


def synthetic_output_id(prefix: str, item_id: str | None) -> str | None:
    """``{prefix}_{uuid5(ns, "{prefix}:{call item id}")}``; None when the call has no id."""
    if not item_id:
        return None
    return f"{prefix}_{uuid.uuid5(SYNTHETIC_OUTPUT_NAMESPACE, f'{prefix}:{item_id}')}"


def aborted_output(call: dict[str, Any]) -> dict[str, Any]:
    """The output Codex synthesises in memory for a call without one (never persisted by it)."""
    custom = call.get("type") == "custom_tool_call"
    prefix = "ctco" if custom else "fco"
    item: dict[str, Any] = {"type": "custom_tool_call_output" if custom else "function_call_output"}
    item_id = synthetic_output_id(prefix, call.get("id") if isinstance(call.get("id"), str) else None)
    if item_id is not None:
        item["id"] = item_id
    item["call_id"] = call.get("call_id")
    item["output"] = ABORTED
    return item


# Codex decodes a local shell action into a struct and re-encodes it, so its optional fields
# are sent as null when the rollout omits them (observed with 0.171).
_EXEC_ACTION_DEFAULTS = {"timeout_ms": None, "working_directory": None, "env": None, "user": None}


def _sendable(payload: dict[str, Any]) -> dict[str, Any]:
    if any(key in payload for key in LOCAL_ONLY_KEYS):
        payload = {k: v for k, v in payload.items() if k not in LOCAL_ONLY_KEYS}
    action = payload.get("action")
    if (
        payload.get("type") == "local_shell_call"
        and isinstance(action, dict)
        and action.get("type") == "exec"
    ):
        payload = {**payload, "action": {**action, **{k: action.get(k) for k in _EXEC_ACTION_DEFAULTS}}}
    return payload


def _is_user_message(item: dict[str, Any]) -> bool:
    return item.get("type") == "message" and item.get("role") == "user"


@dataclass(frozen=True, slots=True)
class DerivedHistory:
    items: tuple[dict[str, Any], ...]
    synthetic_outputs: int  # "aborted" outputs inserted for calls without one
    dropped_orphans: int  # outputs without a call, dropped
    base_from_compaction: bool  # the history starts from a compacted replacement_history
    rollbacks_applied: int
    excluded: tuple[str, ...] = EXCLUDED


# What the builder keeps per history item: small ints (issue 11 item 1), never the item itself
# when it reads by address. ``ref`` finds the item: an index into ``held`` (in memory), or the
# plaintext offset of its line, with ``sub`` = -1 for a response_item's payload, the index in a
# compacted line's ``replacement_history``, or -2 for a legacy compaction's summary message.
_OTHER, _USER, _CALL, _CUSTOM_CALL, _SHELL_CALL, _OUTPUT, _CUSTOM_OUTPUT = range(7)
_KINDS = {
    "function_call": _CALL,
    "custom_tool_call": _CUSTOM_CALL,
    "local_shell_call": _SHELL_CALL,
    "function_call_output": _OUTPUT,
    "custom_tool_call_output": _CUSTOM_OUTPUT,
}
_SUMMARY = -2
_KEY_BITS = 32


def _kind(item: dict[str, Any]) -> int:
    return _USER if _is_user_message(item) else _KINDS.get(item.get("type"), _OTHER)  # type: ignore[arg-type]


def _call_key(value: Any) -> int:
    """A 31-bit digest of a ``call_id`` (Python's equality: ``1``, ``1.0`` and ``True`` alike, as
    in the sets Codex's rule is written with); equal keys are compared in full."""
    try:
        digest = hash(value)
    except TypeError:
        digest = hash(repr(value))
    return digest & 0x7FFFFFFF


class _Spill:
    """The spill file of one history (store/spill.py ``ArraySpill``, issue 11 item 1): imported
    and opened only when a history first passes ``SPILL_AT`` items."""

    def __init__(self) -> None:
        self._arrays: ArraySpill | None = None

    def _opened(self) -> ArraySpill:
        if self._arrays is None:
            from sesstool.store.spill import ArraySpill  # sqlite3: only a long history needs it

            self._arrays = ArraySpill("a long rollout's history")
        return self._arrays

    def file(self) -> SpillFile:
        return self._opened().file()

    def array(self, typecode: str, items: Iterable[int] = ()) -> SpilledArray:
        return self._opened().array(typecode, items)

    def sorted(self, values: Iterable[int]) -> SpilledArray:
        """``values`` (distinct) in ascending order, sorted by the spill file's b-tree."""
        from sesstool.store.spill import SpilledArray

        store = self.file()
        table = store.table("k INTEGER PRIMARY KEY")
        store.executemany(f"INSERT INTO {table} VALUES (?)", ((v,) for v in values))
        made = SpilledArray("q", store.pages(), sorted=True)
        last = -(1 << 63)
        while True:
            rows = store.execute(
                f"SELECT k FROM {table} WHERE k > ? ORDER BY k LIMIT {_SORT_SLICE}", (last,)
            ).fetchall()
            if not rows:
                return made
            made.extend(row[0] for row in rows)
            last = rows[-1][0]


_COLUMNS = (("segment", "q"), ("ref", "q"), ("sub", "q"), ("kind", "b"), ("key", "q"))
_DEAD = 7  # the kind of an item a rollback dropped, until the columns are compacted


class _Items:
    """The history as columns of machine words, in order; past ``SPILL_AT`` items (a
    ``spill`` given) the columns are paged to a spill file.

    A rollback costs what it drops (issue 11 item 1, stop 30): ``users`` lists where each
    segment holding a user message starts (segments >= 0, oldest first), so the newest are
    found without walking past the segments without one (which a rollback keeps); their items
    are marked ``_DEAD`` where they are, the dead items at the end cut off, and the columns
    compacted in place once the dead outnumber the living (each item moved at most once per
    item dropped before it). The columns are never copied: ``n`` items of them are used, the
    rest is room the next items overwrite."""

    def __init__(self, spill: _Spill | None = None) -> None:
        self.spill = spill
        self.spilled = False
        self.segment: IntArray = array("q")
        self.ref: IntArray = array("q")
        self.sub: IntArray = array("q")
        self.kind: IntArray = array("b")
        self.key: IntArray = array("q")  # _call_key(call_id); -1: no call_id
        self.users: IntArray = array("q")  # the first item of each segment holding a user message
        self.n = self.users_n = self.dead = 0

    def __len__(self) -> int:
        return self.n

    def _move(self) -> None:
        assert self.spill is not None
        for name, typecode in _COLUMNS:
            setattr(self, name, self.spill.array(typecode, islice(getattr(self, name), self.n)))
        self.users = self.spill.array("q", islice(self.users, self.users_n))
        self.spilled = True

    def append(self, segment: int, ref: int, sub: int, item: dict[str, Any]) -> None:
        n = self.n
        if not self.spilled and self.spill is not None and n >= SPILL_AT:
            self._move()
        kind = _kind(item)
        call_id = item.get("call_id")
        self._put(n, segment, ref, sub, kind, -1 if call_id is None else _call_key(call_id))
        self.n = n + 1
        if kind != _USER or segment < 0:
            return
        users, top = self.users, self.users_n - 1
        if top >= 0 and self.segment[users[top]] == segment:
            return  # its segment already holds one
        # where the segment starts: walked once, as it first holds a user message
        while n > 0 and self.segment[n - 1] == segment and self.kind[n - 1] != _DEAD:
            n -= 1
        _put(users, top + 1, n)
        self.users_n = top + 2

    def _put(self, i: int, segment: int, ref: int, sub: int, kind: int, key: int) -> None:
        """The columns' item ``i`` (at most one past the end of their room)."""
        _put(self.segment, i, segment)
        _put(self.ref, i, ref)
        _put(self.sub, i, sub)
        _put(self.kind, i, kind)
        _put(self.key, i, key)

    def roll_back(self, turns: int) -> None:
        """Drop the newest ``turns`` segments that hold a user message (all of them when there
        are fewer), keeping every other item in order."""
        take = min(turns, self.users_n)
        if take == 0:
            return
        segments, kinds, n = self.segment, self.kind, self.n
        for top in range(self.users_n - 1, self.users_n - 1 - take, -1):
            i = self.users[top]
            segment = segments[i]
            while i < n and segments[i] == segment:  # a segment's items are contiguous
                kinds[i] = _DEAD
                i += 1
                self.dead += 1
        self.users_n -= take
        while n > 0 and kinds[n - 1] == _DEAD:
            n -= 1
            self.dead -= 1
        self.n = n
        if 2 * self.dead > n:
            self._compact()

    def _compact(self) -> None:
        """Move the living items down over the dead, in place (``users`` moved with them)."""
        kinds, users = self.kind, self.users
        w = u = 0
        for r in range(self.n):
            kind = kinds[r]
            if kind == _DEAD:
                continue
            if u < self.users_n and users[u] == r:
                users[u] = w
                u += 1
            if w != r:
                self._put(w, self.segment[r], self.ref[r], self.sub[r], kind, self.key[r])
            w += 1
        self.n, self.dead = w, 0


def _put(column: IntArray, i: int, value: int) -> None:
    if i < len(column):
        column[i] = value
    else:
        column.append(value)


class HistoryBuilder:
    """Fed every decoded rollout line (in order); ``derive()`` returns what Codex would send.

    ``by_address``: keep where each item is (its line's plaintext offset, passed to ``feed``)
    instead of the item; ``Derivation`` then reads the items back (issue 11 item 1)."""

    def __init__(self, by_address: bool = False) -> None:
        self.by_address = by_address
        self.held: list[dict[str, Any]] = []  # in memory: the items, by ``ref``
        # by address, a long history's columns move to a spill file (``SPILL_AT``)
        self._spill = _Spill() if by_address else None
        self._items = _Items(self._spill)  # segment -1 holds a compaction's base history
        self._segment = 0
        self._from_compaction = False
        self._rollbacks = 0
        self._metas = 0
        self.restarts = 0  # later session_meta lines that dropped the history before them

    def _add(self, segment: int, item: dict[str, Any], offset: int, sub: int) -> None:
        if self.by_address:
            self._items.append(segment, offset, sub, item)
        else:
            self._items.append(segment, len(self.held), sub, item)
            self.held.append(item)

    def feed(self, line: dict[str, Any], offset: int = -1) -> None:
        kind = line.get("type")
        payload = line.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "response_item":
            item_type = payload.get("type")
            if item_type in RESPONSE_ITEM_TYPES and item_type not in DROPPED_ON_LOAD:
                self._add(self._segment, _sendable(payload), offset, -1)
        elif kind == "event_msg":
            event = payload.get("type")
            if event == "task_started":
                self._segment += 1
            elif event == "thread_rolled_back":
                turns = payload.get("num_turns")
                if type(turns) is int and turns > 0:
                    self._roll_back(turns)
        elif kind == "compacted":
            self._compacted(payload, offset)
        elif kind == "session_meta":
            self._metas += 1
            if self._metas > 1:
                # Observed with 0.171: a later session_meta drops the history before it (the
                # resumed request starts after it and re-adds the permissions context).
                self._items = _Items(self._spill)
                self.held = []
                self.restarts += 1

    def _compacted(self, payload: dict[str, Any], offset: int) -> None:
        history = payload.get("replacement_history")
        before, held = self._items, self.held
        self._items, self.held = _Items(self._spill), []
        if isinstance(history, list):
            for sub, item in enumerate(history):
                if isinstance(item, dict):
                    self._add(-1, _sendable(item), offset, sub)
        else:
            # Legacy compaction: the user messages so far plus the summary as a user message.
            for i in range(len(before)):
                if before.kind[i] == _USER:
                    if self.by_address:
                        user = {"type": "message", "role": "user"}  # what the columns need of it
                        self._items.append(-1, before.ref[i], before.sub[i], user)
                    else:
                        self._add(-1, held[before.ref[i]], -1, -1)
            self._add(-1, legacy_summary(payload), offset, _SUMMARY)
        self._from_compaction = True

    def _roll_back(self, turns: int) -> None:
        """Drop the newest ``turns`` segments that hold a user message (ThreadRolledBack)."""
        self._rollbacks += 1
        self._items.roll_back(turns)

    def derivation(self, item_at: Callable[[int, int], dict[str, Any]]) -> Derivation:
        """The derivation over the items as they stand, each read by ``item_at(ref, sub)``."""
        return Derivation(self._items, item_at, self._from_compaction, self._rollbacks)

    def derive(self) -> DerivedHistory:
        """In memory (without ``by_address``): the whole history at once."""
        held = self.held
        derivation = self.derivation(lambda ref, sub: held[ref])
        items = tuple(derivation.items())
        return DerivedHistory(
            items, derivation.synthetic, derivation.dropped, self._from_compaction, self._rollbacks
        )


def legacy_summary(payload: dict[str, Any]) -> dict[str, Any]:
    """A legacy compaction's summary, as the user message Codex makes of it."""
    summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}


def item_in(line: dict[str, Any], sub: int) -> dict[str, Any]:
    """The history item ``sub`` of a decoded rollout line (see ``_Items``), as it is sent."""
    payload = line["payload"]
    if sub == _SUMMARY:
        return legacy_summary(payload)
    if sub < 0:
        return _sendable(payload)
    return _sendable(payload["replacement_history"][sub])


class Derivation:
    """The prompt normalisation (normalize.rs) over the history's columns, the items read one
    at a time: a synthetic ``"aborted"`` output after every call without one, outputs without a
    call dropped. Which call has an output (and which output a call) is found by the call ids'
    digests, sorted (a machine word per item), and confirmed on the items themselves."""

    def __init__(
        self,
        items: _Items,
        item_at: Callable[[int, int], dict[str, Any]],
        from_compaction: bool,
        rollbacks: int,
    ) -> None:
        self._items, self._item_at = items, item_at
        self.from_compaction, self.rollbacks = from_compaction, rollbacks
        self.synthetic = 0
        self.dropped = 0
        self._outputs: IntArray
        self._custom_outputs: IntArray
        self._function_calls: IntArray
        self._custom_calls: IntArray
        if items.spilled:  # sorted in the spill file, one pass over the columns each
            assert items.spill is not None
            sort = items.spill.sorted
            self._outputs = sort(_packed_of(items, (_OUTPUT,)))
            self._custom_outputs = sort(_packed_of(items, (_CUSTOM_OUTPUT,)))
            self._function_calls = sort(_packed_of(items, (_CALL, _SHELL_CALL)))
            self._custom_calls = sort(_packed_of(items, (_CUSTOM_CALL,)))
            return
        by_kind: dict[int, list[int]] = {k: [] for k in _KINDS.values()}
        for i in range(len(items)):
            group = by_kind.get(items.kind[i])
            if group is not None:
                key = items.key[i]
                group.append(((key if key >= 0 else 0x7FFFFFFF) << _KEY_BITS) | i)
        self._outputs = _packed(by_kind[_OUTPUT])
        self._custom_outputs = _packed(by_kind[_CUSTOM_OUTPUT])
        self._function_calls = _packed(by_kind[_CALL] + by_kind[_SHELL_CALL])
        self._custom_calls = _packed(by_kind[_CUSTOM_CALL])

    def _item(self, i: int) -> dict[str, Any]:
        return self._item_at(self._items.ref[i], self._items.sub[i])

    def _has(self, packed: IntArray, key: int, call_id: Any) -> bool:
        """Does an item listed in ``packed`` carry ``call_id``?"""
        key = (key if key >= 0 else 0x7FFFFFFF) << _KEY_BITS
        mask = (1 << _KEY_BITS) - 1
        at = bisect_left(packed, key) if isinstance(packed, array) else packed.bisect_left(key)  # type: ignore[attr-defined]
        while at < len(packed) and packed[at] & ~mask == key:
            if self._item(packed[at] & mask).get("call_id") == call_id:
                return True
            at += 1
        return False

    def items(self) -> Iterator[dict[str, Any]]:
        """One pass (``synthetic`` and ``dropped`` count it)."""
        self.synthetic = self.dropped = 0
        items = self._items
        for i in range(len(items)):
            kind = items.kind[i]
            if kind == _DEAD:
                continue
            if kind in (_OUTPUT, _CUSTOM_OUTPUT):
                known = self._custom_calls if kind == _CUSTOM_OUTPUT else self._function_calls
                item = self._item(i)
                if not self._has(known, items.key[i], item.get("call_id")):
                    self.dropped += 1
                    continue
                yield item
                continue
            item = self._item(i)
            yield item
            if kind not in (_CALL, _CUSTOM_CALL, _SHELL_CALL) or item.get("call_id") is None:
                continue
            answered = self._custom_outputs if kind == _CUSTOM_CALL else self._outputs
            if not self._has(answered, items.key[i], item.get("call_id")):
                self.synthetic += 1
                yield aborted_output(item)


class HistoryAt:
    """derive streamed by entries (``Dialect.entry_derivation``, issue 11 item 1): the history
    items read back through ``read(offset)`` from where the scan saw them; the last few lines
    decoded are kept (a compaction's items share one line)."""

    def __init__(self, builder: HistoryBuilder, read: Callable[[int], bytes]) -> None:
        self._read = read
        self._lines: dict[int, dict[str, Any]] = {}
        self.escaped = False  # a line held a \\u escape: an item may hold a lone surrogate
        self._derivation = builder.derivation(self._item_at)

    def _item_at(self, offset: int, sub: int) -> dict[str, Any]:
        line = self._lines.get(offset)
        if line is None:
            data = self._read(offset)
            self.escaped = self.escaped or b"\\u" in data
            if len(self._lines) >= 4:
                del self._lines[next(iter(self._lines))]
            line = self._lines[offset] = orjson.loads(data)  # the scan decoded it so
        return item_in(line, sub)

    def prepare(self) -> tuple[int, bool, tuple[str, ...] | None]:
        count, unencodable = counting_pass(self._derivation.items(), lambda: self.escaped)
        return count, unencodable, None

    def messages(self) -> Iterator[dict[str, Any]]:
        return self._derivation.items()


def _packed_of(items: _Items, kinds: tuple[int, ...]) -> Iterator[int]:
    """(call-id key << 32 | item) of the items of ``kinds``, in item order."""
    for i in range(len(items)):
        if items.kind[i] in kinds:
            key = items.key[i]
            yield ((key if key >= 0 else 0x7FFFFFFF) << _KEY_BITS) | i


def _packed(values: list[int]) -> array[int]:
    values.sort()
    return array("q", values)
