"""The guard every command that rewrites a session's log runs under (DESIGN §5, spec §11).

It resolves the source (a file or a session directory's highest generation — never standard
input), holds ``session.lock`` in a session directory for the whole operation (created when
missing, never deleted; elsewhere there is no protocol and no lock file is made), and refuses
when another process has the file open for writing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sesstool.core.errors import InputError
from sesstool.store.generations import generations
from sesstool.store.liveness import LockState, assert_cold, open_writers, session_lock
from sesstool.store.publish import FileIdentity
from sesstool.store.source import open_error, regular_source

# A note every write to a plain file carries: shown with -v only (DETAIL_NOTES).
NO_LOCK_PROTOCOL = "not a session directory: no session.lock protocol to check"
DETAIL_NOTES = frozenset({NO_LOCK_PROTOCOL})


def visible_notes(notes: tuple[str, ...] | list[str], verbose: bool) -> list[str]:
    """The notes a human view prints: the routine details only with ``-v``."""
    return [note for note in notes if verbose or note not in DETAIL_NOTES]


@dataclass(slots=True)
class ColdSource:
    path: Path
    identity: FileIdentity  # as first seen: compared again before publication
    lock: LockState | None
    notes: list[str] = field(default_factory=list)

    def recheck(self) -> None:
        """The file changed since it was opened, or gained a writer: refuse (exit 5)."""
        assert_cold(self.path, self.identity)


def resolve_source(arg: str, command: str) -> Path:
    """The regular file to rewrite; every OSError on the way (an unsearchable parent, a link
    loop, ENOENT) and every non-regular file (FIFO, device) is an exit-3 InputError."""
    if arg == "-":
        raise InputError(f"{command} needs a file or session directory, not standard input")
    return regular_source(arg)


@contextmanager
def cold_session(arg: str, command: str) -> Iterator[ColdSource]:
    path = resolve_source(arg, command)
    notes: list[str] = []
    try:
        in_session_dir = bool(generations(path.parent))
    except OSError as err:
        raise open_error(path.parent, err) from None
    if in_session_dir:
        with session_lock(path.parent, create=True) as lock:
            if lock.warning:
                notes.append(lock.warning)
            yield _checked(path, lock, notes)
    else:
        notes.append(NO_LOCK_PROTOCOL)
        yield _checked(path, None, notes)


def _checked(path: Path, lock: LockState | None, notes: list[str]) -> ColdSource:
    cold = ColdSource(path, FileIdentity.of_path(path), lock, notes)
    if open_writers(path):
        cold.recheck()  # raises, naming the writer processes
    return cold
