"""fork: a child session from a prefix of a log (spec §8; DESIGN §3 "fork", §4).

Read the source twice — a full scan (verdict, last committed seq, default boundary) and a scan
up to the boundary (open state there, where the seed's bytes end) —, plan the child, then
publish header + the seed's plaintext copied byte for byte + end-seed marker (+ v4 closers).
Verification reads the new file back with the scanner and compares its plaintext with what
was meant to be written; the source's SHA-256 is taken before the first read and again just
before publication.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sesstool.core.encode import encode_record, encode_records
from sesstool.core.errors import (
    Address,
    InputError,
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
    plan_fork,
)
from sesstool.core.physical import Encoding
from sesstool.core.rules import Severity
from sesstool.core.scanner import ScanOptions
from sesstool.engine.scan import Progress, ScanReport, run_scan, scan_source
from sesstool.store.digest import sha256_file
from sesstool.store.framing import FrameWriter, compress_frame, copy_bytes, zstd_plaintext
from sesstool.store.generations import canonical_name, check_publication_name, generations, log_name
from sesstool.store.layout import dsh_session_dir, encode_session_id
from sesstool.store.liveness import session_lock
from sesstool.store.publish import (
    FileIdentity,
    Published,
    Sink,
    create_directory,
    publish,
    remove_created_directory,
)
from sesstool.store.source import ReadLimits, SourceInfo, open_source, regular_source, resolve

Layout = Literal["option", "dsh-root", "beside-source"]
_CHUNK = 1 << 20


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


def new_session_id() -> str:
    """A fresh, unique child id (the v0 store mints ``session-<n>``; a uuid cannot collide)."""
    return f"session-{uuid.uuid4().hex}"


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


# -- plaintext ranges ----------------------------------------------------------------------------


class _Forward:
    """Forward-only seeking over a sequential read-only stream (what ``open_source`` yields):
    a seek reads and discards up to the new position."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._pos = 0

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._stream.read(size)
        self._pos += len(data)
        return data

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0 or offset < self._pos:
            raise OSError("the source stream can only move forward")
        while self._pos < offset:
            if not self.read(min(_CHUNK, offset - self._pos)):
                break
        return self._pos


def _plaintext(
    path: Path, start: int, end: int, limits: ReadLimits, identity: FileIdentity | None = None
) -> Iterator[bytes]:
    """Plaintext bytes [start, end) of a raw or zstd log, in bounded pieces. With ``identity``
    the file must still be the one that was scanned."""
    with open_source(path) as (stream, info):
        if identity is not None and not _same_file(info, identity):
            raise _changed(path)
        forward: Any = _Forward(stream)
        if info.encoding == "raw":
            yield from copy_bytes(forward, start, end)
            return
        skip = start
        for piece in zstd_plaintext(forward, 0, 0, end, limits.max_window):
            if skip >= len(piece):
                skip -= len(piece)
                continue
            yield piece[skip:] if skip else piece
            skip = 0


# -- where the child goes ------------------------------------------------------------------------


def _target(
    request: ForkRequest, source: Path, parent_id: str, child_id: str, version: int, zstd: bool, src: Encoding
) -> tuple[Path, Layout, Path | None]:
    """(file, layout, session directory to create). ``-o`` wins; a source in a dsh root gets a
    sibling session directory; anything else a file beside the source. Ids only ever become one
    encoded path component (§2.2)."""
    if request.output is not None:
        return Path(request.output), "option", None
    encoded_child = encode_session_id(child_id)
    layout = dsh_session_dir(source)
    if layout is not None and source.parent.name == encode_session_id(parent_id):
        _, project_dir = layout
        if request.encoding is not None and request.encoding != src:
            raise UsageError(
                f"--encoding {request.encoding}: the source sits in a dsh root of {src} logs, and a "
                "root is single-encoding (spec §9.2); write elsewhere with -o PATH"
            )
        directory = project_dir / encoded_child
        return directory / canonical_name(version, zstd), "dsh-root", directory
    return source.parent / log_name(encoded_child, zstd), "beside-source", None


# -- the command ---------------------------------------------------------------------------------


