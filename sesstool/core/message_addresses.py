"""derive streamed by address (issue 14): what a scan keeps for a projected message.

With ``ScanOptions.message_addresses`` an envelope dialect's scanner keeps, in
``Fold.projected``, the plaintext offset of the record's line instead of the message itself
(``EventState.keep``); derive reads the line back later (``engine/derive_read.py``).
"""

from __future__ import annotations

from typing import Any

import orjson

from sesstool.core.scanner import Scanner


def keep_line_offsets(scanner: Scanner) -> None:
    """Make ``scanner`` keep line offsets for projected messages (when its options ask for it).

    A message orjson cannot encode (a lone surrogate, decoded by the fallback) is kept as
    ``-1 - offset``: derive then writes its JSON document ASCII-escaped throughout, as
    ``dumps_pretty`` does for a document it cannot encode. None stays None (a node that
    projects nothing)."""
    if not scanner.opt.message_addresses:
        return

    def keep(message: Any) -> int | None:
        if message is None:
            return None
        offset = scanner.address().offset
        assert offset is not None
        if b"\\u" in scanner._lines[scanner._i]:  # the line being processed
            try:
                orjson.dumps(message)
            except TypeError:
                return -1 - offset
        return offset

    scanner.state.keep = keep
