"""The dialects sesstool reads, and how one log's dialect is chosen.

Adding a dialect = its package under ``sesstool/dialects/`` plus one entry in ``PACKAGES``
(docs/architecture.md "Adding a dialect"). The registry is the only place besides the dialect
packages that knows dialects by name.

Detection reads the first record (the first line that decodes): every dialect scores it
(``Dialect.detect``), the highest score wins, and a tie or an all-zero score falls to the
first dialect listed (``PACKAGES[0]``, dsh: its scanner then reports what is wrong with the
header). ``--dialect NAME`` skips detection.

Dialect packages are imported when first needed (issue 14: start-up): detection asks the
dialects in order and stops at the first certain score (1.0, the most ``Dialect.detect`` may
return: no later dialect can beat it, and a tie goes to the earlier one anyway), so a dsh log
imports only the dsh package; ``by_name`` imports one; ``DIALECTS``, ``layouts`` and
``log_suffixes`` import them all. Setting ``DIALECTS`` (a test adding a dialect object) makes
that tuple the list. A dialect's rules are registered (``core.rules.RULES``) when
its package is imported; what lists every rule touches ``DIALECTS`` first.

Before any of that, a file that is not a session log is refused (``NotASessionLog``, exit 4):
its first bytes or first line say it is something else (``core.looks_like``), its first record
is JSON that no dialect recognises and no envelope event either, or — with ``--dialect`` — it
is recognised as another dialect's log (docs/format.md "Not a session log").
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from sesstool.core.errors import NotASessionLog, UsageError
from sesstool.core.jsonline import LineError, loads
from sesstool.core.looks_like import first_line_kind, signature
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch, PhysicalIssue, ReadSummary
from sesstool.core.rules import register_rules
from sesstool.dialects.base import Dialect, DialectScanner

# (name, package): the order is detection's (ties and the default go to the first)
PACKAGES: tuple[tuple[str, str], ...] = (
    ("dsh", "sesstool.dialects.dsh"),
    ("mini", "sesstool.dialects.mini"),
    ("codex", "sesstool.dialects.codex"),
    ("claude", "sesstool.dialects.claude"),
)

AUTO = "auto"
CERTAIN = 1.0  # the highest score ``Dialect.detect`` returns

_loaded: dict[str, Dialect] = {}


def _load(index: int) -> Dialect:
    """The dialect ``PACKAGES[index]``, its package imported (and its rules registered) once."""
    name, package = PACKAGES[index]
    dialect = _loaded.get(name)
    if dialect is None:
        dialect = importlib.import_module(package).DIALECT
        if dialect.name != name:
            raise RuntimeError(f"{package} defines dialect {dialect.name!r}, listed as {name!r}")
        register_rules(dialect.rules)
        _loaded[name] = dialect
    return dialect


def _listed() -> tuple[Dialect, ...] | None:
    """``DIALECTS`` when it was set (a test adding a dialect object), else None: the packages."""
    listed: tuple[Dialect, ...] | None = globals().get("DIALECTS")
    return listed


def _each() -> Iterator[Dialect]:
    """The dialects in order, each imported only when the iteration reaches it."""
    listed = _listed()
    if listed is not None:
        yield from listed
        return
    for index in range(len(PACKAGES)):
        yield _load(index)


def _all() -> tuple[Dialect, ...]:
    return tuple(_each())


def __getattr__(attribute: str) -> tuple[Dialect, ...]:
    """``DIALECTS``: every dialect, in ``PACKAGES`` order (imports them all)."""
    if attribute == "DIALECTS":
        return _all()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def default() -> Dialect:
    """The first dialect listed: it reads a log no dialect recognises."""
    return next(_each())


def names() -> tuple[str, ...]:
    listed = _listed()
    return tuple(d.name for d in listed) if listed is not None else tuple(name for name, _ in PACKAGES)


def by_name(name: str) -> Dialect:
    listed = _listed()
    if listed is not None:
        for dialect in listed:
            if dialect.name == name:
                return dialect
    else:
        for index, (known, _) in enumerate(PACKAGES):
            if known == name:
                return _load(index)
    raise UsageError(f"unknown dialect {name!r}: sesstool reads {', '.join(names())}")


def layouts() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(name, root patterns)`` of every dialect with a root layout (the store walks them)."""
    return tuple((d.name, d.layout.patterns) for d in _all() if d.layout.patterns)


def log_suffixes() -> tuple[str, ...]:
    """The file-name endings of a log of any registered dialect (``Dialect.layout``), lower
    case (a directory walk matches them in any case)."""
    return tuple(sorted({s.lower() for d in _all() for s in d.layout.suffixes}))


def forced(name: str) -> Dialect | None:
    """The dialect ``--dialect NAME`` forces; None for ``auto``."""
    return None if name == AUTO else by_name(name)


def detect(first: Any) -> Dialect:
    """The dialect of a log whose first decoded record is ``first`` (see the module doc)."""
    return _best(first)[0]


_NOT_DECODED = object()


LOOKAHEAD = 4  # lines of the first batch that may show a damaged first line is a log's


