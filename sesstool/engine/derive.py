"""derive: the model-visible message list and the current request envelope (spec §5).

Streamed (issue 14): the scan keeps the line offset of each current surface node
(``ScanOptions.message_addresses``) rather than its message, and ``DerivedMessages`` reads the
messages back by address (``engine/derive_read.py``) one at a time while the renderer writes
them. Standard input and a FIFO are read back from a private copy taken during the scan
(``store.stream_copy``; issue 11 item 1: memory does not grow with the messages of a stream
either). A dialect whose scanner keeps its messages itself (Codex, Claude) derives in memory.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sesstool.core.closer_list import walked, walked_encodable
from sesstool.core.errors import InputError, UnsupportedError, UsageError
from sesstool.core.fork_plan import check_at
from sesstool.core.joined_text import JoinedText
from sesstool.core.jsonline import encodable, loads
from sesstool.core.model import RequestEnvelope, ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.redact import Redactor
from sesstool.core.rules import Severity
from sesstool.core.upgrade import UpgradeRefused
from sesstool.dialects.base import Dialect
from sesstool.engine.derive_read import Unescaped, in_surface_order, numbered_lines
from sesstool.engine.records import upgraded_lines
from sesstool.engine.scan import Progress, ScanReport, Tap, run_scan
from sesstool.store.line_fetch import LineFetcher
from sesstool.store.plaintext import Readable, plaintext_lines
from sesstool.store.run_spill import spilled_strings
from sesstool.store.source import ReadLimits, is_stream
from sesstool.store.spool import RecordSpool
from sesstool.store.stream_copy import StreamCopy

_BATCH = 4096
SYSTEM_SPOOL_MEMORY = 256 << 10  # bytes of kept system messages held before they go to a file


def pickled(value: Any, texts: list[JoinedText]) -> bytes:
    """``value`` pickled, each streamed text in it (a ``JoinedText``: its parts in a spill file)
    kept by reference, appended to ``texts``, never copied (pickle's persistent ids)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)

    def by_reference(obj: Any) -> int | None:
        if isinstance(obj, JoinedText):
            texts.append(obj)
            return len(texts) - 1
        return None

    pickler.persistent_id = by_reference  # type: ignore[method-assign]
    pickler.dump(value)
    return out.getvalue()


def unpickled(record: bytes, texts: list[JoinedText]) -> Any:
    """A ``pickled`` value, its streamed texts the very objects ``texts`` kept."""
    unpickler = pickle.Unpickler(io.BytesIO(record))
    unpickler.persistent_load = texts.__getitem__  # type: ignore[method-assign]
    return unpickler.load()


@dataclass(frozen=True, slots=True)
class DeriveRequest:
    path: str
    at: int | None = None
    limits: ReadLimits = field(default_factory=ReadLimits)
    fixture: bool = False
    as_version: int | None = None  # derive what a reader of this version sees after upgrading
    redact: bool = False  # replace credential-shaped values with stable tokens


class DerivedMessages:
    """The derived messages in surface order, produced while they are iterated (once). ``len``
    is known before; with ``keep_system``, ``systems()`` gives back the system messages met
    (the JSON document's request envelope cites them, after the messages)."""

    def __init__(
        self, count: int, produce: Callable[[], Iterator[Any]], redactor: Redactor | None, ascii_only: bool
    ) -> None:
        self._count = count
        # some message has a lone surrogate (orjson cannot encode it): JSON is written with
        # every non-ASCII character escaped, the whole document as one (core.jsonline.dumps_pretty)
        self.ascii_only = ascii_only
        self._produce: Callable[[], Iterator[Any]] | None = produce
        self._redactor = redactor
        # keep the system messages met (``systems()``): only the JSON document cites them, after
        # the messages; the other formats leave them. A Claude session has one per turn: they
        # wait in a spool (memory, then an unnamed temporary file; issue 17), never in a list
        self.keep_system = False
        self._system: RecordSpool | None = None
        self._texts: list[JoinedText] = []  # the spooled messages' streamed texts, by reference
        self._done: list[Callable[[], None]] = []
        self.redacted_ahead = False

    def redact_ahead(self) -> None:
        """A pass that hands nothing out: the redactor meets every message, one at a time, so
        its tokens and counts are those of the whole list before the first message is written
        (``--format markdown --redact`` states the counts in its heading; issue 11 item 1). The
        messages are produced again when iterated, with the same tokens."""
        produce, redactor = self._produce, self._redactor
        if produce is None:
            raise RuntimeError("derived messages are produced once")
        if redactor is None or self.redacted_ahead:
            return
        for message in produce():
            walked(redactor.value(message))  # a streamed content meets the redactor as walked
        self.redacted_ahead = True

    def on_done(self, release: Callable[[], None]) -> None:
        """Call ``release`` once the messages have been produced (or their production stopped)."""
        self._done.append(release)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        produce, self._produce = self._produce, None
        if produce is None:
            raise RuntimeError("derived messages are produced once")
        redactor = self._redactor
        try:
            for message in produce():
                if redactor is not None:
                    message = redactor.value(message)
                if self.keep_system and isinstance(message, dict) and message.get("role") == "system":
                    if self._system is None:
                        self._system = RecordSpool(SYSTEM_SPOOL_MEMORY)
                    self._system.append(pickled(message, self._texts))
                yield message
        finally:
            for release in self._done:
                release()

    @property
    def consumed(self) -> bool:
        return self._produce is None

    @property
    def system_count(self) -> int:
        """The system messages kept so far (``keep_system``)."""
        return self._system.count if self._system is not None else 0

    def systems(self) -> Iterator[Any]:
        """The system messages kept (``keep_system``), in order, each as it was handed out (an
        exact copy: pickled); once, after the messages."""
        spool, self._system = self._system, None
        if spool is not None:
            for record in spool.records():
                yield unpickled(record, self._texts)


class DeriveReport:
    """What derive found. Iterate ``messages`` first: with ``--redact`` the request envelope
    and the counts come after the messages (the same value keeps the same token throughout)."""

    def __init__(
        self,
        scan: ScanReport,
        messages: DerivedMessages,
        request: RequestEnvelope,
        at: int | None,
        as_version: int | None,
        redactor: Redactor | None,
    ) -> None:
        self.scan = scan
        self.messages = messages
        self._request = request
        self.at = at
        self.as_version = as_version
        self._redactor = redactor
        self._finished = redactor is None
        self.notes: tuple[str, ...] = ()  # what derive cannot promise (``Dialect.derive_notes``)

    @property
    def redacting(self) -> bool:
        return self._redactor is not None

    def envelope_encodable(self) -> bool:
        """Can orjson encode the request envelope as scanned (no lone surrogate)?"""
        return encodable((self._request.header, self._request.context))

    @property
    def request(self) -> RequestEnvelope:
        self._finish()
        return self._request

    @property
    def redactions(self) -> tuple[tuple[str, int], ...] | None:
        """kind -> values replaced (``--redact``), or None."""
        if self._redactor is None:
            return None
        self._finish()
        return self._redactor.counts().by_kind

    def _finish(self) -> None:
        if self._finished:
            return
        if not self.messages.consumed and not self.messages.redacted_ahead:
            for message in self.messages:  # the messages' tokens come first (an unprinted document)
                walked(message)
        redactor, req = self._redactor, self._request
        assert redactor is not None
        self._request = RequestEnvelope(
            redactor.value(req.header), req.header_seq, redactor.value(req.context), req.context_seq
        )
        self._finished = True


def run_derive(request: DeriveRequest, progress: Progress | None = None) -> DeriveReport:
    """Raises UnsupportedError (exit 4) or InputError (exit 3) when no trustworthy fold exists."""
    options = ScanOptions(
        fixture=request.fixture, at_seq=request.at, collect_messages=True, message_addresses=True
    )
    report, readable, release = scan_to_read_back(request.path, options, request.limits, progress)
    try:
        derive = _derive(request, report, readable)
    except BaseException:
        release()
        raise
    derive.messages.on_done(release)
    return derive


def scan_to_read_back(
    path: str, options: ScanOptions, limits: ReadLimits, progress: Progress | None, tap: Tap | None = None
) -> tuple[ScanReport, Readable | None, Callable[[], None]]:
    """The scan of a command that reads the derived messages back by address (``options``
    with ``message_addresses``): the report, where its bytes can be read again (the file, or
    standard input's or a FIFO's private copy taken during the scan) and what releases that
    copy once the messages are read."""
    copy = StreamCopy() if is_stream(path) else None
    try:
        report, _ = run_scan(path, options, limits, progress, digest=copy, tap=tap)
        readable = report.source.path if copy is None else copy.file
        if copy is not None and not _reads_back(report.dialect):
            copy.close()  # its scanner kept the messages: nothing to read back
            copy = None
    except BaseException:
        if copy is not None:
            copy.close()
        raise
    return report, readable, (copy.close if copy is not None else _nothing)


def _nothing() -> None:
    pass


def scanned_messages(report: ScanReport, readable: Readable | None, limits: ReadLimits) -> Iterator[Any]:
    """The derived messages of a scan by ``scan_to_read_back``, produced one at a time as they
    are iterated (read back by address or by entries), in one pass: nothing counts them first
    (``report`` counts them as they come)."""
    _, produce, _, _, _ = _as_scanned(report, readable, limits, counted=False)
    return produce()


def _reads_back(dialect: Dialect) -> bool:
    return dialect.derives_by_address or dialect.derives_by_entries


def _derive(request: DeriveRequest, report: ScanReport, readable: Readable | None) -> DeriveReport:
    result = report.scan
    if result.verdict == "unsupported":
        raise UnsupportedError(f"cannot derive: {result.verdict_reason}", result.verdict_address)
    if result.verdict == "corrupt":
        raise InputError(f"cannot derive from a corrupt log: {result.verdict_reason}", result.verdict_address)
    if request.at is not None and (result.stopped_at is None or result.stopped_at < request.at):
        check_at(request.at, result.stopped_at)  # past the end: exit 2, as for fork
    redactor = Redactor(spill=spilled_strings) if request.redact else None
    if request.as_version is not None and request.as_version != result.version:
        produced = _as_version(request, report, readable)
    else:
        produced = _as_scanned(report, readable, request.limits)
    count, produce, envelope, ascii_only, notes = produced
    messages = DerivedMessages(count, produce, redactor, ascii_only)
    derive = DeriveReport(report, messages, envelope, request.at, request.as_version, redactor)
    derive.notes = notes if notes is not None else report.dialect.derive_notes(result)
    return derive


# (count, the messages when iterated, the request envelope, ASCII-only JSON, the best-effort
# notes when the derivation found them itself)
Produced = tuple[int, Callable[[], Iterator[Any]], RequestEnvelope, bool, "tuple[str, ...] | None"]


def _in_memory(kept: Sequence[Any], envelope: RequestEnvelope) -> Produced:
    return len(kept), lambda: iter(kept), envelope, not walked_encodable(kept), None


def _by_address(
    kept: Sequence[Any], lines: Callable[[Sequence[int]], Iterator[bytes]], dialect: Dialect, scan: ScanResult
) -> Produced:
    """``kept``: line offsets, ``-1 - offset`` for a message orjson cannot encode (the scanner's
    ``_line_offset``)."""
    ascii_only = any(a < 0 for a in kept)
    order = Unescaped(kept) if ascii_only else kept
    del kept

    def produce() -> Iterator[Any]:
        for line in lines(order):
            yield dialect.derived_message(loads(line), scan)

    return len(order), produce, scan.request, ascii_only, None


def _by_entries(
    report: ScanReport, path: Readable, limits: ReadLimits, end: int, counted: bool = True
) -> Produced:
    """A dialect that derives from entries scattered through the file (Claude Code): it reads
    the lines it needs by offset (``store.line_fetch``), one counting pass (unless not
    ``counted``: then the count is -1 and the notes None), then the messages."""
    fetcher = LineFetcher(path, report.source.encoding, limits, end)
    count, ascii_only, notes = -1, False, None
    try:
        derivation = report.dialect.entry_derivation(report.scan, fetcher.get)
        if counted:
            count, ascii_only, notes = derivation.prepare()
    except BaseException:
        fetcher.close()
        raise

    def produce() -> Iterator[Any]:
        try:
            yield from derivation.messages()
        finally:
            fetcher.close()

    return count, produce, report.scan.request, ascii_only, notes


def _as_scanned(
    report: ScanReport, path: Readable | None, limits: ReadLimits, counted: bool = True
) -> Produced:
    """``path``: where the scanned bytes can be read again (the file, or a stream's copy);
    ``counted``: the count is wanted before the messages (else it may be -1: unknown)."""
    result = report.scan
    assert result.messages is not None
    kept = result.messages
    if path is None or not _reads_back(report.dialect):
        return _in_memory(kept, result.request)
    end = result.stop_offset if result.stop_offset is not None else result.tail.committed_bytes
    if report.dialect.derives_by_entries:
        return _by_entries(report, path, limits, end, counted)
    display = report.source.display
    encoding = report.source.encoding

    def lines(order: Sequence[int]) -> Iterator[bytes]:
        return in_surface_order(plaintext_lines(path, encoding, limits, 0, end), order, display)

    return _by_address(kept, lines, report.dialect, result)


def _as_version(request: DeriveRequest, report: ScanReport, path: Readable | None) -> Produced:
    """Upgrade the committed events in memory through the chain (§1.3) and fold the result with
    the same scanner: the messages a reader of ``as_version`` derives. Nothing is written; by
    address, the upgrade runs again to read the messages back."""
    result = report.scan
    assert result.version is not None and result.header is not None and request.as_version is not None
    if request.as_version < result.version:
        raise UsageError(
            f"--as-version {request.as_version}: the log is v{result.version}, and no harness "
            "defines a downgrade"
        )
    try:
        steps = report.dialect.upgrade_chain(result.version, request.as_version)
    except UpgradeRefused as err:
        raise UnsupportedError(str(err)) from None
    if path is None:
        raise UsageError("--as-version needs a file or standard input")
    committed = result.stop_offset if result.stop_offset is not None else result.tail.committed_bytes
    header, target = result.header, request.as_version

    def upgraded() -> Iterator[bytes]:
        head, lines = upgraded_lines(
            path, report.source.encoding, dict(header.raw), report.dialect,
            result.body_offset or 0, committed, steps, target, request.limits,
        )  # fmt: skip
        yield head
        yield from lines

    # a dialect that derives by entries keeps its messages here: its lines are upgraded ones
    options = ScanOptions(collect_messages=True, message_addresses=report.dialect.derives_by_address)
    scanner = report.dialect.scanner(report.source.display, options)
    batch: list[bytes] = []
    offset = start = 0
    lineno = 1
    for line in upgraded():
        batch.append(line[:-1])
        offset += len(line)
        if len(batch) >= _BATCH:
            scanner.feed_lines(batch, start, lineno, None)
            start, lineno, batch = offset, lineno + len(batch), []
    scanner.feed_lines(batch, start, lineno, None)
    upgraded_scan = scanner.finish(None)
    errors = [f for f in upgraded_scan.weighed if f.severity is Severity.ERROR]
    if errors:
        raise UnsupportedError(
            f"the log upgraded to v{request.as_version} does not validate: [{errors[0].rule}] "
            f"{errors[0].message}"
        )
    assert upgraded_scan.messages is not None
    kept = upgraded_scan.messages
    if not report.dialect.derives_by_address:
        return _in_memory(kept, upgraded_scan.request)
    display = report.source.display

    def lines(order: Sequence[int]) -> Iterator[bytes]:
        return in_surface_order(numbered_lines(upgraded()), order, display)

    return _by_address(kept, lines, report.dialect, upgraded_scan)
