"""The committed records of an already-scanned log, decoded for the upgrade chain (shared by
``migrate`` and ``derive --as-version``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sesstool.core.errors import InputError
from sesstool.core.physical import Encoding, PhysicalIssue
from sesstool.core.upgrade import Rec
from sesstool.core.upgrade.records import decode_records
from sesstool.store.readers import make_reader
from sesstool.store.source import ReadLimits


def committed_records(
    f: Any, encoding: Encoding, body_offset: int, committed: int, limits: ReadLimits
) -> Iterator[Rec]:
    """The body records of the committed region, decoded (the torn tail is not carried)."""
    reader = make_reader(f, encoding, limits)

    def lines() -> Iterator[bytes]:
        for item in reader.batches():
            if isinstance(item, PhysicalIssue):
                if item.fatal:
                    raise InputError(f"the source no longer reads cleanly: {item.message}")
                continue
            batch, offset, _, _ = item
            for line in batch:
                end = offset + len(line) + 1
                if offset >= body_offset and end <= committed:
                    yield line
                elif end > committed:
                    return
                offset = end

    return decode_records(lines())
