"""Decode one record's bytes to a JSON value, classifying every failure (§3, §9.1).

orjson is the fast path. Node's JSON.stringify legitimately writes lone-surrogate escapes
(``\\ud800``) that orjson rejects, so such lines fall back to the standard library.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from sesstool.core import rule_ids as R

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
BOM = b"\xef\xbb\xbf"
# A key whose value is the number -0. Inside a JSON string every quote is escaped, so an
# unescaped `"key":` can only be a real key.
_NEGATIVE_ZERO = re.compile(rb'"([^"\\]+)"\s*:\s*-0(?![0-9.eE])')


class LineError(Exception):
    """A record that cannot be decoded; ``rule`` is a rule id."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_fallback(data: bytes, exc: Exception) -> Any:
    """Slow path after orjson refused ``data``: return the value or raise LineError."""
    if data.startswith(BOM):
        raise LineError(R.BOM, "record starts with a UTF-8 byte order mark")
    if data and data.count(0) == len(data):
        raise LineError(R.NUL_BYTES, f"{len(data)} NUL bytes where a record should be")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise LineError(R.INVALID_UTF8, f"invalid UTF-8 at byte {err.start} of the record") from None
    message = str(exc)
    if "depth limit" in message or "recursion" in message:
        raise LineError(R.DEPTH_LIMIT, f"JSON nested deeper than the decoder allows: {message}")
    if _SURROGATE_ESCAPE.search(data):
        try:
            import json  # the slow path only: not on every start-up

            return json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise LineError(R.DEPTH_LIMIT, "JSON nested deeper than the decoder allows") from None
        except ValueError as err:
            raise LineError(R.INVALID_JSON, str(err)) from None
    if b"\x00" in data:
        raise LineError(R.INVALID_JSON, f"NUL byte inside the record: {message}")
    raise LineError(R.INVALID_JSON, message)


ORJSON_MAX_DEPTH = 1024  # orjson's own limit; deeper input is refused by the decoder itself
# A JSON string token. Written so that matching holds nothing per character: ``(?:[^"\\]|\\.)*``
# made the regex engine keep a backtracking frame for every character of a string (about 140
# bytes each: a line of one 4 MiB string cost 589 MB to match), and the unrolled form without
# possessive quantifiers one per escape. The body has one parse (a backslash always takes the
# character after it), so the possessive form matches exactly the same tokens.
JSON_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
_BRACKET = re.compile(rb"[\[\]{}]")


def nesting_depth(data: bytes) -> int:
    """Deepest array/object nesting of a JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(JSON_STRING.sub(b"", data)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads(data: bytes, max_depth: int = ORJSON_MAX_DEPTH) -> Any:
    """Decode one record or raise LineError. ``max_depth`` below orjson's own limit is checked
    first: a line cannot nest deeper than its bracket count, so most lines cost two counts."""
    if max_depth < ORJSON_MAX_DEPTH and data.count(b"[") + data.count(b"{") > max_depth:
        depth = nesting_depth(data)
        if depth > max_depth:
            raise LineError(R.DEPTH_LIMIT, f"JSON nested {depth} deep, over the limit of {max_depth}")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return decode_fallback(data, exc)


def negative_zero_keys(data: bytes) -> set[str]:
    """Keys whose value is written ``-0`` — lost after decoding, where -0 == 0 (§3, §2.1)."""
    if b"-0" not in data:
        return set()
    return {m.group(1).decode("utf-8", "replace") for m in _NEGATIVE_ZERO.finditer(data)}


def duplicate_keys(data: bytes) -> list[str]:
    """Object keys that occur twice in one object (decoders keep the last value: --strict)."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        import json  # the slow path only: not on every start-up

        json.loads(data.decode("utf-8", "surrogatepass"), object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []  # undecodable records are reported by the decoder itself
    return found


def dumps(value: Any) -> bytes:
    """Compact JSON as JSON.stringify writes it; lone surrogates are re-escaped, not lost."""
    try:
        return orjson.dumps(value)
    except TypeError:
        import json  # the slow path only: not on every start-up

        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def dumps_pretty(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        return dumps_pretty_ascii(value)


def dumps_pretty_ascii(value: Any) -> bytes:
    """``dumps_pretty``'s fallback for a value orjson refuses (a lone surrogate)."""
    import json  # the slow path only: not on every start-up

    return json.dumps(value, ensure_ascii=True, indent=2).encode("ascii")


def encodable(value: Any) -> bool:
    """Can orjson encode ``value`` (no lone surrogate anywhere in it)?"""
    try:
        orjson.dumps(value)
    except TypeError:
        return False
    return True


def js_string(value: Any) -> str:
    """``String(value)`` in JavaScript for a decoded JSON value: how a Node reader names a
    non-string event type (``7`` → ``"7"``, ``null`` → ``"null"``, ``{}`` → ``"[object Object]"``,
    an array → its members joined by commas, ``null`` members as empty strings)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
