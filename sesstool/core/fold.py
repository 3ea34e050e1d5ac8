"""The projection fold (spec §5), shared by every envelope dialect: its state (``Fold``) and the
replace operation.

An append puts the event's seq at the end of the surface node list (``Fold.append``); a replace
swaps the contiguous run of current nodes ``start..end`` for the replacing event. What a replace
is spelt like and which extra checks apply is the profile's ``ReplaceRules``.

The state is compact (issue 11 item 1: a log that is never compacted keeps every node): the
node list is an array of machine words, a node's type one byte per seq (a code into a table of
the types met), and — derive by address — a projected message's line offset one machine word
per seq. Nothing per node is a Python object.

Past ``SPILL_AT`` seqs (a log that is never compacted: issue 11 item 1, second round) the
state moves to a spill file the dialect wiring injects (``Fold.use_spill``: the core never
touches files; ``store.spill`` implements ``Spill``): the type bytes, the line offsets and the
tool/result fingerprints become arrays paged to disk, and the node list a doubly linked list by
seq there (``LinkedNodes``), so a replace costs the run it replaces, not the surface (a fold in
memory links its list too once its replaces searched ``LINK_AT`` positions, issue 11 item 2). Every
finding, message and plan is the same either way (tests/core/test_fold_spill.py).
"""

from __future__ import annotations

import copy
import heapq
import itertools
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, Protocol

from sesstool.core import rule_ids as R
from sesstool.core.header import is_safe_nonneg
from sesstool.core.humanize import chosen_repr
from sesstool.core.model import RequestEnvelope
from sesstool.core.seq_ranges import SeqSet

SPILL_AT = 1 << 19  # seqs a fold keeps in memory; past them its state moves to a spill file
_NEVER = 1 << 62  # a fold without a spill file, or already spilled: no seq reaches it
# surface positions the in-memory replaces may search (``list.index``) before the node list
# becomes a linked list in memory (issue 11 item 2: replaces deep in a long surface, each
# searched from its head, were quadratic): the searches and the conversion stay linear
LINK_AT = 1 << 16


class WordArray(Protocol):
    """An array of integers kept in a spill file (``store.spill.SpilledArray``)."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> int: ...
    def __setitem__(self, i: int, value: int, /) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def append(self, value: int, /) -> None: ...
    def pad(self, length: int, value: int, /) -> None: ...
    def copy(self) -> WordArray: ...


class Spill(Protocol):
    """Where a fold's state goes past ``SPILL_AT`` seqs (injected: ``Fold.use_spill``)."""

    def array(self, typecode: str, items: Iterable[int]) -> WordArray:
        """A new array of ``typecode`` holding ``items``, paged to disk."""
        ...


_TYPES: dict[str, str] = {}
_NAMES: list[str] = [""]  # code -> type; 0: not a node
_CODES: dict[str, int] = {}


def intern_type(t: str) -> str:
    """One string object per event type: a decoded record's type is a new string on every line."""
    return _TYPES.setdefault(t, t)


class NodeTypes:
    """seq -> the event type of a current surface node (a mapping for ``in``, ``[]``, ``del``),
    held as one byte per seq: the code of the type in a table of the types met (surface event
    types are a handful; a 256th is refused)."""

    __slots__ = ("_codes",)

    def __init__(self) -> None:
        self._codes: bytearray | WordArray = bytearray()

    def spill(self, spill: Spill) -> None:
        self._codes = spill.array("B", self._codes)

    def __contains__(self, seq: object) -> bool:
        codes = self._codes
        return type(seq) is int and 0 <= seq < len(codes) and codes[seq] != 0

    def __getitem__(self, seq: int) -> str:
        if seq not in self:
            raise KeyError(seq)
        return _NAMES[self._codes[seq]]

    def __setitem__(self, seq: int, t: str) -> None:
        code = _CODES.get(t)
        if code is None:
            if len(_NAMES) > 255:
                raise ValueError(f"more than 255 surface event types (at {t!r})")
            code = _CODES[intern_type(t)] = len(_NAMES)
            _NAMES.append(intern_type(t))
        codes = self._codes
        if seq >= len(codes):
            if not isinstance(codes, bytearray):  # spilled: a new seq is the last one
                if len(codes) < seq:
                    codes.pad(seq, 0)
                codes.append(code)
                return
            codes.extend(bytes(seq + 1 - len(codes) + (len(codes) >> 3)))  # grown in steps
        codes[seq] = code

    def __delitem__(self, seq: int) -> None:
        if seq not in self:
            raise KeyError(seq)
        self._codes[seq] = 0

    def copy(self) -> NodeTypes:
        twin = NodeTypes()
        codes = self._codes
        twin._codes = bytearray(codes) if isinstance(codes, bytearray) else codes.copy()
        return twin


