"""fork: a child session from a prefix of a log (spec §8; DESIGN §3 "fork", §4).

Read the source with a full scan (verdict, last committed seq, default boundary, SHA-256 fed by
the same bytes); the open state at the boundary is that scan's own when the boundary is its last
committed event (the default boundary of a log that ends with a completed turn), else a second
scan that stops at the boundary (it reads the source only up to there). Plan the child, then
publish header + the seed's plaintext copied byte for byte + end-seed marker (+ v4 closers).
Verification reads the new file back once with the scanner, hashing the plaintext it reads
there, and compares it with what was meant to be written; the source's SHA-256, taken on the
first read, is taken again beside that rescan, before publication (issue 14: one pass each).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from sesstool.core.closer_list import joined
from sesstool.core.errors import (
    Address,
    InputError,
    InsideOpenTurn,
    LiveSessionError,
    UnsupportedError,
    UsageError,
    WriteRefusedError,
)
from sesstool.core.fork_plan import (
    BoundaryFacts,
    ForkPlan,
    boundary_facts,
    check_at,
    check_split_row,
    default_boundary,
)
from sesstool.core.model import TimelineEntry
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch, Encoding, PhysicalIssue
from sesstool.dialects.base import Dialect, ForkInput
from sesstool.engine.cold import STDIN_REFUSED
from sesstool.engine.scan import DigestWorker, Progress, ScanReport, run_scan
from sesstool.engine.write import first_error, gate, output_target, phased, rescan
from sesstool.store.digest import BackgroundDigest
from sesstool.store.framing import FrameWriter, compress_frame
from sesstool.store.generations import check_publication_name
from sesstool.store.lines import LineSplitter
from sesstool.store.liveness import session_lock
from sesstool.store.paths import exists, identity_of, is_directory, is_session_dir
from sesstool.store.plaintext import SourceChanged, plaintext_range
from sesstool.store.publish import (
    FileIdentity,
    Published,
    Sink,
    create_directory,
    publish,
    remove_created_directory,
)
from sesstool.store.source import ReadLimits, SourceInfo, regular_source

_SUFFIX_CHUNK = 1 << 16  # bytes of appended records written at a time
Layout = str  # "option", "beside-source" or "<dialect>-root" (a sibling in the root layout)


@dataclass(frozen=True, slots=True)
class ForkRequest:
    path: str
    at: int | None = None
    child_id: str | None = None
    output: str | None = None
    encoding: Encoding | None = None  # None: the source's
    created_at: int | None = None  # None: now
    dry_run: bool = False
    limits: ReadLimits = field(default_factory=ReadLimits)


@dataclass(frozen=True, slots=True)
class ForkReport:
    source: ScanReport  # the full scan of the source
    source_sha256: str  # before the first read
    source_sha256_after: str | None  # just before publication (None for --dry-run)
    plan: ForkPlan
    boundary_chosen: Literal["at", "default"]
    target: Path
    layout: Layout
    encoding: Encoding
    created_directory: Path | None  # the child's session directory (dsh root layout)
    seed_bytes: int  # plaintext bytes copied from the source (the seed records)
    published: Published | None  # None for --dry-run
    dry_run: bool
    target_exists: bool  # --dry-run: the target (or its directory) exists already

    @property
    def source_unchanged(self) -> bool:
        return self.source_sha256_after is None or self.source_sha256_after == self.source_sha256


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# -- scanning ------------------------------------------------------------------------------------


def _scan(
    arg: str | Path,
    options: ScanOptions,
    limits: ReadLimits,
    progress: Progress | None = None,
    digest: Any = None,
) -> tuple[ScanReport, BoundaryFacts]:
    report = run_scan(arg, options, limits, progress, digest=digest)[0]
    return report, boundary_facts(report.scan)


class _TurnEnd:
    """Timeline sink: the seq of turn ``turn``'s turn/end after ``after``, if the log has one."""

    def __init__(self, turn: int, after: int) -> None:
        self.turn, self.after = turn, after
        self.seq: int | None = None

    def append(self, entry: TimelineEntry) -> None:
        if (
            self.seq is None
            and entry.kind == "turn/end"
            and entry.turn == self.turn
            and entry.seq > self.after
        ):
            self.seq = entry.seq


