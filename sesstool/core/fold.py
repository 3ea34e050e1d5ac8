"""The projection fold's replace operation (spec §5), shared by every envelope dialect.

An append puts the event's seq at the end of the surface node list (``Fold.append``); a replace
swaps the contiguous run of current nodes ``start..end`` for the replacing event. What a replace
is spelt like and which extra checks apply is the profile's ``ReplaceRules``.
"""

from __future__ import annotations

from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.header import is_safe_nonneg
from sesstool.core.scan_state import EventState, intern_type
from sesstool.core.seq_ranges import SeqSet


def replace_nodes(
    state: EventState, op: dict[str, Any], seq: int, t: str, data: Any, cited: SeqSet | None
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
    nodes[i : j + 1] = [seq]
    for s in removed:
        del node_type[s]
        fold.tool_fp.pop(s, None)
        fold.projected.pop(s, None)
    node_type[seq] = intern_type(t)
    if t == "tool/result" and fingerprint is not None:
        fold.tool_fp[seq] = fingerprint(data)
    fold.shadowed += len(removed)
    fold.replacements += 1