_NOTHING = -(1 << 63)  # projected: a node that projects nothing (None)
_UNSET = _NOTHING + 1  # projected: no value for this seq


class Projected:
    """seq -> what a surface node projects (``EventState.keep``): derive by address keeps a line
    offset per node, held as one machine word per seq; anything else (the message itself, kept
    in memory) moves the table to a dict."""

    __slots__ = ("_by_seq", "_objects", "_spill")

    def __init__(self) -> None:
        self._by_seq: array[int] | WordArray = array("q")
        self._objects: dict[int, Any] | None = None
        self._spill: Spill | None = None

    def spill(self, spill: Spill) -> None:
        """Words to the spill file; messages kept as objects stay (they are in memory anyway)."""
        self._spill = spill
        if self._objects is None:
            self._by_seq = spill.array("q", self._by_seq)

    def __setitem__(self, seq: int, value: Any) -> None:
        if self._objects is None and (value is None or (type(value) is int and value > _UNSET)):
            by_seq = self._by_seq
            if seq >= len(by_seq):
                if not isinstance(by_seq, array):  # spilled: a new seq is the last one
                    if len(by_seq) < seq:
                        by_seq.pad(seq, _UNSET)
                    by_seq.append(_NOTHING if value is None else value)
                    return
                by_seq.extend(array("q", [_UNSET]) * (seq + 1 - len(by_seq) + (len(by_seq) >> 3)))
            by_seq[seq] = _NOTHING if value is None else value
            return
        if self._objects is None:
            self._objects = dict(self._items())
            self._by_seq = array("q")
        self._objects[seq] = value

    def _items(self) -> Iterator[tuple[int, Any]]:
        for seq, value in enumerate(self._by_seq):
            if value != _UNSET:
                yield seq, None if value == _NOTHING else value

    def get(self, seq: int, default: Any = None) -> Any:
        if self._objects is not None:
            return self._objects.get(seq, default)
        by_seq = self._by_seq
        value = by_seq[seq] if 0 <= seq < len(by_seq) else _UNSET
        if value == _UNSET:
            return default
        return None if value == _NOTHING else value

    def __getitem__(self, seq: int) -> Any:
        value = self.get(seq, self)
        if value is self:
            raise KeyError(seq)
        return value

    def pop(self, seq: int, default: Any = None) -> Any:
        value = self.get(seq, self)
        if value is self:
            return default
        if self._objects is not None:
            del self._objects[seq]
        else:
            self._by_seq[seq] = _UNSET
        return value

    def of(self, nodes: Iterable[int]) -> Sequence[Any]:
        """The values of ``nodes`` that are not None, in their order (spilled: in the spill
        file too, a ``WordArray``)."""
        if self._objects is None:
            by_seq, size = self._by_seq, len(self._by_seq)
            values = (v for s in nodes if s < size and (v := by_seq[s]) > _UNSET)
            if self._spill is not None:
                return self._spill.array("q", values)  # type: ignore[return-value]
            return array("q", values)
        objects = self._objects
        return tuple(m for s in nodes if (m := objects.get(s)) is not None)

    def copy(self) -> Projected:
        twin = Projected()
        by_seq = self._by_seq
        twin._by_seq = array("q", by_seq) if isinstance(by_seq, array) else by_seq.copy()
        twin._objects = dict(self._objects) if self._objects is not None else None
        twin._spill = self._spill
        return twin


_NO_PRINT = -1  # a spilled tool/result fingerprint: None or none kept (``hash`` never gives -1)