def _nearest_boundaries(err: InsideOpenTurn, arg: str | Path, limits: ReadLimits, boundary: int) -> Exception:
    """The refusal, completed with the nearest valid boundaries on either side of ``boundary``:
    the seq before the open turn's turn/start, and its turn/end (one more pass, only now)."""
    found = _TurnEnd(err.turn, boundary)
    run_scan(arg, ScanOptions(collect_timeline=True, timeline_sink=found), limits)
    nearest = [f"seq {err.turn_seq - 1} (before its turn/start)"] if err.turn_seq else []
    nearest.append(
        f"seq {found.seq} (its turn/end)"
        if found.seq is not None
        else f"none after it (turn {err.turn} is never closed in this log)"
    )
    label = "nearest valid boundary" if len(nearest) == 1 else "nearest valid boundaries"
    return UnsupportedError(f"{err.message}; {label}: {' and '.join(nearest)}", err.address)


def _same_file(info: SourceInfo, identity: FileIdentity) -> bool:
    return (info.dev, info.ino, info.size, info.mtime_ns) == (
        identity.dev,
        identity.ino,
        identity.size,
        identity.mtime_ns,
    )


def _changed(path: Path) -> LiveSessionError:
    return LiveSessionError(
        f"{path} changed while it was read (a live writer?): fork reads a cold log; "
        "retry when the session is idle"
    )


# -- where the child goes ------------------------------------------------------------------------


def _target(
    request: ForkRequest,
    source: Path,
    dialect: Dialect,
    ids: tuple[str, str],
    version: int,
    zstd: bool,
    src: Encoding,
) -> tuple[Path, Layout, Path | None]:
    """(file, layout, session directory to create). ``-o`` wins; a source in its dialect's root
    layout gets a sibling session there (``Dialect.root_child``); anything else a file beside
    the source (``Dialect.child_name``). Ids only ever become one encoded path component."""
    if request.output is not None:
        default = source.parent / dialect.child_name(ids[1], zstd)  # -o DIR: this name inside DIR
        return output_target(request.output, default), "option", None
    if (why := dialect.refuse_default_output(source)) is not None:
        raise UsageError(why)
    parent_id, child_id = ids
    in_root = dialect.root_child(source, parent_id, child_id, version, zstd)
    if in_root is not None:
        file, directory = in_root
        if request.encoding is not None and request.encoding != src:
            raise UsageError(
                f"--encoding {request.encoding}: the source sits in a {dialect.name} root of {src} logs, "
                "and a root is single-encoding (spec §9.2); write elsewhere with -o PATH"
            )
        return file, f"{dialect.name}-root", directory
    return source.parent / dialect.child_name(child_id, zstd), "beside-source", None


# -- the command ---------------------------------------------------------------------------------


def _resolve(request: ForkRequest) -> tuple[Path, FileIdentity, str | Path]:
    """(source file, its identity, what to scan: the path as given, or the generation file a
    directory resolved to)."""
    if request.path == "-":
        raise UsageError(f"fork {STDIN_REFUSED}")
    if request.child_id is not None and request.child_id == "":
        raise UsageError("--id must not be empty")
    source = regular_source(request.path)  # FIFOs and devices refused, OSErrors named (exit 3)
    identity = identity_of(source)
    return source, identity, source if is_directory(request.path) else request.path


