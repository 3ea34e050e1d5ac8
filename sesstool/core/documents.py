"""The one home of the machine-readable documents' shared parts: the schema version every
``--json`` document (and the salvage report) carries, and how an address, a finding and a
salvage defect are written. Renderers build the rest of each document around these."""

from __future__ import annotations

from typing import Any

from sesstool.core.errors import Address
from sesstool.core.model import ScanResult
from sesstool.core.rules import Finding

# 2: a verdict is the object of ``verdict_doc`` in every document (derive, the write commands'
# ``source`` and ``output``, listings, validate's unreadable files), not a bare word
# (docs/format.md "Output formats").
SCHEMA_VERSION = 2


def document(command: str, **members: Any) -> dict[str, Any]:
    """A command's document: ``schema_version`` and ``command`` first, then ``members``."""
    return {"schema_version": SCHEMA_VERSION, "command": command, **members}


def kept_source_doc(path: str, sha256: str, encoding: str, scan: ScanResult) -> dict[str, Any]:
    """The ``source`` of a write command that leaves its source as it was (repair, redact)."""
    return {
        "path": path,
        "sha256": sha256,
        "unchanged": True,
        "encoding": encoding,
        "version": scan.version,
        "verdict": scan_verdict_doc(scan),
    }


def address_doc(a: Address | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {
        "file": a.file,
        "offset": a.offset,
        "line": a.line,
        "frame": a.frame,
        "frame_offset": a.frame_offset,
        "seq": a.seq,
    }


def verdict_doc(verdict: str, reason: str | None, address: Address | None) -> dict[str, Any]:
    """A log's verdict, the one shape of every document that reports one (issue 15 item 2): the
    verdict word, why, and where (the address that decided it, or null). Besides a scan's
    verdicts the word is ``not-a-log`` or ``unreadable`` for a file that was not scanned."""
    return {"verdict": verdict, "reason": reason, "address": address_doc(address)}


def scan_verdict_doc(scan: ScanResult) -> dict[str, Any]:
    """``verdict_doc`` of a scan."""
    return verdict_doc(scan.verdict, scan.verdict_reason, scan.verdict_address)


def finding_doc(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.label,
        "message": f.message,
        "address": address_doc(f.address),
    }


def defect_doc(f: Finding) -> dict[str, Any]:
    """The first defect a salvage cuts at (repair's JSON and the ``.dropped.json`` report)."""
    a = f.address
    return {
        "rule": f.rule,
        "message": f.message,
        "offset": a.offset,
        "line": a.line,
        "frame": a.frame,
        "seq": a.seq,
    }
