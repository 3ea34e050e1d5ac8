"""The one error tree and the named exit statuses (DESIGN.md §6).

Bad *data* is reported as findings; these exceptions are for conditions that stop a command.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ExitStatus(enum.IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    INPUT = 3
    UNSUPPORTED = 4
    LIVE = 5
    WRITE_REFUSED = 6
    HANGUP = 129  # 128 + SIGHUP: cleaned up as for SIGINT
    INTERRUPTED = 130
    BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of our output left (`sesstool … | head`)
    TERMINATED = 143  # 128 + SIGTERM: cleaned up as for SIGINT


@dataclass(frozen=True, slots=True)
class Address:
    """Where something is: file, byte offset, line, zstd frame, seq (each optional).

    For zstd input ``offset`` is the offset in the decompressed plaintext and ``frame`` the
    0-based frame index; ``frame_offset`` is that frame's offset in the compressed file.
    """

    file: str | None = None
    offset: int | None = None
    line: int | None = None
    frame: int | None = None
    frame_offset: int | None = None
    seq: int | None = None

    def offset_label(self) -> str:
        """``byte N``; in a zstd log (an address with a frame) the offset is in the decoded
        plaintext, not the file, and says so: ``decoded byte N``."""
        return f"decoded byte {self.offset}" if self.frame is not None else f"byte {self.offset}"

    def describe(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            parts.append(self.file)
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.offset is not None:
            parts.append(self.offset_label())
        if self.frame is not None:
            fo = f" at file byte {self.frame_offset}" if self.frame_offset is not None else ""
            parts.append(f"frame {self.frame}{fo}")
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        return ", ".join(parts) if parts else "(no address)"


class SesstoolError(Exception):
    """Root of every error sesstool raises on purpose; carries its exit status."""

    exit_status: ExitStatus = ExitStatus.INPUT

    def __init__(self, message: str, address: Address | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.address = address

    def __str__(self) -> str:
        if self.address is not None:
            return f"{self.message} ({self.address.describe()})"
        return self.message


class InputError(SesstoolError):
    """Input unreadable, or corrupt where the command needs it whole (exit 3)."""

    exit_status = ExitStatus.INPUT


class UnsupportedError(SesstoolError):
    """Newer format version, unknown required event, refused migration step (exit 4)."""

    exit_status = ExitStatus.UNSUPPORTED


class NotASessionLog(UnsupportedError):
    """The input is not a session log of any dialect sesstool reads (or not of the one
    ``--dialect`` names): a binary, a compressed file, a JSON document… (exit 4, issue 15 item 9;
    docs/format.md "Not a session log")."""


class InsideOpenTurn(UnsupportedError):
    """A fork boundary inside a turn the format cannot fork in (dsh before v4, §8.1). The fork
    engine completes the message with the nearest valid boundary after it (a later pass)."""

    def __init__(self, message: str, address: Address | None, turn: int, turn_seq: int | None) -> None:
        super().__init__(message, address)
        self.turn = turn
        self.turn_seq = turn_seq


class LiveSessionError(SesstoolError):
    """A live writer may still be appending to the session (exit 5)."""

    exit_status = ExitStatus.LIVE


class WriteRefusedError(SesstoolError):
    """Target exists, cross-device, permission, verification failed (exit 6).

    ``unwritable_directory``: the target's directory refuses new files (permissions, a read-only
    file system); the command line then suggests writing elsewhere with ``-o``."""

    exit_status = ExitStatus.WRITE_REFUSED

    def __init__(
        self, message: str, address: Address | None = None, *, unwritable_directory: str | None = None
    ) -> None:
        super().__init__(message, address)
        self.unwritable_directory = unwritable_directory


class UsageError(SesstoolError):
    """An argument that does not fit the input (a --at past the end, …) (exit 2)."""

    exit_status = ExitStatus.USAGE
