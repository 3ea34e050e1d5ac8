"""The projection fold (spec §5), shared by every envelope dialect: its state (``Fold``) and the
replace operation.

An append puts the event's seq at the end of the surface node list (``Fold.append``); a replace
swaps the contiguous run of current nodes ``start..end`` for the replacing event. What a replace
is spelt like and which extra checks apply is the profile's ``ReplaceRules``.

The state is compact (issue 11 item 1: a log that is never compacted keeps every node): the
node list is an array of machine words, a node's type one byte per seq (a code into a table of
the types met), and — derive by address — a projected message's line offset one machine word
per seq. Nothing per node is a Python object.
"""

from __future__ import annotations

import copy
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from sesstool.core import rule_ids as R
from sesstool.core.header import is_safe_nonneg
from sesstool.core.model import RequestEnvelope
from sesstool.core.seq_ranges import SeqSet

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
        self._codes = bytearray()

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
            codes.extend(bytes(seq + 1 - len(codes) + (len(codes) >> 3)))  # grown in steps
        codes[seq] = code

    def __delitem__(self, seq: int) -> None:
        if seq not in self:
            raise KeyError(seq)
        self._codes[seq] = 0

    def copy(self) -> NodeTypes:
        twin = NodeTypes()
        twin._codes = bytearray(self._codes)
        return twin


_NOTHING = -(1 << 63)  # projected: a node that projects nothing (None)
_UNSET = _NOTHING + 1  # projected: no value for this seq


class Projected:
    """seq -> what a surface node projects (``EventState.keep``): derive by address keeps a line
    offset per node, held as one machine word per seq; anything else (the message itself, kept
    in memory) moves the table to a dict."""

    __slots__ = ("_by_seq", "_objects")

    def __init__(self) -> None:
        self._by_seq = array("q")
        self._objects: dict[int, Any] | None = None

    def __setitem__(self, seq: int, value: Any) -> None:
        if self._objects is None and (value is None or (type(value) is int and value > _UNSET)):
            by_seq = self._by_seq
            if seq >= len(by_seq):
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

    def of(self, nodes: array[int]) -> Sequence[Any]:
        """The values of ``nodes`` that are not None, in their order."""
        if self._objects is None:
            by_seq, size = self._by_seq, len(self._by_seq)
            return array("q", (v for s in nodes if s < size and (v := by_seq[s]) > _UNSET))
        objects = self._objects
        return tuple(m for s in nodes if (m := objects.get(s)) is not None)

    def copy(self) -> Projected:
        twin = Projected()
        twin._by_seq = array("q", self._by_seq)
        twin._objects = dict(self._objects) if self._objects is not None else None
        return twin


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
        "shadowed",
        "tool_fp",
    )

    def __init__(self) -> None:
        self.nodes = array("q")
        self.node_type = NodeTypes()
        self.tool_fp: dict[int, int | None] = {}
        self.projected = Projected()
        self.replacements = 0
        self.shadowed = 0
        self.request_header: Any = None
        self.request_header_seq: int | None = None
        self.request_context: Any = None
        self.request_context_seq: int | None = None

    def copy(self) -> Fold:
        twin = copy.copy(self)
        twin.nodes = array("q", self.nodes)
        twin.node_type = self.node_type.copy()
        twin.tool_fp = dict(self.tool_fp)
        twin.projected = self.projected.copy()
        return twin

    def append(self, seq: int, t: str) -> None:
        self.nodes.append(seq)
        self.node_type[seq] = t

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
            f"v{version}, got {op!r}",
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
    nodes, node_type = fold.nodes, fold.node_type
    if start not in node_type or end not in node_type:
        missing = start if start not in node_type else end
        report(R.REPLACE_ENDPOINT, f"replace endpoint {missing} is not a current surface node")
        return
    i, j = nodes.index(start), nodes.index(end)
    if i > j:
        report(R.REPLACE_ORDER, f"replace start {start} comes after end {end} in surface order")
        return
    removed = nodes[i : j + 1]
    if rules.cite and (cited is None or not all(s in cited for s in removed)):
        missing_seqs = sorted(s for s in removed if cited is None or s not in cited)
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
        and i == 0
        and node_type[nodes[0]] == "system/message"
        and (t != "system/message" or j != 0)
    ):
        report(
            R.PROTECTED_HEAD,
            "the system head may only be replaced by a system/message covering exactly that node",
        )
    nodes[i : j + 1] = array("q", [seq])
    for s in removed:
        del node_type[s]
        fold.tool_fp.pop(s, None)
        fold.projected.pop(s, None)
    node_type[seq] = t
    if t == "tool/result" and fingerprint is not None:
        fold.tool_fp[seq] = fingerprint(data)
    fold.shadowed += len(removed)
    fold.replacements += 1
