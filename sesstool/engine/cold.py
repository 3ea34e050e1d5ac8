"""The guard every command that rewrites a session's log runs under (DESIGN §5, spec §11).

It resolves the source (a file or a session directory's highest generation — never standard
input), holds ``session.lock`` in a session directory for the whole operation (created when
missing, never deleted; elsewhere there is no protocol and no lock file is made), and refuses
when another process has the file open for writing. A dry run (``create_lock=False``) writes
nothing at all: it honours an existing lock but never creates one in the evidence directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sesstool.core.errors import UsageError
from sesstool.store.liveness import LockState, assert_cold, open_writers, session_lock
from sesstool.store.paths import is_session_dir
from sesstool.store.publish import FileIdentity
from sesstool.store.source import regular_source

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


# Why a write command takes no standard input (docs/format.md "Standard input and output").
STDIN_REFUSED = (
    "needs a file or session directory, not standard input ('-'): it publishes a new file beside "
    "its source after checking that the source is cold and unchanged, and a stream has no place, "
    "lock or identity; save the stream to a file first (read commands take '-')"
)


def resolve_source(arg: str, command: str) -> Path:
    """The regular file to rewrite; every OSError on the way (an unsearchable parent, a link
    loop, ENOENT) and every non-regular file (FIFO, device) is an exit-3 InputError. ``-`` is a
    usage error (exit 2, issue 15 item 5): see ``STDIN_REFUSED``."""
    if arg == "-":
        raise UsageError(f"{command} {STDIN_REFUSED}")
    return regular_source(arg)


@contextmanager
def cold_session(arg: str, command: str, create_lock: bool = True) -> Iterator[ColdSource]:
    path = resolve_source(arg, command)
    notes: list[str] = []
    if is_session_dir(path.parent):
        with session_lock(path.parent, create=create_lock) as lock:
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