def run_fork(request: ForkRequest, progress: Progress | None = None) -> ForkReport:
    """Plan (and unless dry-run, publish) the fork. Raises UsageError (2), InputError (3),
    UnsupportedError (4), LiveSessionError (5) or WriteRefusedError (6)."""
    if request.path == "-":
        raise UsageError("fork needs a session file or directory, not standard input")
    if request.child_id is not None and request.child_id == "":
        raise UsageError("--id must not be empty")
    try:
        regular_source(request.path)  # FIFOs and devices refused, OSErrors named (exit 3)
        source, from_dir = resolve(request.path)
        identity = FileIdentity.of_path(source)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"{request.path}: no such file or directory") from None
    except OSError as err:
        raise InputError(f"{request.path}: cannot read: {err.strerror or err}") from None
    scan_arg: str | Path = source if from_dir else request.path
    limits = request.limits

    digest = hashlib.sha256()  # fed by the scan itself: the source is read once
    full, facts = _scan(scan_arg, ScanOptions(), limits, progress, digest)
    sha_before = digest.hexdigest()
    result = full.scan
    if result.verdict == "unsupported":
        raise UnsupportedError(f"cannot fork: {result.verdict_reason}", result.verdict_address)
    if result.verdict == "corrupt":
        raise InputError(f"cannot fork a corrupt log: {result.verdict_reason}", result.verdict_address)
    header = result.header
    if header is None or result.version is None or result.body_offset is None:
        raise InputError(f"cannot fork: {result.verdict_reason}", result.verdict_address)
    if full.live or not _same_file(full.source, identity):
        raise _changed(source)

    if request.at is not None:
        check_at(request.at, facts.last_seq)
        boundary = request.at
    else:
        boundary = default_boundary(facts)

    at_scan, at_facts = _scan(scan_arg, ScanOptions(at_seq=boundary), limits)
    state = at_scan.scan.open
    if not _same_file(at_scan.source, identity):
        raise _changed(source)
    if state.last_seq != boundary:
        raise InputError(
            f"reading up to seq {boundary} ended at seq {state.last_seq}", Address(full.source.display)
        )
    child_id = request.child_id if request.child_id is not None else new_session_id()
    created_at = request.created_at if request.created_at is not None else now_ms()
    plan = plan_fork(
        header,
        boundary,
        state,
        child_id=child_id,
        created_at=created_at,
        seed_ends_with_end_seed=at_facts.last_end_seed == boundary,
        path=full.source.display,
        dialect=result.dialect,
    )
    check_split_row(at_facts, boundary)
    body = result.body_offset
    end = at_scan.scan.stop_offset if at_scan.scan.stop_offset is not None else result.tail.committed_bytes
    if not body <= end:
        raise InputError(f"the seed's bytes end at {end}, before the body starts at {body}")

    src_encoding = full.source.encoding
    encoding: Encoding = request.encoding or src_encoding
    zstd = encoding == "zstd"
    assert header.id is not None  # plan_fork refused a header without an id
    target, layout, directory = _target(
        request, source, header.id, child_id, plan.version, zstd, src_encoding
    )

    check_publication_name(target, plan.version, zstd)  # never a mislabelled or mixed directory
    chosen: Literal["at", "default"] = "at" if request.at is not None else "default"
    if request.dry_run:
        if directory is None:
            with _target_session_lock(target.parent):
                pass  # a dry run is refused like the real one: a live target directory is exit 5
        exists = target.exists() or (directory is not None and directory.exists())
        return ForkReport(
            source=full,
            source_sha256=sha_before,
            source_sha256_after=None,
            plan=plan,
            boundary_chosen=chosen,
            target=target,
            layout=layout,
            encoding=encoding,
            created_directory=None,
            seed_bytes=end - body,
            published=None,
            dry_run=True,
            target_exists=exists,
        )

    writer = _ChildWriter(plan, source, identity, sha_before, body, end, zstd, limits, result.dialect)
    created: Path | None = None
    if directory is not None:
        create_directory(directory, 0o700)
        created = directory
    try:
        with _target_session_lock(target.parent if directory is None else None):
            published = publish(
                target, writer.produce, verify=writer.verify, source=source, source_identity=identity
            )
    except BaseException:
        if created is not None:
            remove_created_directory(created)
        raise
    return ForkReport(
        source=full,
        source_sha256=sha_before,
        source_sha256_after=writer.sha_after,
        plan=plan,
        boundary_chosen=chosen,
        target=target,
        layout=layout,
        encoding=encoding,
        created_directory=created,
        seed_bytes=end - body,
        published=published,
        dry_run=False,
        target_exists=False,
    )


@contextmanager
def _target_session_lock(directory: Path | None) -> Iterator[None]:
    """A child published into an existing session directory follows that directory's liveness
    protocol (DESIGN §5, docs/format.md "Fork into a session directory"): an existing
    ``session.lock`` is taken and held while publishing — held by another process, the fork is
    refused as live (exit 5). A fork never creates the lock file (the child is another session's
    file; a dry run writes nothing) and never deletes it. Elsewhere there is no protocol."""
    try:
        in_session_dir = directory is not None and bool(generations(directory))
    except FileNotFoundError:
        in_session_dir = False
    except OSError as err:
        raise WriteRefusedError(f"{directory}: cannot list the target directory: {err.strerror}") from None
    if not in_session_dir:
        yield
        return
    assert directory is not None
    with session_lock(directory, create=False):
        yield