def run_fork(request: ForkRequest, progress: Progress | None = None) -> ForkReport:
    """Plan (and unless dry-run, publish) the fork. Raises UsageError (2), InputError (3),
    UnsupportedError (4), LiveSessionError (5) or WriteRefusedError (6)."""
    source, identity, scan_arg = _resolve(request)
    digest = hashlib.sha256()  # fed by the scan itself: the source is read once
    full, facts = _scan(scan_arg, ScanOptions(), request.limits, progress, digest)
    result = full.scan
    gate(result, "fork")
    if result.body_offset is None:  # no usable first record: nothing to fork from
        raise InputError(f"cannot fork: {result.verdict_reason}", result.verdict_address)
    if full.live or not _same_file(full.source, identity):
        raise _changed(source)
    if request.at is not None:
        check_at(request.at, facts.last_seq)
    boundary = request.at if request.at is not None else default_boundary(facts)
    plan, end = _plan(request, (full, facts), scan_arg, identity, boundary)
    body = result.body_offset
    encoding: Encoding = request.encoding or full.source.encoding
    parent_id = result.session_id
    assert parent_id is not None  # the dialect's planner refused a log without a session id
    target, layout, directory = _target(
        request, source, full.dialect, (parent_id, plan.child_id or ""), plan.version, encoding == "zstd",
        full.source.encoding,
    )  # fmt: skip
    report = ForkReport(
        source=full,
        source_sha256=digest.hexdigest(),
        source_sha256_after=None,
        plan=plan,
        boundary_chosen="at" if request.at is not None else "default",
        target=target,
        layout=layout,
        encoding=encoding,
        created_directory=None,
        seed_bytes=end - body,
        published=None,
        dry_run=request.dry_run,
        target_exists=False,
    )
    check_publication_name(target, plan.version, encoding == "zstd")  # never mislabelled or mixed
    if request.dry_run:
        if directory is None:
            with _target_session_lock(target.parent):
                pass  # a dry run is refused like the real one: a live target directory is exit 5
        return replace(report, target_exists=exists(target) or (directory is not None and exists(directory)))
    return _publish(request, report, (source, identity), (body, end), directory, progress)


def _at_boundary(
    full: tuple[ScanReport, BoundaryFacts], scan_arg: str | Path, limits: ReadLimits, boundary: int
) -> tuple[ScanReport, BoundaryFacts]:
    """The source folded up to and including ``boundary``. When the boundary is the full scan's
    last committed event, that scan folded exactly the same events, so it is the answer (no
    second read; tests/cli/test_fork_passes.py compares both ways on every fixture); otherwise
    a scan with ``at_seq`` that stops at the boundary."""
    if boundary == full[1].last_seq:
        return full
    return _scan(scan_arg, ScanOptions(at_seq=boundary), limits)


def _plan(
    request: ForkRequest,
    scanned: tuple[ScanReport, BoundaryFacts],
    scan_arg: str | Path,
    identity: FileIdentity,
    boundary: int,
) -> tuple[ForkPlan, int]:
    """Fold the source up to the boundary (``_at_boundary``) and ask the dialect for the plan;
    returns it with the plaintext offset where the seed's bytes end."""
    full = scanned[0]
    at_scan, at_facts = _at_boundary(scanned, scan_arg, request.limits, boundary)
    state = at_scan.scan.open
    if not _same_file(at_scan.source, identity):
        raise _changed(Path(full.source.display))
    if state.last_seq != boundary:
        raise InputError(
            f"reading up to seq {boundary} ended at seq {state.last_seq}", Address(full.source.display)
        )
    result = full.scan
    fork_input = ForkInput(
        source=result,
        at=at_scan.scan,
        boundary=boundary,
        child_id=request.child_id if request.child_id is not None else full.dialect.new_child_id(now_ms()),
        created_at=request.created_at if request.created_at is not None else now_ms(),
        seed_ends_with_end_seed=at_facts.last_end_seed == boundary,
    )
    try:
        plan = full.dialect.plan_fork(fork_input)
    except InsideOpenTurn as err:
        raise _nearest_boundaries(err, scan_arg, request.limits, boundary) from None
    check_split_row(at_facts, boundary)
    body = result.body_offset or 0
    end = at_scan.scan.stop_offset if at_scan.scan.stop_offset is not None else result.tail.committed_bytes
    if not body <= end:
        raise InputError(f"the seed's bytes end at {end}, before the body starts at {body}")
    return plan, end


