"""Pure repair planning (spec §7): what is kept, what is dropped, which closers are appended.

The committed prefix is carried byte for byte: raw input up to the end of the last good line
(§7.3), zstd input as whole verbatim frames up to the last frame boundary inside the committed
region, the rest of the committed plaintext re-framed with the closers in one new frame (§7.4).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sesstool.core.model import ScanResult, Verdict
from sesstool.core.physical import Encoding
from sesstool.core.rules import Finding


@dataclass(frozen=True, slots=True)
class Salvage:
    """What ``--salvage`` drops from a corrupt log (DESIGN §1.3): recorded, never silent."""

    defect: Finding  # the first error: everything from its record on is dropped
    cut: int  # plaintext offset where the kept region ends
    dropped_file_offset: int  # first source file byte not carried verbatim
    dropped_file_bytes: int  # source file bytes from there to the end (the sidecar)


@dataclass(frozen=True, slots=True)
class RepairPlan:
    version: int | None  # the log's format version (None: the dialect does not number them)
    source_encoding: Encoding
    output_encoding: Encoding
    source_verdict: Verdict
    committed: int  # plaintext bytes kept: the committed prefix
    body_offset: int  # plaintext offset after the header line
    copy_file: int  # source file bytes copied verbatim (same encoding only)
    copy_plain: int  # plaintext covered by that verbatim copy
    dropped_plain: int  # decoded plaintext after the committed prefix, not carried
    dropped_lines: int
    recovered_lines: int  # zstd: lines recovered from a torn last frame, carried
    closers: Collection[dict[str, Any]]  # re-iterable, made as walked (``core.closer_list``)
    salvage: Salvage | None
    committed_events: int  # events in the kept prefix (the closers follow them)
    header_frame: bool  # zstd output: the header line alone in the first frame (§9.2)
    reframed: bool  # zstd source of one frame (`zstd FILE`): rewritten in the §9.2 framing


def plan_repair(
    scan: ScanResult,
    *,
    source_encoding: Encoding,
    output_encoding: Encoding,
    plaintext_bytes: int,
    frame_copy_point: tuple[int, int] | None,
    salvage: Salvage | None = None,
    closers: Collection[dict[str, Any]] = (),
    header_frame: bool = True,
    reframe: bool = False,
) -> RepairPlan:
    """Plan from a scan of the committed region (for salvage: a scan of the kept prefix).

    ``frame_copy_point`` is (file offset, plaintext offset) after the last complete zstd frame
    lying wholly inside the committed region; None for raw input. ``reframe``: the zstd source
    is one frame holding everything (``zstd-single-frame``), so nothing of it is copied verbatim:
    the output is the header frame, then the body (§9.2).
    """
    committed = salvage.cut if salvage is not None else scan.tail.committed_bytes
    if source_encoding == output_encoding == "raw":
        copy_file = copy_plain = committed
    elif source_encoding == output_encoding == "zstd" and frame_copy_point is not None and not reframe:
        copy_file, copy_plain = frame_copy_point
    else:
        copy_file = copy_plain = 0  # a change of encoding re-frames everything
    return RepairPlan(
        version=scan.version,
        source_encoding=source_encoding,
        output_encoding=output_encoding,
        source_verdict=scan.verdict,
        committed=committed,
        body_offset=scan.body_offset or 0,
        copy_file=copy_file,
        copy_plain=copy_plain,
        dropped_plain=max(0, plaintext_bytes - committed),
        dropped_lines=scan.tail.dropped_lines,
        recovered_lines=scan.tail.recovered_lines,
        closers=closers,
        salvage=salvage,
        committed_events=scan.open.events,
        header_frame=header_frame,
        reframed=reframe and output_encoding == "zstd",
    )
