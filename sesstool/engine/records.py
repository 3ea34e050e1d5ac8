"""The committed records of an already-scanned log through the upgrade chain (shared by
``migrate`` and ``derive --as-version``)."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator
from typing import Any

from sesstool.core.errors import UnsupportedError
from sesstool.core.physical import Encoding
from sesstool.core.upgrade import Rec, Step, UpgradeRefused
from sesstool.core.upgrade.chain import run_chain
from sesstool.core.upgrade.fused import fusable, fused_chain
from sesstool.core.upgrade.records import decode_records, encode_records
from sesstool.dialects.base import Dialect
from sesstool.store.plaintext import Readable, plaintext_lines
from sesstool.store.run_spill import RunSpill
from sesstool.store.source import ReadLimits


def committed_records(
    path: Readable, encoding: Encoding, body_offset: int, committed: int, limits: ReadLimits
) -> Iterator[Rec]:
    """The body records of the committed region, decoded (the torn tail is not carried)."""

    return decode_records(line for _, line in plaintext_lines(path, encoding, limits, body_offset, committed))


def upgraded_lines(
    path: Readable,
    encoding: Encoding,
    header: dict[str, Any],
    dialect: Dialect,
    body_offset: int,
    committed: int,
    steps: list[Step],
    target: int,
    limits: ReadLimits,
    closers: Collection[dict[str, Any]] = (),
    fused: bool = True,
    spill: bool = True,
) -> tuple[bytes, Iterator[bytes]]:
    """The header line and the body lines of the log upgraded to ``target`` (§1.3), streamed
    from the committed region with ``closers`` appended before the upgrade. A step's refusal is
    an ``UnsupportedError`` (exit 4), whether it comes at the header or mid-stream. The chain
    runs in one pass (``core.upgrade.fused``) where it can; ``fused=False`` runs it step by
    step (``run_chain``), which gives the same bytes and refusals (tests/migrate/test_fused.py).
    What the run holds past the steps' thresholds goes to one spill file of its own
    (``store.run_spill.RunSpill``, given to each step: ``Step.with_spill``), closed when the
    lines end; ``spill=False`` keeps it all in memory (the differential tests' reference)."""
    run_spill = RunSpill() if spill else None
    steps = [step.with_spill(run_spill) for step in steps]
    if fused and fusable(steps):
        body = (line for _, line in plaintext_lines(path, encoding, limits, body_offset, committed))
        try:
            new_header, lines = fused_chain(steps, header, body, closers, target)
        except UpgradeRefused as err:
            raise UnsupportedError(str(err)) from None
        return dialect.encode_header(new_header), _refusals_unsupported(lines, run_spill)
    recs = committed_records(path, encoding, body_offset, committed, limits)
    if closers:
        recs = itertools.chain(recs, (Rec([c], None) for c in closers))
    try:
        new_header, upgraded = run_chain(steps, header, recs)
    except UpgradeRefused as err:
        raise UnsupportedError(str(err)) from None
    head = dialect.encode_header(new_header)
    return head, _refusals_unsupported(encode_records(upgraded, target), run_spill)


def _refusals_unsupported(lines: Iterator[bytes], spill: RunSpill | None) -> Iterator[bytes]:
    try:
        yield from lines
    except UpgradeRefused as err:
        raise UnsupportedError(str(err)) from None
    finally:
        if spill is not None:
            spill.close()