def _publish(
    request: ForkRequest,
    report: ForkReport,
    source: tuple[Path, FileIdentity],
    span: tuple[int, int],
    directory: Path | None,
    progress: Progress | None = None,
) -> ForkReport:
    """Write the child (in a new session directory when it goes into a root layout)."""
    path, identity = source
    full = report.source
    writer = _ChildWriter(
        report.plan,
        path,
        identity,
        report.source_sha256,
        span,
        (full.source.encoding, report.encoding),
        request.limits,
        full.dialect,
        progress,
    )
    if directory is not None:
        create_directory(directory, 0o700)
    try:
        with _target_session_lock(report.target.parent if directory is None else None):
            produce, verify = phased(progress, writer.produce, writer.verify)
            published = publish(report.target, produce, verify=verify, source=path, source_identity=identity)
    except BaseException:
        if directory is not None:
            remove_created_directory(directory)
        raise
    return replace(
        report, source_sha256_after=writer.sha_after, created_directory=directory, published=published
    )


@contextmanager
def _target_session_lock(directory: Path | None) -> Iterator[None]:
    """A child published into an existing session directory follows that directory's liveness
    protocol (DESIGN §5, docs/format.md "Fork into a session directory"): an existing
    ``session.lock`` is taken and held while publishing — held by another process, the fork is
    refused as live (exit 5). A fork never creates the lock file (the child is another session's
    file; a dry run writes nothing) and never deletes it. Elsewhere there is no protocol."""
    if directory is None or not is_session_dir(directory, for_write=True):
        yield
        return
    with session_lock(directory, create=False):
        yield


