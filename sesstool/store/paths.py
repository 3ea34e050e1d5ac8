"""What a path the user named is — the one place that asks the file system (or the object
store) before a command decides what to do with it.

``classify_path`` answers once: missing, unreadable, standard input, a stream (FIFO), a special
file, a log file (its size and sniffed encoding), a session directory (canonical generations,
spec §10), a dialect's root (a directory whose files match a ``RootLayout.patterns``: a Claude
Code home's ``projects/<slug>/*.jsonl``, a Codex home's ``sessions/YYYY/MM/DD/rollout-*``), a
directory of logs (files ending in a log suffix, any case, found by a walk bounded in depth and
in entries: ``bounded_walk``), a directory with none, a remote object or a remote prefix. The
layouts and suffixes come from the caller (the dialects sit above the store); the engine and
the fleet never stat, walk or glob themselves (``tests/test_architecture.py``).
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import glob
import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sesstool.core.errors import WriteRefusedError
from sesstool.core.physical import Encoding
from sesstool.store.generations import generations
from sesstool.store.paging import key_text, text_key
from sesstool.store.publish import FileIdentity
from sesstool.store.source import is_stdin, open_error, sniff, special_kind
from sesstool.store.spilling_list import Limits, SharedSpill, SpillingOrder

if TYPE_CHECKING:
    from sesstool.store.spill import SpillFile

Kind = Literal[
    "stdin",
    "missing",
    "unreadable",
    "stream",
    "special",
    "log",
    "session-dir",
    "root",
    "log-dir",
    "empty-dir",
    "remote-object",
    "remote-prefix",
]
LISTABLE: frozenset[Kind] = frozenset({"root", "log-dir", "remote-prefix"})


@dataclass(frozen=True, slots=True)
class Group:
    """Logs found in one directory: by a dialect's root layout (``layout`` = that dialect's
    name), or by their suffix (``layout`` None)."""

    layout: str | None
    logs: Collection[str]  # sorted: a ``SortedPaths`` (a session directory's: a tuple)


# How far ``classify_path`` searches a directory that is neither a session directory nor a
# dialect's root (``inspect /usr`` must not walk a whole system): directory levels below the one
# named — a Claude Code or Codex home one level down still has its deepest logs within 6 —, and
# directory entries examined in all. Found breadth first, so what is cut is the deepest part.
WALK_MAX_DEPTH = 8
WALK_MAX_ENTRIES = 100_000


@dataclass(frozen=True, slots=True)
class WalkBound:
    """How far a bounded walk went, and what it did not search."""

    max_depth: int
    max_entries: int
    entries: int = 0  # directory entries examined
    deeper: int = 0  # directories more than ``max_depth`` levels down: not entered
    unreadable: int = 0  # directories that could not be listed
    stopped: bool = False  # ``max_entries`` reached: the rest was not examined

    @property
    def skipped(self) -> bool:
        return bool(self.deeper or self.unreadable or self.stopped)

    def describe(self) -> str:
        """What was not searched, as a user reads it ("" when the walk saw everything)."""
        parts = []
        if self.stopped:
            parts.append(f"stopped at the limit of {self.max_entries} entries")
        if self.deeper:
            parts.append(f"{_dirs(self.deeper)} deeper than {self.max_depth} levels not entered")
        if self.unreadable:
            parts.append(f"{_dirs(self.unreadable)} could not be read")
        return "; ".join(parts)


def _dirs(n: int) -> str:
    return f"{n} director{'y' if n == 1 else 'ies'}"


@dataclass(frozen=True, slots=True)
class PathClass:
    arg: str
    kind: Kind
    reason: str | None = None  # missing / unreadable / special: why, as a user reads it
    size: int | None = None  # a log file or remote object
    encoding: Encoding | None = None  # a log file: sniffed from its first bytes
    groups: tuple[Group, ...] = ()  # a root, a directory of logs, a remote prefix
    walk: WalkBound | None = None  # a directory searched by ``bounded_walk``: how far it went

    @property
    def listable(self) -> bool:
        """A directory (or prefix) of several sessions, not one session."""
        return self.kind in LISTABLE

    @property
    def logs(self) -> tuple[str, ...]:
        return tuple(log for group in self.groups for log in group.logs)


Layouts = Sequence[tuple[str, tuple[str, ...]]]  # (dialect name, root patterns)


def classify_path(arg: str | Path, layouts: Layouts = (), suffixes: tuple[str, ...] = ()) -> PathClass:
    """What ``arg`` is (see the module doc). Never raises for a file-system condition: a path
    that cannot be examined is ``missing`` or ``unreadable`` with the reason a user reads."""
    text = str(arg)
    if is_stdin(arg):
        return PathClass(text, "stdin")
    if isinstance(arg, str) and "://" in arg:
        from sesstool.store.remote import is_url

        if is_url(arg):
            return _classify_remote(arg, suffixes)
    try:
        st = os.stat(arg)
    except FileNotFoundError:
        return PathClass(text, "missing", open_error(arg, FileNotFoundError(2, "")).message)
    except (OSError, ValueError) as err:
        return PathClass(text, "unreadable", _reason(arg, err))
    if stat.S_ISDIR(st.st_mode):
        return _classify_directory(arg, text, layouts, suffixes)
    kind = special_kind(st.st_mode)
    if kind == "FIFO":
        return PathClass(text, "stream")
    if kind is not None:
        return PathClass(text, "special", f"{text}: is a {kind}, not a session log")
    try:
        with open(arg, "rb") as f:  # read-only: four bytes to sniff the encoding
            head = f.read(4)
    except OSError as err:
        return PathClass(text, "unreadable", _reason(arg, err), st.st_size)
    return PathClass(text, "log", size=st.st_size, encoding=sniff(head))


def _reason(arg: str | Path, err: OSError | ValueError) -> str:
    if isinstance(err, OSError):
        return open_error(arg, err).message
    return f"{arg}: {err}"


def _classify_directory(arg: str | Path, text: str, layouts: Layouts, suffixes: tuple[str, ...]) -> PathClass:
    directory = Path(arg)
    try:
        if generations(directory):
            return PathClass(text, "session-dir")
        groups = [Group(name, root_logs(directory, patterns)) for name, patterns in layouts]
        found = tuple(g for g in groups if g.logs)
        if found:
            return PathClass(text, "root", groups=found)
        logs, walk = bounded_walk(directory, suffixes)
    except OSError as err:
        return PathClass(text, "unreadable", _reason(arg, err))
    if logs:
        return PathClass(text, "log-dir", groups=(Group(None, logs),), walk=walk)
    return PathClass(text, "empty-dir", walk=walk)


def _classify_remote(url: str, suffixes: tuple[str, ...]) -> PathClass:
    from sesstool.store.remote import describe_url, list_logs

    kind, size = describe_url(url)
    if kind == "missing":
        return PathClass(url, "missing", f"{url}: no such object or prefix")
    if kind == "object":
        return PathClass(url, "remote-object", size=size)
    logs = SortedPaths(entry.url for entry in list_logs((url,), suffixes=suffixes or None))
    return PathClass(url, "remote-prefix", groups=(Group(None, logs),))


# -- walking ---------------------------------------------------------------------------------------


def is_log_name(name: str, suffixes: tuple[str, ...]) -> bool:
    """A directory walk keeps this file: it ends in one of ``suffixes``, in any case."""
    return name.lower().endswith(tuple(s.lower() for s in suffixes))


# Paths of one directory's walk sorted in memory up to this many, or this many bytes of them;
# past either a spill file's table sorts them (issue 11 item 1: a root of many logs costs a fixed
# amount, not a path each). The tests lower them.
PATHS_HELD = 1024
PATHS_BYTES = 1 << 20
_PAGE_ROWS = 256  # paths read back from a spilled sort a statement at a time


def _path_limits() -> Limits:
    return Limits(PATHS_HELD, PATHS_BYTES, 0, _PAGE_ROWS)  # read when used


def walk_spill(purpose: str = "the paths of a directory's walk") -> SharedSpill:
    """One spill file for the ``SortedPaths`` of a walk (and what its caller keeps beside them),
    made when the first of them outgrows memory."""

    def make() -> SpillFile:
        from sesstool.store.spill import SpillFile  # sqlite3: only for a directory this large

        return SpillFile(purpose)

    return SharedSpill(make)


class SortedPaths(Collection[str]):
    """Paths added in any order (a walk's), walked sorted as Python sorts ``str`` (by code point)
    and each once, as often as wanted: a ``store.spilling_list.SpillingOrder`` of one ``bytes``
    column, the path's UTF-8 with a lone surrogate (an undecodable byte of a name) passed through
    — that encoding keeps the code points' order, so SQLite's ``memcmp`` order past
    ``PATHS_HELD`` paths (or ``PATHS_BYTES``) is the in-memory sort's. A path added twice is kept
    once (the order is ``distinct``), so the count is kept as the paths are added and membership
    is a look-up (a set, or the spilled table's unique index), never a sort. Structures of one
    walk share ``spill`` (one spill file, made at the first that outgrows memory)."""

    def __init__(self, paths: Iterable[str] = (), spill: SharedSpill | None = None) -> None:
        self._spill = spill if spill is not None else walk_spill()
        self._order = SpillingOrder(self._spill, _path_limits, distinct=True)
        self._added = 0  # distinct paths
        for path in paths:
            self.add(path)

    def add(self, path: str) -> None:
        if self._order.add((text_key(path),)):
            self._added += 1

    @property
    def spilled(self) -> bool:
        return self._order.spilled

    def __bool__(self) -> bool:
        return self._added > 0

    def __len__(self) -> int:
        """The distinct paths (a walk counts them: a path added twice is one)."""
        return self._added

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._order.contains((text_key(path),))

    def __iter__(self) -> Iterator[str]:
        for (key,) in self._order.sorted():
            yield key_text(key)

    def __repr__(self) -> str:
        return f"SortedPaths({self._added} paths{', spilled' if self.spilled else ''})"

    def close(self) -> None:
        """Give back the spill file now, if the walk made one (else it goes with the object)."""
        if self._spill.file is not None:
            self._spill.file.close()


def bounded_walk(
    directory: str | Path,
    suffixes: tuple[str, ...],
    max_depth: int | None = None,
    max_entries: int | None = None,
) -> tuple[SortedPaths, WalkBound]:
    """The files under ``directory`` whose name ends in a log suffix (any case), sorted, found
    breadth first no deeper than ``max_depth`` directory levels and among at most
    ``max_entries`` entries; links to directories are not followed. The bound says what was not
    searched. Raises OSError only when ``directory`` itself cannot be listed. The files found and
    each level's directories are ``SortedPaths``: past ``PATHS_HELD`` in the walk's spill file."""
    max_depth = WALK_MAX_DEPTH if max_depth is None else max_depth
    max_entries = WALK_MAX_ENTRIES if max_entries is None else max_entries
    wanted = tuple(s.lower() for s in suffixes)
    spill = walk_spill()
    found = SortedPaths(spill=spill)
    entries = deeper = unreadable = 0
    level: Collection[str] = [str(directory)]
    depth = 0
    while level:
        below = SortedPaths(spill=spill)
        for folder in level:
            try:
                with os.scandir(folder) as listing:
                    for entry in listing:
                        entries += 1
                        if entries > max_entries:
                            cut = WalkBound(max_depth, max_entries, max_entries, deeper, unreadable, True)
                            return found, cut
                        if entry.is_dir(follow_symlinks=False):
                            if depth < max_depth:
                                below.add(entry.path)
                            else:
                                deeper += 1
                        elif entry.name.lower().endswith(wanted) and entry.is_file():
                            found.add(entry.path)
            except OSError:
                if depth == 0:
                    raise
                unreadable += 1
        level, depth = below, depth + 1
    return found, WalkBound(max_depth, max_entries, entries, deeper, unreadable)


# -- pathlib's globbing, streamed ----------------------------------------------------------------
# ``Path.glob``/``rglob`` list each directory whole before yielding from it, intern each name of
# a path parsed from text, and ``rglob`` keeps a set of every path it yielded: a path or more per
# log held (issue 11 item 1). The walks below find the same files under the same rules (Python
# 3.11's selectors: a wildcard part matched by ``fnmatch`` case-sensitively, a hidden name
# included; a literal part by ``is_dir``/``exists``; links to directories followed by a
# pattern's parts, never by ``**``; a directory that cannot be listed, ``PermissionError``,
# yields nothing; ENOENT, ENOTDIR, EBADF and ELOOP read as "no such file"), as the same text
# (``str(Path(root))`` joined by ``/``), one entry at a time.

_IGNORED = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})  # pathlib's "no such file"


def _mode(path: str, follow: bool) -> int | None:
    """``path``'s mode, or None where pathlib's ``is_*`` answer False (other OSErrors raise)."""
    try:
        return (os.stat if follow else os.lstat)(path).st_mode
    except OSError as err:
        if err.errno not in _IGNORED:
            raise
        return None
    except ValueError:
        return None


def _is(path: str, test: Callable[[int], bool], follow: bool = True) -> bool:
    mode = _mode(path, follow)
    return mode is not None and test(mode)


def _child(base: str, name: str) -> str:
    """``str(Path(base) / name)`` for a ``base`` that is already a ``str(Path(...))``."""
    if base == ".":
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


def _entry_is_dir(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError as err:
        if err.errno not in _IGNORED:
            raise
        return False


def _matches(folder: str, parts: tuple[str, ...]) -> Iterator[str]:
    """What ``Path(folder).glob("/".join(parts))`` yields (its selectors, streamed)."""
    if not parts:
        yield folder
        return
    part, rest = parts[0], parts[1:]
    try:
        if not any(ch in part for ch in "*?["):
            path = _child(folder, part)
            if _is(path, stat.S_ISDIR) if rest else _mode(path, True) is not None:
                yield from _matches(path, rest)
            return
        match = _pattern(part)
        with os.scandir(folder) as listing:
            for entry in listing:
                if rest and not _entry_is_dir(entry, True):
                    continue
                if match(entry.name):
                    yield from _matches(_child(folder, entry.name), rest)
    except PermissionError:
        return


@functools.lru_cache(maxsize=256)  # a layout's parts, and an escaped session name each: bounded
def _pattern(part: str) -> Callable[[str], re.Match[str] | None]:
    return re.compile(fnmatch.translate(part)).fullmatch


def _folders(folder: str, spill: SharedSpill) -> Iterator[str]:
    """What ``Path(folder).rglob`` starts from: ``folder`` and every directory under it, links
    not followed; each directory's subdirectories held as ``SortedPaths`` while it is walked."""
    yield folder
    below = SortedPaths(spill=spill)
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                if _entry_is_dir(entry, False):
                    below.add(_child(folder, entry.name))
    except PermissionError:
        return
    for path in below:
        yield from _folders(path, spill)


def walk_logs(
    directory: str | Path, suffixes: tuple[str, ...], spill: SharedSpill | None = None
) -> SortedPaths:
    """Every file under ``directory`` (recursively, no bound: ``validate`` checks a fixture tree
    whole, a CI check must not skip a log) whose name ends in a log suffix, sorted: what
    ``Path(directory).rglob("*")`` finds, a file or a link to one, streamed into ``SortedPaths``
    (in ``spill``, when given)."""
    wanted = tuple(s.lower() for s in suffixes)
    base = str(Path(directory))
    spill = spill or walk_spill()
    found = SortedPaths(spill=spill)
    if not _is(base, stat.S_ISDIR):
        return found
    for folder in _folders(base, spill):
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    if entry.name.lower().endswith(wanted):
                        path = _child(folder, entry.name)
                        if _is(path, stat.S_ISREG):
                            found.add(path)
        except PermissionError:
            continue
    return found


def root_logs(root: Path, patterns: tuple[str, ...]) -> SortedPaths:
    """Every file under ``root`` matching one of ``patterns`` (relative globs, matched as
    ``Path.glob`` does, streamed), sorted and each once; a link is not kept (a pattern's
    directories may be links). Each kept as its ``str``, in ``SortedPaths``: a root may hold
    many logs (issue 11 item 1)."""
    base = str(root)
    found = SortedPaths()
    if not _is(base, stat.S_ISDIR):
        return found
    for pattern in patterns:
        for path in _matches(base, tuple(p for p in pattern.split("/") if p and p != ".")):
            if _is(path, stat.S_ISREG) and not _is(path, stat.S_ISLNK, follow=False):
                found.add(path)
    return found


def is_glob(arg: str) -> bool:
    """An argument the shell left unexpanded: glob characters and no file of that name."""
    return arg != "-" and any(ch in arg for ch in "*?[") and not os.path.exists(arg)


def glob_matches(pattern: str, spill: SharedSpill | None = None) -> SortedPaths:
    """What ``glob.glob(pattern, recursive=True)`` matches, sorted and each once (``SortedPaths``,
    in ``spill`` when given)."""
    return SortedPaths(glob.iglob(pattern, recursive=True), spill)


def is_directory(arg: str | Path) -> bool:
    return arg != "-" and os.path.isdir(arg)


def exists(path: str | Path) -> bool:
    """Anything at ``path`` (a dangling link counts: a name that is taken)."""
    return os.path.lexists(path)


def file_size(path: str | Path) -> int | None:
    """The size of what ``path`` names, or None when it cannot be examined."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return None


def session_dirs(root: Path, is_project: Callable[[str], bool]) -> list[Path]:
    """Every directory ``<root>/<project>/<session>`` (spec §2.2) whose project directory's
    name ``is_project`` accepts, sorted."""
    out: list[Path] = []
    for project in sorted(root.iterdir()):
        if is_project(project.name) and project.is_dir():
            out.extend(session for session in sorted(project.iterdir()) if session.is_dir())
    return out


def same_file(a: Path, b: Path) -> bool:
    """Do ``a`` and ``b`` name the same file or directory (links resolved)?"""
    return a.resolve() == b.resolve()


def is_session_dir(directory: Path, *, for_write: bool = False) -> bool:
    """Does ``directory`` hold canonical generations (spec §10)? A missing directory does not.
    One that cannot be listed is an InputError (exit 3), or with ``for_write`` (the target
    directory of a write) a WriteRefusedError (exit 6)."""
    try:
        return bool(generations(directory))
    except FileNotFoundError:
        return False
    except OSError as err:
        if for_write:
            raise WriteRefusedError(
                f"{directory}: cannot list the target directory: {err.strerror}"
            ) from None
        raise open_error(directory, err) from None


def identity_of(path: Path) -> FileIdentity:
    """The file's identity now (device, inode, size, times); an OSError is exit 3, named."""
    try:
        return FileIdentity.of_path(path)
    except OSError as err:
        raise open_error(path, err) from None