def not_a_log(lines: list[bytes], forced: Dialect | None, max_depth: int) -> str | None:
    """Why a log whose first complete lines are ``lines`` is not a session log — of any
    dialect, or of ``forced`` (``--dialect``) — as "it is/looks like …" text; None when it may
    be one. Judged from the first line; but when one of the next few lines is a record of some
    dialect (or an envelope event), the first line is a damaged record of a log, not another
    kind of file (its findings say what is wrong). See ``core.looks_like``."""
    first = _first_record_or(lines[0], max_depth, _NOT_DECODED)
    decoded = first is not _NOT_DECODED
    what = first_line_kind(lines[0], decoded, first)
    if what is not None:
        return None if _a_record_follows(lines, max_depth) else f"it looks like {what}"
    if not decoded:
        return None
    best, score = _best(first)
    if forced is not None:
        if score > 0 and best is not forced and forced.detect(first) == 0:
            return f"it is a {best.title} log (drop --dialect, or use --dialect {best.name})"
        return None
    if score > 0 or _envelope_shaped(first) or _a_record_follows(lines, max_depth):
        return None  # a log of a dialect (perhaps with a damaged or missing header)
    keys = ", ".join(repr(k[:40]) for k in list(first)[:6]) or "none"
    return f"it is JSON Lines, but not any known agent's records (first record's keys: {keys})"


def _best(first: Any) -> tuple[Dialect, float]:
    """The highest-scoring dialect (the first of a tie; the default when all score 0). A
    certain score ends the search: the dialects after it are not imported to be asked."""
    best, score = default(), 0.0
    for dialect in _each():
        s = dialect.detect(first)
        if s > score:
            best, score = dialect, s
            if score >= CERTAIN:
                break
    return best, score


def _a_record_follows(lines: list[bytes], max_depth: int) -> bool:
    for line in lines[1:LOOKAHEAD]:
        obj = _first_record_or(line, max_depth, _NOT_DECODED)
        if isinstance(obj, dict) and (_best(obj)[1] > 0 or _envelope_shaped(obj)):
            return True
    return False


def _envelope_shaped(obj: Any) -> bool:
    """``{type, seq|time|data}``: an event of an envelope dialect, even without its header."""
    return isinstance(obj.get("type"), str) and any(k in obj for k in ("seq", "time", "data"))


def _first_record_or(line: bytes, max_depth: int, default: Any) -> Any:
    try:
        return loads(line, max_depth)
    except LineError:
        return default


def _first_record(line: bytes, max_depth: int) -> Any:
    """The first line decoded as the scanner will decode it (None when it does not decode)."""
    try:
        return loads(line, max_depth)
    except LineError:
        return None


class DetectingScanner:
    """A ``DialectScanner`` that picks the dialect from the first line it is fed, then hands
    everything (physical issues seen before it included, in order) to that dialect's scanner."""

    def __init__(self, path: str, options: ScanOptions, dialect: Dialect | None = None) -> None:
        self.path = path
        self.options = options
        self.dialect = dialect
        self.forced = dialect
        self._vetted = False
        self.inner: DialectScanner | None = dialect.scanner(path, options) if dialect is not None else None
        self._held: list[PhysicalIssue] = []

    def _choose(self, dialect: Dialect) -> DialectScanner:
        self.dialect = dialect
        inner = self.inner = dialect.scanner(self.path, self.options)
        for issue in self._held:
            inner.feed(issue)
        self._held = []
        return inner

    @property
    def stopped(self) -> bool:
        return self.inner.stopped if self.inner is not None else False

    @property
    def committed(self) -> int:
        return self.inner.committed if self.inner is not None else 0

    def vet_head(self, head: bytes) -> None:
        """Refuse a file whose first bytes are a known binary signature (a gzip file holds no
        newline a line reader would split at: its first line never arrives)."""
        what = signature(head)
        # a log whose first bytes are damaged still shows its record: a damaged log, not a binary
        if what is not None and b'{"' not in head:
            raise NotASessionLog(f"{self.path}: not a session log: it looks like {what}")

    def _vet(self, lines: list[bytes]) -> None:
        self._vetted = True
        why = not_a_log(lines, self.forced, self.options.max_depth)
        if why is not None:
            name = "a session log" if self.forced is None else f"a {self.forced.title} session log"
            raise NotASessionLog(f"{self.path}: not {name}: {why}")

    def feed(self, item: Batch | PhysicalIssue) -> None:
        if not self._vetted and type(item) is tuple and item[0] and item[2] == 1:
            self._vet(item[0][:LOOKAHEAD])
        inner = self.inner
        if inner is None:
            if type(item) is not tuple:
                assert isinstance(item, PhysicalIssue)
                self._held.append(item)
                return
            inner = self._choose(
                detect(_first_record(item[0][0], self.options.max_depth)) if item[0] else self._unread()
            )
        inner.feed(item)

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        self.feed((lines, offset, lineno, frame))

    def finish(self, summary: ReadSummary | None) -> ScanResult:
        inner = self.inner if self.inner is not None else self._choose(self._unread())
        return inner.finish(summary)

    def _unread(self) -> Dialect:
        """The dialect of a log without a record to detect by (an empty file): the one whose
        file names it has, if one claims it (an empty ``rollout-….jsonl`` is Codex's, and Codex
        says it is empty); else the first listed (docs/format.md "Not a session log")."""
        name = self.path.replace("\\", "/").rsplit("/", 1)[-1]
        claimed = [d for d in _each() if d.claims_name(name)]
        return claimed[0] if len(claimed) == 1 else default()

    def clean_so_far(self) -> bool:
        return self.inner.clean_so_far() if self.inner is not None else not self._held

    def continuation(self) -> DialectScanner:
        assert self.inner is not None, "a continuation follows a scan that read a header"
        return self.inner.continuation()

    def chosen(self) -> Dialect:
        """The dialect that read (or will read) the log."""
        return self.dialect if self.dialect is not None else default()


def open_scanner(path: str, options: ScanOptions, dialect: Dialect | None = None) -> DetectingScanner:
    """A scanner for one log: ``dialect`` if forced, else detected from its first line."""
    return DetectingScanner(path, options, dialect)