class _ChildWriter:
    """Produces the child's bytes and verifies the temporary file against them."""

    def __init__(
        self,
        plan: ForkPlan,
        source: Path,
        identity: FileIdentity,
        sha_before: str,
        body: int,
        end: int,
        zstd: bool,
        limits: ReadLimits,
        dialect: str = "dsh",
    ) -> None:
        self.dialect = dialect
        self.plan = plan
        self.source = source
        self.identity = identity
        self.sha_before = sha_before
        self.body = body
        self.end = end
        self.zstd = zstd
        self.limits = limits
        self.header_line = encode_record(plan.header)
        self.suffix = encode_records(plan.appended)
        self.seed_digest = ""  # of the source bytes actually copied
        self.plain_digest = ""  # of the whole plaintext written
        self.sha_after: str | None = None

    @property
    def plaintext_size(self) -> int:
        return len(self.header_line) + (self.end - self.body) + len(self.suffix)

    def produce(self, sink: Sink) -> None:
        seed = hashlib.sha256()
        plain = hashlib.sha256(self.header_line)
        frame: FrameWriter | None = None
        if self.zstd:
            sink.write(compress_frame(self.header_line))  # frame 0: exactly the header (§9.2)
            frame = FrameWriter(sink)
            write = frame.write
        else:
            sink.write(self.header_line)
            write = sink.write
        for piece in _plaintext(self.source, self.body, self.end, self.limits, self.identity):
            seed.update(piece)
            plain.update(piece)
            write(piece)  # the seed records, byte for byte
        plain.update(self.suffix)
        write(self.suffix)
        if frame is not None:
            frame.close()
        self.seed_digest = seed.hexdigest()
        self.plain_digest = plain.hexdigest()

    def verify(self, temp: Path) -> None:
        plan = self.plan
        report = scan_source(temp, ScanOptions(), self.limits)
        child = report.scan
        errors = [f for f in child.findings if f.severity is Severity.ERROR]
        if errors:
            first = errors[0]
            raise WriteRefusedError(
                f"verification failed: the new file has an error ({first.rule}: {first.message})"
            )
        problems: list[str] = []
        if child.verdict != "clean":
            problems.append(f"verdict {child.verdict} ({child.verdict_reason}), expected clean")
        if child.version != plan.version:
            problems.append(f"version {child.version}, expected {plan.version}")
        if child.header is None or child.header.raw != plan.header:
            problems.append("its header is not the planned one")
        if child.stats.events != plan.events:
            problems.append(f"{child.stats.events} events, expected {plan.events}")
        lineage = child.stats.lineage
        if self.dialect == "mini":
            if child.header is None or child.header.parent_session != plan.header["data"].get(
                "parentSession"
            ):
                problems.append("the child header does not record its parent")
        elif not lineage.seeded or lineage.inherited_events != plan.inherited:
            problems.append(
                f"lineage seeded={lineage.seeded} inherited={lineage.inherited_events}, "
                f"expected seeded with {plan.inherited} inherited events"
            )
        if child.body_offset != len(self.header_line):
            problems.append("the header is not exactly the first line")
        if report.read.plaintext_bytes != self.plaintext_size:
            problems.append(f"{report.read.plaintext_bytes} plaintext bytes, expected {self.plaintext_size}")
        if self.zstd and (report.read.encoding != "zstd" or report.read.frames != 2):
            problems.append(f"{report.read.frames} zstd frames, expected a header frame and one body frame")
        if not self.zstd and report.read.encoding != "raw":
            problems.append("it is not raw JSONL")
        if problems:
            raise WriteRefusedError("verification failed: " + "; ".join(problems))
        seed = hashlib.sha256()
        plain = hashlib.sha256()
        seed_start, seed_end = len(self.header_line), len(self.header_line) + (self.end - self.body)
        position = 0
        for piece in _plaintext(temp, 0, self.plaintext_size, self.limits):
            plain.update(piece)
            lo, hi = max(seed_start - position, 0), min(seed_end - position, len(piece))
            if lo < hi:
                seed.update(piece[lo:hi])
            position += len(piece)
        if seed.hexdigest() != self.seed_digest:
            raise WriteRefusedError("verification failed: the seed records differ from the source's bytes")
        if plain.hexdigest() != self.plain_digest:
            raise WriteRefusedError(
                "verification failed: the new file's plaintext differs from what was written"
            )
        after = sha256_file(self.source)
        if after != self.sha_before:
            raise WriteRefusedError(
                f"source changed during the fork: {self.source} had SHA-256 {self.sha_before}, now "
                f"{after}; nothing was published"
            )
        self.sha_after = after