class ToolPrints:
    """seq -> the fingerprint of a current tool/result node (§5 item 5; ``tool_fingerprint``:
    a ``hash`` or None): a dict in memory (tool results are a part of the seqs), one machine
    word per seq once spilled (-1: none; ``hash`` never gives -1)."""

    __slots__ = ("_by_seq", "_odd", "prints")

    def __init__(self) -> None:
        self.prints: dict[int, int | None] = {}  # in memory
        self._by_seq: WordArray | None = None  # spilled
        self._odd: dict[int, int] = {}  # spilled: a fingerprint a word cannot hold (never a hash)

    def spill(self, spill: Spill) -> None:
        prints = self.prints
        self._by_seq = spill.array("q", ())
        self.prints = {}
        for seq in sorted(prints):
            self[seq] = prints[seq]

    def __setitem__(self, seq: int, value: int | None) -> None:
        by_seq = self._by_seq
        if by_seq is None:
            self.prints[seq] = value
            return
        if value is not None and (value == _NO_PRINT or not -(1 << 63) <= value < 1 << 63):
            self._odd[seq] = value
            value = None
        elif self._odd:
            self._odd.pop(seq, None)
        word = _NO_PRINT if value is None else value
        if seq >= len(by_seq):  # a new seq is the last one
            if len(by_seq) < seq:
                by_seq.pad(seq, _NO_PRINT)
            by_seq.append(word)
        else:
            by_seq[seq] = word

    def get(self, seq: int) -> int | None:
        by_seq = self._by_seq
        if by_seq is None:
            return self.prints.get(seq)
        value = by_seq[seq] if 0 <= seq < len(by_seq) else _NO_PRINT
        if value == _NO_PRINT:
            return self._odd.get(seq) if self._odd else None
        return value

    def pop(self, seq: int) -> None:
        if self._by_seq is None:
            self.prints.pop(seq, None)
        elif self.get(seq) is not None:
            self[seq] = None

    def copy(self) -> ToolPrints:
        twin = ToolPrints()
        twin.prints = dict(self.prints)
        twin._by_seq = self._by_seq.copy() if self._by_seq is not None else None
        twin._odd = dict(self._odd)
        return twin


class _Words(array):  # type: ignore[type-arg]
    """An in-memory ``WordArray``: the linked node list of a fold that is not spilled."""

    def pad(self, length: int, value: int) -> None:
        if length > len(self):
            self.extend(itertools.repeat(value, length - len(self)))

    def copy(self) -> _Words:
        return _Words(self.typecode, self)


class _Memory:
    """The ``Spill`` of a linked node list kept in memory."""

    def array(self, typecode: str, items: Iterable[int]) -> WordArray:
        return _Words(typecode, items)


class Run(NamedTuple):
    """A run of current surface nodes ``start..end`` a replace names (§5)."""

    at_head: bool  # the run begins the surface
    seqs: Sequence[int]  # its nodes, in surface order
    at: int  # in memory: the position of ``start`` (-1 once spilled)


class LinkedNodes:
    """The surface node list once spilled: a doubly linked list by seq (the next and the
    previous node's seq + 1 in two ``WordArray``; 0: none). Seqs only grow (§3), so appends and
    replaces write at the end of the arrays and a replace touches the run it replaces."""

    __slots__ = ("_next", "_prev", "count", "head", "tail")

    def __init__(self, spill: Spill, nodes: Sequence[int]) -> None:
        size = max(nodes) + 1 if nodes else 0
        after, before = array("q", bytes(8 * size)), array("q", bytes(8 * size))
        for a, b in itertools.pairwise(nodes):
            after[a], before[b] = b + 1, a + 1
        self._next, self._prev = spill.array("q", after), spill.array("q", before)
        self.count = len(nodes)
        self.head = nodes[0] if nodes else -1
        self.tail = nodes[-1] if nodes else -1

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[int]:
        return self.walk(self.head, self.tail)

    def walk(self, start: int, end: int) -> Iterator[int]:
        after, s = self._next, start
        while s >= 0:
            yield s
            if s == end:
                return
            s = after[s] - 1

    def append(self, seq: int) -> None:
        self._link(self.tail, seq, -1)

    def _link(self, before: int, seq: int, after: int) -> None:
        """Put ``seq`` (above every seq held) between ``before`` and ``after`` (-1: none)."""
        links, back = self._next, self._prev
        if len(links) < seq:
            links.pad(seq, 0)
            back.pad(seq, 0)
        links.append(after + 1)
        back.append(before + 1)
        if before >= 0:
            self._next[before] = seq + 1
        else:
            self.head = seq
        if after >= 0:
            self._prev[after] = seq + 1
        else:
            self.tail = seq
        self.count += 1

    def run(self, start: int, end: int) -> Run | None:
        """The run ``start..end`` (both current), or None when ``start`` comes after ``end``.
        Walks from both ends at once: the cost is twice the shorter way, never the surface."""
        after = self._next
        a, b, n = start, end, 1
        while a != end:
            a = after[a] - 1
            n += 1
            if a < 0:
                return None
            if b >= 0:
                b = after[b] - 1
                if b == start:
                    return None
        return Run(start == self.head, _Walk(self, start, end, n), -1)

    def move(self, spill: Spill) -> None:
        """Move the links (kept in memory so far) to ``spill``."""
        self._next, self._prev = spill.array("q", self._next), spill.array("q", self._prev)

    def replace(self, run: Run, seq: int) -> None:
        """Swap ``run`` for the node ``seq``."""
        walk = run.seqs
        assert isinstance(walk, _Walk)
        before, after = self._prev[walk.start] - 1, self._next[walk.end] - 1
        self.count -= walk.n
        self._link(before, seq, after)

    def copy(self) -> LinkedNodes:
        twin = copy.copy(self)
        twin._next, twin._prev = self._next.copy(), self._prev.copy()
        return twin