class _ChildWriter:
    """Produces the child's bytes — header line, the seed's lines (copied byte for byte, or
    through the plan's ``rewrite``), the appended records — and verifies the temporary file."""

    def __init__(
        self,
        plan: ForkPlan,
        source: Path,
        identity: FileIdentity,
        sha_before: str,
        span: tuple[int, int],
        encodings: tuple[Encoding, Encoding],
        limits: ReadLimits,
        dialect: Dialect,
        progress: Progress | None = None,
    ) -> None:
        self.progress = progress
        self.dialect = dialect
        self.plan = plan
        self.source = source
        self.identity = identity
        self.sha_before = sha_before
        self.body, self.end = span
        self.src_encoding, self.encoding = encodings
        self.zstd = self.encoding == "zstd"
        self.limits = limits
        # a headerless dialect (Claude Code) forks its lines only: no header line, no header frame
        self.header_line = dialect.encode_record(plan.header) if plan.header else b""
        # the marker and closers, encoded again on each walk from the scan's (maybe spilled)
        # waiting calls: never all held (issue 11 item 1)
        self.suffix = plan.appended.mapped(dialect.encode_record)
        self.suffix_size = sum(map(len, self.suffix))
        self.seed_size = self.end - self.body  # bytes of seed written (differs under a rewrite)
        self.plain_digest = ""  # of the whole plaintext written
        self.sha_after: str | None = None

    @property
    def plaintext_size(self) -> int:
        return len(self.header_line) + self.seed_size + self.suffix_size

    def _seed(self) -> Iterator[bytes]:
        pieces = plaintext_range(
            self.source,
            self.src_encoding,
            self.body,
            self.end,
            self.limits.max_window,
            identity=self.identity,
        )
        rewrite = self.plan.rewrite
        try:
            if rewrite is None:
                yield from pieces  # the seed records, byte for byte
                return
            splitter = LineSplitter(self.limits.max_line)
            for piece in pieces:
                for item in splitter.feed(piece):
                    if isinstance(item, PhysicalIssue):
                        raise WriteRefusedError(f"the seed does not read back: {item.message}")
                    yield b"".join(rewrite(line) + b"\n" for line in item[0])
        except SourceChanged:
            raise _changed(self.source) from None

    def produce(self, sink: Sink) -> None:
        """Write the child; its plaintext is hashed on a worker thread as it goes (issue 14: the
        digest overlaps the copy instead of adding to it)."""
        digest = hashlib.sha256()
        plain = DigestWorker(digest)
        try:
            self._write(sink, plain)
        finally:
            plain.close()
        self.plain_digest = digest.hexdigest()

    def _write(self, sink: Sink, plain: DigestWorker) -> None:
        plain.update(self.header_line)
        frame: FrameWriter | None = None
        if self.zstd and self.header_line:
            sink.write(compress_frame(self.header_line))  # frame 0: exactly the header (§9.2)
            frame = FrameWriter(sink)
            write = frame.write
        elif self.zstd:
            frame = FrameWriter(sink)
            write = frame.write
        else:
            sink.write(self.header_line)
            write = sink.write
        size = 0
        for piece in self._seed():
            plain.update(piece)
            size += len(piece)
            write(piece)
        for chunk in joined(self.suffix, _SUFFIX_CHUNK):
            plain.update(chunk)
            write(chunk)
        if frame is not None:
            frame.close()
        self.seed_size = size

    def _child_problems(self, report: ScanReport) -> list[str]:
        plan, child = self.plan, report.scan
        problems: list[str] = []
        if child.verdict != "clean":
            problems.append(f"verdict {child.verdict} ({child.verdict_reason}), expected clean")
        if plan.header and (child.header is None or child.header.raw != plan.header):
            problems.append("its header is not the planned one")
        problems.extend(self.dialect.fork_child_problems(child, plan))
        if child.body_offset != len(self.header_line):
            problems.append("the header is not exactly the first line")
        if report.read.plaintext_bytes != self.plaintext_size:
            problems.append(f"{report.read.plaintext_bytes} plaintext bytes, expected {self.plaintext_size}")
        frames = 2 if plan.header else 1
        if self.zstd and (report.read.encoding != "zstd" or report.read.frames != frames):
            problems.append(f"{report.read.frames} zstd frames, expected a header frame and one body frame")
        if not self.zstd and report.read.encoding != "raw":
            problems.append("it is not raw JSONL")
        return problems

    def verify(self, temp: Path) -> None:
        """One read of the temporary file: the rescan, whose batches are hashed on the way
        (``_PlaintextDigest``), while the source is hashed again beside it (``BackgroundDigest``).

        The whole plaintext's digest and size equal to what ``produce`` wrote (header line, seed
        pieces, suffix, in that order) mean the child's bytes at [len(header), len(header) +
        seed_size) are the seed pieces themselves, so a separate digest of that slice would
        check nothing more. That the seed pieces are the source's committed bytes rests on the
        source: read through ``plaintext_range`` under its identity, and its SHA-256 after the
        copy equal to the one the first scan took."""
        source = BackgroundDigest(self.source)
        plain = _PlaintextDigest()
        try:
            report = rescan(temp, self.dialect, self.limits, self.progress, tap=plain.tap)
        finally:
            read_back = plain.close()
            after = source.result()  # waits for the thread (and re-raises its OSError) either way
        first = first_error(report.scan.weighed)
        if first is not None:
            raise WriteRefusedError(
                f"verification failed: the new file has an error ({first.rule}: {first.message})"
            )
        problems = self._child_problems(report)
        if problems:
            raise WriteRefusedError("verification failed: " + "; ".join(problems))
        if read_back != (report.read.plaintext_bytes, self.plain_digest):
            raise WriteRefusedError(
                "verification failed: the new file's plaintext differs from what was written"
            )
        if after != self.sha_before:
            raise WriteRefusedError(
                f"source changed during the fork: {self.source} had SHA-256 {self.sha_before}, now "
                f"{after}; nothing was published"
            )
        self.sha_after = after


class _PlaintextDigest:
    """The SHA-256 of the plaintext a rescan reads, from the batches of lines it feeds the
    scanner (a ``run_scan`` tap), hashed on a worker thread. Each batch must start where the
    previous one ended: a byte the reader did not deliver as a line (a filler run, an
    over-long line, a torn tail) leaves a gap, and ``close`` then returns no digest, so what is
    hashed is every byte of the plaintext, in order, or the check fails."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._worker = DigestWorker(self._digest)
        self._size = 0
        self._gap = False

    def tap(self, batch: Batch, _dialect: Dialect) -> None:
        lines, offset = batch[0], batch[1]
        if offset != self._size:
            self._gap = True
        if lines:
            data = b"\n".join(lines) + b"\n"
            self._size = offset + len(data)
            self._worker.update(data)

    def close(self) -> tuple[int, str | None]:
        """(plaintext bytes hashed, their digest; None after a gap)."""
        self._worker.close()
        return self._size, None if self._gap else self._digest.hexdigest()
