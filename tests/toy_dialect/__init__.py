"""A test-only dialect: proof that a dialect is one package plus one registry line.

A toy log is a header record ``{"toy": "log", "version": 1, "id": ...}`` followed by envelope
events of two types: ``toy/say`` (``{turn, text}``: opens turn ``turn`` when none is open, and
is one derived message) and ``toy/end`` (``{turn}``: closes it). Its one closer is a
``toy/end`` of the open turn.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sesstool.core.errors import UnsupportedError
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.header import MAX_SAFE, Header
from sesstool.core.model import ScanResult
from sesstool.core.profile import HeaderProblem, Profile, ReplaceRules
from sesstool.core.scan_state import EventState
from sesstool.dialects.base import Cause, ForkInput
from sesstool.dialects.envelope import EnvelopeDialect


def _say(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    if type(data) is not dict or not isinstance(data.get("text"), str) or type(data.get("turn")) is not int:
        st.report("event-data", "toy/say needs {turn, text}")
        return
    if rel.open_turn is None:
        rel.resumes(seq)
        st.stats.turns += 1
        rel.open_turn, rel.open_turn_seq = data["turn"], seq
    elif data["turn"] != rel.open_turn:
        st.report("turn-number", f"toy/say names turn {data['turn']} but turn {rel.open_turn} is open")
    st.fold.append(seq, t)
    if st.collect_messages:
        st.fold.projected[seq] = {"role": "toy", "content": data["text"]}


def _end(st: EventState, obj: dict[str, Any], seq: int, t: str, data: Any) -> None:
    rel = st.rel
    turn = data.get("turn") if type(data) is dict else None
    if rel.open_turn is None or turn != rel.open_turn:
        st.report("turn-end-mismatch", f"toy/end {turn} but the open turn is {rel.open_turn}")
    st.stats.turn_end("end")
    rel.open_turn = rel.open_turn_seq = None
    rel.last_turn_end, rel.resume_seq = seq, None


@cache
def _profile(version: int) -> Profile:
    return Profile(
        version=version,
        handlers={"toy/say": _say, "toy/end": _end},
        surface=frozenset({"toy/say"}),
        known=frozenset({"toy/say", "toy/end"}).__contains__,
        replace=ReplaceRules("startSeq", "endSeq", True, False, None, False),
        time_ms=lambda t: t if type(t) is int and 0 <= t <= MAX_SAFE else None,
        time_problem="is not epoch milliseconds",
        pairing="step",
    )


class ToyDialect(EnvelopeDialect):
    name = "toy"
    title = "toy"
    current_version = 1

    def detect(self, first: Any) -> float:
        return 1.0 if self.is_header(first) else 0.0

    def is_header(self, obj: Any) -> bool:
        return isinstance(obj, dict) and obj.get("toy") == "log"

    def read_header(
        self, obj: Any, raw: bytes, filename_version: int | None
    ) -> tuple[Header | None, list[HeaderProblem], bool]:
        if not self.is_header(obj) or obj.get("version") != 1:
            return None, [("header-invalid", "not a toy v1 header", None)], False
        sid = obj.get("id") if isinstance(obj.get("id"), str) else None
        return Header(1, raw, id=sid), [], False

    def profile(self, version: int) -> Profile:
        return _profile(version)

    def closers(self, scan: ScanResult, cause: Cause = "interrupted") -> list[dict[str, Any]]:
        op = scan.open
        if op.turn is None or op.last_seq is None:
            return []
        return [{"type": "toy/end", "seq": op.last_seq + 1, "time": op.last_time, "data": {"turn": op.turn}}]

    def plan_fork(self, request: ForkInput) -> ForkPlan:
        """A child header naming its parent; every seed line goes through ``rewrite`` (the
        contract's line transform: here it marks the copied texts)."""
        state = request.at.open
        if state.turn is not None:
            raise UnsupportedError("a toy log forks between turns only")
        header = {"toy": "log", "version": 1, "id": request.child_id, "parent": request.source.session_id}
        return ForkPlan(
            1, request.boundary, header, None, (), None, None, rewrite=_mark, child_id=request.child_id
        )


def _mark(line: bytes) -> bytes:
    return line.replace(b'"text":"', b'"text":"forked:')


DIALECT = ToyDialect()
