"""What a file that is not a session log looks like (issue 15 item 9; docs/format.md "Not a
session log").

A session log of any dialect is JSON Lines whose first line is a JSON object. A file is judged
*not a session log* only from its head, never from a defect further in (that is a corrupt or
torn log, with an address): known binary signatures, a first line that is binary (NUL, invalid
UTF-8), text that is not JSON, the opening brace of a pretty-printed JSON document, or a first
record that is JSON but not an object. Whether a decoded object belongs to a dialect is the
registry's question (``dialects.registry.not_a_log``).
"""

from __future__ import annotations

from typing import Any

# (signature at offset 0, what it is). zstd is not here: it is an encoding sesstool reads.
SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x7fELF", "an ELF executable (binary)"),
    (b"\x1f\x8b", "gzip-compressed data (decompress it first: zcat FILE | sesstool inspect -)"),
    (b"PK\x03\x04", "a zip archive (binary)"),
    (b"\xfd7zXZ\x00", "xz-compressed data (binary)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive (binary)"),
    (b"BZh", "bzip2-compressed data (binary)"),
    (b"%PDF-", "a PDF document (binary)"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image (binary)"),
    (b"SQLite format 3\x00", "an SQLite database (binary)"),
    (b"MZ", "a Windows executable (binary)"),
)
_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r"


def signature(head: bytes) -> str | None:
    """What the first bytes of a file say it is, when a known binary signature."""
    for magic, what in SIGNATURES:
        if head.startswith(magic) and (magic != b"BZh" or head[3:4].isdigit()):
            return what
    return None


def first_line_kind(line: bytes, decoded: bool, first: Any) -> str | None:
    """What a log's first complete line (without its newline) says the file is, when it cannot
    be the first record of any dialect; None when it could be (or is a damaged one).

    ``decoded``: the line decoded as JSON (to ``first``). A line that starts like a record
    (``{``) but does not decode is a damaged log, not another kind of file.
    """
    known = signature(line)
    if known is not None:
        return known
    text = line[len(_BOM) :] if line.startswith(_BOM) else line
    stripped = text.strip(_WHITESPACE)
    if decoded:
        if isinstance(first, dict):
            return None
        kind = "an array" if isinstance(first, list) else "a string" if isinstance(first, str) else "a scalar"
        return f"JSON whose first line is {kind}, not a record object"
    if stripped in (b"{", b"["):
        return "a pretty-printed JSON document, not JSON Lines (one record per line)"
    if not stripped or stripped.startswith((b"{", b"[")):
        return None  # an empty line, or a record that is damaged: the log's own findings say which
    if b"\x00" in line or not _utf8(line):
        return "binary data (NUL bytes or invalid UTF-8 in the first line)"
    return "text that is not JSON Lines"


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
