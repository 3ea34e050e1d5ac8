"""The mode of a published file (issue 15 item 14, docs/format.md "Output mode")."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def current_umask() -> int:
    """The process umask, read without changing it (Linux: /proc/self/status; elsewhere it is set
    and restored at once, which a thread creating a file at that instant could observe)."""
    try:
        with open("/proc/self/status", "rb") as status:  # read-only: the publisher writes nothing here
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def copy_mode(source: Path) -> int:
    """A write command's output mode (issue 15 item 14): the source's read/write bits masked by
    the umask, as cp(1) gives a copy — never more open than the source nor than the umask
    allows — plus owner read (the publisher reads the file back to verify it). A log holds
    what an agent saw, credentials included: a copy must not widen who can read it."""
    try:
        bits = stat.S_IMODE(os.stat(source).st_mode)
    except OSError:
        return 0o600
    return (bits & 0o666 & ~current_umask()) | 0o400