class _Walk(Sequence[int]):
    """The nodes of a run, read by walking the list (not held)."""

    def __init__(self, nodes: LinkedNodes, start: int, end: int, n: int) -> None:
        self.nodes, self.start, self.end, self.n = nodes, start, end, n

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[int]:
        return self.nodes.walk(self.start, self.end)

    def __getitem__(self, i: Any) -> Any:
        if i == 0:
            return self.start
        raise IndexError("a walked run is read in order")


class Fold:
    """The projection fold (§5): current surface nodes in order, and the request envelope."""

    __slots__ = (
        "node_type",
        "nodes",
        "projected",
        "replacements",
        "request_context",
        "request_context_seq",
        "request_header",
        "request_header_seq",
        "searched",
        "shadowed",
        "spill",
        "spill_at",
        "tool_fp",
    )

    def __init__(self) -> None:
        self.nodes: array[int] | LinkedNodes = array("q")
        self.node_type = NodeTypes()
        self.tool_fp = ToolPrints()
        self.projected = Projected()
        self.spill: Spill | None = None
        self.spill_at = _NEVER
        self.replacements = 0
        self.searched = 0  # surface positions the in-memory replaces searched (LINK_AT)
        self.shadowed = 0
        self.request_header: Any = None
        self.request_header_seq: int | None = None
        self.request_context: Any = None
        self.request_context_seq: int | None = None

    def copy(self) -> Fold:
        twin = copy.copy(self)
        nodes = self.nodes
        twin.nodes = nodes.copy() if isinstance(nodes, LinkedNodes) else array("q", nodes)
        twin.node_type = self.node_type.copy()
        twin.tool_fp = self.tool_fp.copy()
        twin.projected = self.projected.copy()
        return twin

    def use_spill(self, spill: Spill) -> None:
        """Move the state to ``spill`` once a seq reaches ``SPILL_AT`` (read now: tests lower it)."""
        self.spill, self.spill_at = spill, SPILL_AT

    def reach(self, seq: int) -> None:
        """``seq`` is about to become a node: past ``spill_at`` seqs (or an eighth as many
        current tool results, a dict entry each), the state moves to the spill."""
        if self.spill is None or (seq < self.spill_at and len(self.tool_fp.prints) < self.spill_at >> 3):
            return
        spill, self.spill_at = self.spill, _NEVER
        nodes = self.nodes
        if isinstance(nodes, LinkedNodes):
            nodes.move(spill)
        else:
            self.nodes = LinkedNodes(spill, nodes)
        self.node_type.spill(spill)
        self.tool_fp.spill(spill)
        self.projected.spill(spill)

    def append(self, seq: int, t: str) -> None:
        if seq >= self.spill_at or len(self.tool_fp.prints) >= self.spill_at >> 3:
            self.reach(seq)
        self.nodes.append(seq)
        self.node_type[seq] = t

    def run(self, start: int, end: int) -> Run | None:
        """The current nodes ``start..end`` (both current), or None when ``start`` comes after
        ``end`` in surface order."""
        nodes = self.nodes
        if isinstance(nodes, LinkedNodes):
            return nodes.run(start, end)
        if self.searched > LINK_AT:  # replaces deep in the surface: walk a linked list instead
            self.nodes = LinkedNodes(_Memory(), nodes)
            return self.run(start, end)
        i, j = nodes.index(start), nodes.index(end)
        self.searched += i + j
        return Run(i == 0, nodes[i : j + 1], i) if i <= j else None

    def first(self) -> int:
        nodes = self.nodes
        return nodes.head if isinstance(nodes, LinkedNodes) else nodes[0]

    def swap(self, run: Run, seq: int) -> None:
        """Replace the nodes of ``run`` by the node ``seq`` (§5)."""
        nodes = self.nodes
        if isinstance(nodes, LinkedNodes):
            nodes.replace(run, seq)
        else:
            nodes[run.at : run.at + len(run.seqs)] = array("q", [seq])

    def messages(self) -> Sequence[Any]:
        """The projected messages of the current surface nodes, in order (§5): a tuple, or — line
        offsets kept by derive by address — an array of machine words."""
        return self.projected.of(self.nodes)

    def request(self) -> RequestEnvelope:
        return RequestEnvelope(
            self.request_header, self.request_header_seq, self.request_context, self.request_context_seq
        )


