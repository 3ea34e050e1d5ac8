"""Encode new records as the harness writes them (spec §3, §9.1): compact ``JSON.stringify``
form, keys in insertion order, one record per line. Carried records are never re-encoded."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sesstool.core.jsonline import dumps


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as a ``\\n``-terminated line (lone surrogates re-escaped, never lost)."""
    return dumps(record) + b"\n"


def encode_records(records: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(encode_record(r) for r in records)
