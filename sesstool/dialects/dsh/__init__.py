"""The DeepSeek Harness session log (spec/session-format.md), format versions v0–v4."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from sesstool.core import rule_ids as R
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.header import Header
from sesstool.core.humanize import chosen
from sesstool.core.model import ScanResult
from sesstool.core.physical import FRAME_0_MORE_LINES, FRAME_0_OPEN_LINE, FramingFact
from sesstool.core.profile import HeaderProblem, Profile
from sesstool.core.upgrade import Step
from sesstool.core.upgrade.chain import chain
from sesstool.core.upgrade.records import encode_header
from sesstool.core.vocabulary import CURRENT_VERSION
from sesstool.dialects.base import Cause, ForkInput, RootLayout
from sesstool.dialects.dsh import fork, profiles
from sesstool.dialects.dsh.closers import plan_closers
from sesstool.dialects.dsh.handlers import projected_message
from sesstool.dialects.envelope import EnvelopeDialect
from sesstool.store.generations import canonical_name
from sesstool.store.layout import dsh_session_dir, encode_session_id

_FRAME_0 = {
    FRAME_0_MORE_LINES: "frame 0 holds more than the header line",
    FRAME_0_OPEN_LINE: "frame 0 does not end with a newline",
}
_ONE_FRAME = (
    "the whole log is one zstd frame (as `zstd FILE` writes it), not the harness's "
    "header frame and a frame per append (spec §9.2): the harness refuses to load it; "
    "sesstool reads it, and repair or migrate write the harness's framing"
)


class DshDialect(EnvelopeDialect):
    name = "dsh"
    title = "DeepSeek Harness"
    current_version = CURRENT_VERSION
    header_frame = True  # §9.2: frame 0 is exactly the header line
    has_steps = True
    layout = RootLayout(
        ("--*--/*/session.jsonl*", "--*--/*/session.v*.jsonl*"), (".jsonl", ".jsonl.zst", ".jsonl.zstd")
    )

    def detect(self, first: Any) -> float:
        return 1.0 if isinstance(first, dict) and first.get("type") == profiles.HEADER_TYPE else 0.0

    def is_header(self, obj: Any) -> bool:
        return isinstance(obj, dict) and obj.get("type") == profiles.HEADER_TYPE

    def read_header(
        self, obj: Any, raw: bytes, filename_version: int | None
    ) -> tuple[Header | None, list[HeaderProblem], bool]:
        return profiles.read_header(obj, raw, filename_version)

    def profile(self, version: int) -> Profile:
        return profiles.profile(version)

    def framing_finding(self, fact: FramingFact, one_frame: bool) -> tuple[str, str] | None:
        """§9.2: frame 0 holds exactly the header line (the harness rejects anything else). A log
        that is one frame holding everything is a generic compressor's (``zstd FILE``), read with
        a warning; frame 0 holding more lines with frames after it is a writer breaking §9.2
        (docs/format.md "zstd")."""
        what = _FRAME_0.get(fact.rule)
        if what is None:
            return None
        if one_frame and fact.rule == FRAME_0_MORE_LINES:
            return R.ZSTD_SINGLE_FRAME, _ONE_FRAME
        return R.ZSTD_HEADER_FRAME, f"{what}: it must be exactly one line (spec §9.2)"

    def rewrites_framing(self, scan: ScanResult) -> bool:
        """§9.2: a log read as one zstd frame (``zstd FILE``; the ``zstd-single-frame`` warning
        of ``framing_finding``) is written back with the header line alone in frame 0."""
        return any(f.rule == R.ZSTD_SINGLE_FRAME for f in scan.weighed)

    def closers(self, scan: ScanResult, cause: Cause = "interrupted") -> Collection[dict[str, Any]]:
        if scan.version is None:
            return []
        return plan_closers(scan.open, scan.version, cause)

    def describe_closer(self, record: dict[str, Any]) -> str:
        data, t, seq = record["data"], record["type"], record["seq"]
        if t == "tool/result":
            msg = data["message"]
            call = msg["source"]["callId"]
            cites = record.get("sourceEventSeqs")
            why = f"cites tool/call seq {cites[0]}" if cites else "no tool/call was recorded"
            said = f"{chosen(call)}: {data['error']['code']} ({why}), id {chosen(msg['id'])}"
            return f"seq {seq:<5} tool/result  {said}"
        if t == "step/end":
            return f"seq {seq:<5} step/end     turn {data['turn']} step {data['step']}"
        return f"seq {seq:<5} turn/end     turn {data['turn']} reason {data['reason']['kind']}"

    def plan_fork(self, request: ForkInput) -> ForkPlan:
        header = request.source.header
        assert header is not None
        return fork.plan_fork(
            header,
            request.boundary,
            request.at.open,
            child_id=request.child_id,
            created_at=request.created_at,
            seed_ends_with_end_seed=request.seed_ends_with_end_seed,
            path=request.source.path,
        )

    def fork_marker_note(self, plan: ForkPlan) -> str:
        return f"none: the seed already ends with session/end-seed (seq {plan.boundary})"

    def fork_child_problems(self, child: ScanResult, plan: ForkPlan) -> list[str]:
        problems = super().fork_child_problems(child, plan)
        lineage = child.stats.lineage
        if not lineage.seeded or lineage.inherited_events != plan.inherited:
            problems.append(
                f"lineage seeded={lineage.seeded} inherited={lineage.inherited_events}, "
                f"expected seeded with {plan.inherited} inherited events"
            )
        return problems

    def root_child(
        self, source: Path, parent_id: str, child_id: str, version: int, zstd: bool
    ) -> tuple[Path, Path] | None:
        """A source laid out as ``<root>/--<project>--/<encoded id>/<generation>`` (§2.2) gets
        a sibling session directory with a canonical generation name (§10.1)."""
        layout = dsh_session_dir(source)
        if layout is None or source.parent.name != encode_session_id(parent_id):
            return None
        directory = layout[1] / encode_session_id(child_id)
        return directory / canonical_name(version, zstd), directory

    derives_by_address = True

    def derived_message(self, record: dict[str, Any], scan: ScanResult) -> Any:
        assert scan.version is not None
        return projected_message(record, scan.version, scan.session_id)

    def upgrade_chain(self, source: int, target: int) -> list[Step]:
        return chain(source, target)

    def encode_header(self, header: dict[str, Any]) -> bytes:
        return encode_header(header)


DIALECT = DshDialect()