class Folding(Protocol):
    """What ``replace_nodes`` reads of a handler's ``core.scan_state.EventState``."""

    fold: Fold
    profile: Any
    version: int | None
    report: Callable[..., None]


def replace_nodes(
    state: Folding, op: dict[str, Any], seq: int, t: str, data: Any, cited: SeqSet | None
) -> None:
    """Apply (or refuse, with a finding) a replace ``surfaceOp`` of event ``seq``."""
    rules = state.profile.replace
    version = state.version or 0
    report = state.report
    start_key, end_key = rules.start_key, rules.end_key
    if (
        op.keys() != {"op", start_key, end_key}
        or op.get("op") != "replace"
        or not is_safe_nonneg(op.get(start_key))
        or not is_safe_nonneg(op.get(end_key))
    ):
        report(
            R.SURFACE_OP_SHAPE,
            f"replace surfaceOp must be exactly "
            f"{{op:'replace', {start_key}, {end_key}}} in "
            f"v{version}, got {chosen_repr(op)}",
        )
        return
    start, end = op[start_key], op[end_key]
    if rules.earlier and (start >= seq or end >= seq):
        report(
            R.REPLACE_NOT_EARLIER,
            f"replace endpoints {start}..{end} must precede the replacing event {seq}",
        )
        return
    fold = state.fold
    fold.reach(seq)
    node_type = fold.node_type
    if start not in node_type or end not in node_type:
        missing = start if start not in node_type else end
        report(R.REPLACE_ENDPOINT, f"replace endpoint {missing} is not a current surface node")
        return
    run = fold.run(start, end)
    if run is None:
        report(R.REPLACE_ORDER, f"replace start {start} comes after end {end} in surface order")
        return
    removed = run.seqs
    if rules.cite and (cited is None or not all(s in cited for s in removed)):
        missing_seqs = heapq.nsmallest(10, (s for s in removed if cited is None or s not in cited))
        report(
            R.REPLACE_UNCITED,
            f"sourceEventSeqs must cite every replaced node; missing {missing_seqs[:10]}",
        )
    fingerprint = rules.tool_fingerprint
    if t == "tool/result" and fingerprint is not None:
        shadow = removed[0]
        if len(removed) != 1 or node_type[shadow] != "tool/result":
            report(
                R.TOOL_RESULT_REPLACE,
                "a tool/result replacement must shadow exactly one tool/result node",
            )
        elif fold.tool_fp.get(shadow) != fingerprint(data):
            report(
                R.TOOL_RESULT_REPLACE,
                f"replacement of tool/result {shadow} changes more than its content",
            )
    if (
        rules.protected_head
        and run.at_head
        and node_type[fold.first()] == "system/message"
        and (t != "system/message" or len(removed) != 1)
    ):
        report(
            R.PROTECTED_HEAD,
            "the system head may only be replaced by a system/message covering exactly that node",
        )
    fold.swap(run, seq)
    for s in removed:
        del node_type[s]
        fold.tool_fp.pop(s)
        fold.projected.pop(s, None)
    node_type[seq] = t
    if t == "tool/result" and fingerprint is not None:
        fold.tool_fp[seq] = fingerprint(data)
    fold.shadowed += len(removed)
    fold.replacements += 1
