"""The mini-agent log (spec/mini-agent-format.md), versions v0–v1."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.header import Header
from sesstool.core.humanize import chosen
from sesstool.core.model import ScanResult
from sesstool.core.profile import HeaderProblem, Profile, ReplaceRules
from sesstool.core.upgrade import Step, UpgradeRefused
from sesstool.core.vocabulary import ALL_KNOWN, PACKED_TAGS, RETIRED_V0
from sesstool.dialects.base import Cause, ForkInput
from sesstool.dialects.envelope import EnvelopeDialect
from sesstool.dialects.mini import closers
from sesstool.dialects.mini import handlers as h
from sesstool.dialects.mini.upgrade import STEP

CURRENT_VERSION = 1


@cache
def _profile(version: int) -> Profile:
    return Profile(
        version=version,
        handlers={
            "turn/start": h.turn_start,
            "turn/end": h.turn_end,
            "tool/call": h.tool_call,
            **{t: h.surface for t in h.SURFACE},
        },
        surface=h.SURFACE,
        known=h.KNOWN.__contains__,
        replace=ReplaceRules(
            "startSeq", "endSeq", earlier=True, cite=False, tool_fingerprint=None, protected_head=False
        ),
        time_ms=h.iso_ms,
        time_problem="is not an ISO-8601 string",
        pairing="log",
        # what the shared scanner has always applied to every log (kept for byte-identical results)
        all_known=ALL_KNOWN,
        retired=RETIRED_V0 if version == 0 else frozenset(),
        seqless=PACKED_TAGS,
        packed_rows=True,
        keep_time_text=True,
    )


class MiniDialect(EnvelopeDialect):
    name = "mini"
    title = "mini-agent"
    current_version = CURRENT_VERSION
    header_is_event = True

    def detect(self, first: Any) -> float:
        return 1.0 if self.is_header(first) else 0.0

    def is_header(self, obj: Any) -> bool:
        return h.is_header(obj)

    def read_header(
        self, obj: Any, raw: bytes, filename_version: int | None
    ) -> tuple[Header | None, list[HeaderProblem], bool]:
        header, found = h.decode_header(obj, raw)
        unsupported = header is None and any(
            rule in (R.HEADER_NEWER_VERSION, R.HEADER_OLDER_VERSION) for rule, _ in found
        )
        return header, [(rule, message, None) for rule, message in found], unsupported

    def profile(self, version: int) -> Profile:
        return _profile(version)

    def closers(self, scan: ScanResult, cause: Cause = "interrupted") -> Collection[dict[str, Any]]:
        return closers.plan_closers(scan.open, cause)

    def describe_closer(self, record: dict[str, Any]) -> str:
        data, seq = record["data"], record["seq"]
        if record["type"] == "tool/result":
            cites = record.get("sourceEventSeqs")
            why = f"outcome unknown, cites tool/call seq {cites[0]}" if cites else "never started"
            return f"seq {seq:<5} tool/result  {chosen(data['message']['tool_call_id'])}: {why}"
        return f"seq {seq:<5} turn/end     turn {data['turn']} reason {data['reason']}"

    def plan_fork(self, request: ForkInput) -> ForkPlan:
        return closers.plan_fork(request)

    def fork_marker_note(self, plan: ForkPlan) -> str:
        return "none: the mini-agent layout has no seed marker (the header records the parent)"

    def fork_child_problems(self, child: ScanResult, plan: ForkPlan) -> list[str]:
        problems = super().fork_child_problems(child, plan)
        if child.header is None or child.header.parent_session != plan.header["data"].get("parentSession"):
            problems.append("the child header does not record its parent")
        return problems

    derives_by_address = True

    def derived_message(self, record: dict[str, Any], scan: ScanResult) -> Any:
        return h.projected_message(record)

    def upgrade_chain(self, source: int, target: int) -> list[Step]:
        steps: list[Step] = []
        for version in range(source, target):
            if version != STEP.source:
                raise UpgradeRefused(
                    "session-format", version, f"Session migration v{version}->v{version + 1} is missing"
                )
            steps.append(STEP)
        return steps


DIALECT = MiniDialect()
