"""Integer literals beyond ±(2^53−1) (spec §3; issue 11 item 12): a JavaScript reader — the
harness — keeps only the nearest double, and orjson reads past 2^64 as a float too.

A 16-digit run is the cheap, C-level sign (2^53 has 16 digits): only the lines of a batch that
has one are looked at token by token, outside strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from sesstool.core import rule_ids as R
from sesstool.core.errors import Address
from sesstool.core.header import MAX_SAFE
from sesstool.core.jsonline import JSON_STRING

_DIGIT_MAP = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16
_INT_TOKEN = re.compile(rb"(?<![\w.+-])-?[0-9]{16,}(?![0-9.eE])")


class DigitRunFree(list[bytes]):
    """The lines of a batch in which the reader found no run of 16 digits (issue 14): it tests
    the plaintext chunk it splits the lines from (``has_digit_run``), once, instead of the
    scanner joining the lines to test them again (the join and its fresh buffer cost about
    as much as the test). A batch of any other type is tested by ``maybe_unsafe_integers``."""

    __slots__ = ()


def has_digit_run(data: bytes) -> bool:
    """Does ``data`` hold 16 digits in a row (the sign of an integer beyond 2^53)?"""
    return data.translate(_DIGIT_MAP).find(_SIXTEEN_DIGITS) >= 0


def maybe_unsafe_integers(lines: list[bytes]) -> bool:
    """Could any line of the batch hold one? (never a false negative)"""
    if type(lines) is DigitRunFree:
        return False
    return b"\n".join(lines).translate(_DIGIT_MAP).find(_SIXTEEN_DIGITS) >= 0


def unsafe_integers(
    lines: list[bytes], offset: int, lineno: int
) -> Iterator[tuple[str, int, int, int | None]]:
    """(message, plaintext offset, line number, seq) for each line holding an unsafe integer."""
    for i, raw in enumerate(lines):
        if raw.translate(_DIGIT_MAP).find(_SIXTEEN_DIGITS) < 0:
            continue
        big = [tok for tok in _INT_TOKEN.findall(JSON_STRING.sub(b'""', raw)) if abs(int(tok)) > MAX_SAFE]
        if not big:
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # an undecodable line has its own finding
        seq = obj.get("seq") if type(obj) is dict and type(obj.get("seq")) is int else None
        at = offset + sum(map(len, lines[:i])) + i
        first = big[0].decode()
        more = f" and {len(big) - 1} more" if len(big) > 1 else ""
        yield (
            f"integer {first[:40]}{'…' if len(first) > 40 else ''}{more} is beyond ±(2^53−1): a "
            "JavaScript reader rounds it to the nearest double (a migration rewrites such an "
            "event with that value)",
            at,
            lineno + i,
            seq,
        )


def report_unsafe_integers(
    scanner: Any, lines: list[bytes], offset: int, lineno: int, frame: int | None
) -> None:
    """Report each line of a batch the scanner consumed (up to its --at stop) that holds an
    unsafe integer, one warning per line, through ``scanner.report``."""
    if scanner.stopped:
        lines = lines[: scanner._i + 1]
    if lines and maybe_unsafe_integers(lines):
        for message, at, line, seq in unsafe_integers(lines, offset, lineno):
            scanner.report(R.UNSAFE_INTEGER, message, Address(scanner.path, at, line, frame, None, seq))
