"""The dialect contract: what one log dialect supplies, and what the engine does with it.

A dialect is one object (a ``Dialect`` subclass instance) in its own package
``sesstool/dialects/<name>/``, listed once in ``sesstool/dialects/registry.py``. The engine and the
renderers only ever talk to it through the methods below; no module outside the dialect packages
and the registry compares a dialect name. See docs/architecture.md "Adding a dialect".

Two kinds of dialect exist:

* an *envelope* dialect (dsh, mini, the test-only toy) writes ``{type, seq, time, data}`` events
  and reuses the shared streaming scanner (``core.scanner.Scanner``): it subclasses
  ``dialects.envelope.EnvelopeDialect`` and supplies a header codec and one ``Profile`` per
  version (handlers, vocabulary, replace keys, time codec, pairing scope);
* any other dialect (Codex rollouts, Claude Code transcripts) subclasses ``Dialect`` directly and
  brings its own scanner implementing ``DialectScanner``: it is fed the same reader batches and
  physical issues and returns the same generic ``ScanResult``.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, Protocol

from sesstool.core.closer_list import walked_encodable
from sesstool.core.encode import encode_record
from sesstool.core.errors import UnsupportedError
from sesstool.core.fork_plan import ForkPlan
from sesstool.core.line_edit import LineEdit
from sesstool.core.model import ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch, FramingFact, PhysicalIssue, ReadSummary
from sesstool.core.rules import Rule
from sesstool.core.upgrade import Step, UpgradeRefused
from sesstool.store.generations import log_name, log_stem
from sesstool.store.layout import encode_session_id

if TYPE_CHECKING:  # an annotation only: a validate run never builds a timeline (start-up)
    from sesstool.core.timeline import SpanCollector

Cause = Literal["interrupted", "forked"]


class Row(NamedTuple):
    """One ``label  text`` line of the human ``inspect`` screen. ``text`` is raw (log text
    included): the renderer escapes it. A row with an empty label continues the one above."""

    label: str
    text: str
    style: str | None = None  # a rich style name ("yellow"), None for plain


@dataclass(frozen=True, slots=True)
class RootLayout:
    """Where a dialect's logs live; the store ring does the walking.

    ``suffixes`` are the file-name endings that make a file a log of this dialect when a
    directory is walked (``validate DIR`` keeps the files ending in any registered dialect's
    suffix, in any case). ``patterns`` are glob patterns relative to a root
    (``"--*--/*/session.v*.jsonl*"``, ``"sessions/*/*/*/rollout-*.jsonl*"``): a directory with
    files matching them is that dialect's root (``store.paths.classify_path``), listed by
    ``list ROOT`` / ``inspect ROOT``.
    """

    patterns: tuple[str, ...]
    suffixes: tuple[str, ...]


class LineEditor(Protocol):
    """An opt-in edit of committed lines (``repair --relink``), fed every committed line in file
    order: the line as it is to be written and the edit made to it (None: unchanged, the same
    bytes)."""

    def edit(self, line: bytes, lineno: int, offset: int) -> tuple[bytes, LineEdit | None]: ...


class DialectScanner(Protocol):
    """The streaming pass of one dialect over one log (the engine drives it).

    Fed in order with what the store's readers produce — batches ``(lines, first_offset,
    first_line, frame)`` and ``PhysicalIssue``s — then ``finish(summary)`` classifies the tail
    and returns the frozen, generic ``ScanResult``: verdict, verdict address and reason,
    findings (``core.rules.Finding`` with an ``Address``), tail (committed plaintext bytes,
    dropped bytes), version, and the dialect's own facts in ``ScanResult.facts``.
    """

    @property
    def stopped(self) -> bool:
        """Nothing more is wanted (--at reached, an unusable header): the engine stops reading."""
        ...

    @property
    def committed(self) -> int:
        """Plaintext offset just after the last committed line fed so far."""
        ...

    def feed(self, item: Batch | PhysicalIssue) -> None: ...

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None: ...

    def finish(self, summary: ReadSummary | None) -> ScanResult: ...

    def clean_so_far(self) -> bool:
        """No defect and no suspect record yet: every line fed up to ``committed`` is committed
        (a repair may copy the zstd frames that end there verbatim)."""
        ...

    def continuation(self) -> DialectScanner:
        """An independent copy in the state the committed prefix left, with no findings and no
        tail: the records a repair or fork appends are fed to it and must validate there."""
        ...


class EntryDerivation(Protocol):
    """derive streamed by entries (``Dialect.entry_derivation``): ``prepare`` makes a first,
    counting pass; ``messages`` then yields them (a new pass each call)."""

    def prepare(self) -> tuple[int, bool, tuple[str, ...] | None]:
        """(how many messages, whether one holds what orjson cannot encode, the best-effort notes
        — None: the dialect's ``derive_notes``)."""
        ...

    def messages(self) -> Iterator[Any]: ...


def counting_pass(messages: Iterable[Any], escaped: Callable[[], bool]) -> tuple[int, bool]:
    """``EntryDerivation.prepare``'s pass: how many messages, and whether one holds what orjson
    cannot encode (a lone surrogate: looked for only once ``escaped()`` says a line read so far
    held a ``\\u`` escape)."""
    count = 0
    unencodable = False
    for message in messages:
        count += 1
        if not unencodable and escaped():
            unencodable = not walked_encodable(message)  # a streamed content, one member at a time
    return count, unencodable


@dataclass(frozen=True, slots=True)
class ForkInput:
    """What the fork engine knows when it asks a dialect for a plan (spec §8 for dsh)."""

    source: ScanResult  # the full scan of the source
    at: ScanResult  # the scan folded up to and including ``boundary`` (``ScanOptions.at_seq``)
    boundary: int  # inclusive: the seed is seq 0..boundary
    child_id: str
    created_at: int  # epoch ms
    seed_ends_with_end_seed: bool


class Dialect(ABC):
    """One log dialect. Instances are stateless singletons; every method is pure (no I/O).

    The protocol, in the order a newcomer needs it (every hook but two has a working default):

    * **identity** (class attributes): ``name``, ``title``; the dialect's ``rules``
      (``core.rules.rule_table``), its files (``layout``) and layout facts (``header_frame``,
      ``has_steps``, ``current_version``).
    * **reading a log**: ``detect`` and ``scanner`` (required); ``framing_finding`` (the zstd
      frame layout's rule, if any); ``timeline`` (the report's collector).
    * **showing a scan**: ``inspect_rows``, ``inspect_body``, ``derived_message``,
      ``derive_notes``, ``derive_excludes``, ``list_facts``.
    * **side files** (default: none): ``companion_patterns`` (which files belong to a log),
      ``companion_rows`` / ``companion_body`` (how inspect sums them up).
    * **repair**: ``closers`` (what balances the log), ``encode_record``, ``describe_closer``,
      ``repaired_name``, ``refuse_default_output``, ``relinker`` (the opt-in link edit);
      ``skips_bad_lines`` /
      ``salvage_readable_from`` for a salvage that keeps every line the agent's loader reads.
    * **fork** (default: refused): ``plan_fork``, ``fork_child_problems``, the child's
      ``new_child_id`` / ``child_name`` / ``root_child``, and the fork screen's two notes.
    * **migrate** (default: no chain): ``upgrade_chain``, ``encode_header``.

    An envelope dialect (``dialects.envelope.EnvelopeDialect``) gets ``scanner``, ``timeline``,
    the inspect views and the fork checks, and supplies a header codec and a ``Profile`` instead.
    """

    name: ClassVar[str]  # "dsh", "mini": what ``--dialect NAME`` and the JSON documents say
    title: ClassVar[str]  # human name ("DeepSeek Harness")
    current_version: ClassVar[int | None] = None  # newest version ``migrate`` writes; None: no chain
    header_frame: ClassVar[bool] = False  # zstd: the first frame holds exactly the header line
    has_steps: ClassVar[bool] = False  # pending calls belong to a step (shown as "(step N)")
    layout: ClassVar[RootLayout] = RootLayout((), (".jsonl", ".jsonl.zst", ".jsonl.zstd"))
    rules: ClassVar[tuple[Rule, ...]] = ()  # the dialect's own rules (ids unique across dialects)
    derives_by_address: ClassVar[bool] = False  # derive streams by address (``derived_message``)
    derives_by_entries: ClassVar[bool] = False  # derive reads entries by line (``entry_derivation``)

    # -- reading a log: detect and scanner are required --------------------------------------------

    @abstractmethod
    def detect(self, first: Any) -> float:
        """How sure this dialect is that a log whose first decoded record is ``first`` is its
        own: 0 (no) to 1 (certain). ``first`` may be any JSON value. The registry picks the
        highest score; when every score is 0 the default dialect reads the log."""

    def claims_name(self, name: str) -> bool:
        """Whether a file called ``name`` can only be this dialect's log (Codex: a rollout's
        name): what reads a file without a record to detect by, an empty one. [False]"""
        return False

    @abstractmethod
    def scanner(self, path: str, options: ScanOptions) -> DialectScanner:
        """A fresh scanner for one log (``path`` is only used in addresses)."""

    def framing_finding(self, fact: FramingFact, one_frame: bool) -> tuple[str, str] | None:
        """``(rule, message)`` when the zstd reader's ``fact`` about frame 0 breaks this dialect's
        layout (dsh §9.2: frame 0 is the header line alone), judged once the reading has left
        frame 0; ``one_frame``: that frame was the whole log. None: no such rule (the default)."""
        return None

    def rewrites_framing(self, scan: ScanResult) -> bool:
        """The zstd framing of the scanned log is not this dialect's own but one it reads (dsh: a
        single frame written by a generic compressor, §9.2), so a write (repair, migrate) writes
        it anew in the dialect's framing and inspect says so. False: nothing to rewrite (the
        default)."""
        return False

    def timeline(self, head: int, tail: int) -> SpanCollector | None:
        """A collector of the report's timeline (turns, steps, tool calls in time), fed the same
        batches as the scanner and keeping at most ``head`` + ``tail`` closed spans; None: this
        dialect draws no timeline (the report still shows verdict, findings, conversation)."""
        return None

    # -- showing a scan (inspect, derive, list) ----------------------------------------------------

    def inspect_rows(self, scan: ScanResult) -> Iterable[Row]:
        """The dialect's rows of the ``inspect`` screen (between ``file`` and ``findings``), walked
        once as they are printed (a row per waiting call may be made as it is walked)."""
        return ()

    def inspect_body(self, scan: ScanResult) -> dict[str, Any]:
        """The dialect's members of the ``inspect --json`` document (after ``verdict``, before
        ``tail``)."""
        return {}

    def derived_message(self, record: dict[str, Any], scan: ScanResult) -> Any:
        """derive streamed by address (``ScanOptions.message_addresses``, issue 14): the message
        the scan projected from the surface ``record`` it kept the line offset of. Only asked of
        a dialect whose scanner keeps addresses (``derives_by_address``)."""
        raise NotImplementedError(f"{self.name} keeps derived messages, not their addresses")

    def entry_derivation(self, scan: ScanResult, read: Callable[[int], bytes]) -> EntryDerivation:
        """derive streamed by entries (issue 11 item 1): the messages of a scan that kept the
        plaintext offset of its lines (``ScanOptions.message_addresses``), built from the lines
        ``read(offset)`` returns. Only asked of a dialect with ``derives_by_entries``."""
        raise NotImplementedError(f"{self.name} does not derive by entries")

    def derive_notes(self, scan: ScanResult) -> tuple[str, ...]:
        """What ``derive`` cannot promise about its messages (shown, and in ``--format json`` as
        ``best_effort``, only when there is something to say)."""
        return ()

    def derive_excludes(self) -> tuple[str, ...]:
        """What ``derive`` leaves out of what the agent would send because the agent builds it
        from configuration rather than from the log (shown with the derived messages)."""
        return ()

    def list_facts(self, scan: ScanResult) -> dict[str, str | None]:
        """``cwd`` and ``last_time`` of a log for ``sesstool list`` (absent: unknown)."""
        return {}

    # -- side files (optional: by default a log stands alone) ---------------------------------------

    companion_label: ClassVar[str] = "side file"  # the inspect rows' label for one of them

    def companion_patterns(self, path: str) -> tuple[str, ...]:
        """Globs, relative to the directory of the log at ``path``, of the side files that belong
        to it (Claude Code: its subagents' transcripts): ``inspect`` shows them with the log and
        ``validate`` reads them with it. Names only; none by default."""
        return ()

    def companion_rows(self, companions: tuple[tuple[str, ScanResult], ...]) -> tuple[Row, ...]:
        """The ``inspect`` rows summing up the side files read with a log, given as (name, scan):
        one row per file, after the dialect's own rows."""
        return ()

    def companion_body(self, scan: ScanResult) -> dict[str, Any]:
        """One side file's members of ``inspect --json``'s ``companions`` list (beside its path,
        verdict and findings)."""
        return {}

    sidecar_label: ClassVar[str] = "sidecar"  # the inspect row's label for a log's sidecar

    def sidecar_name(self, path: str) -> str | None:
        """The name, in the directory of the log at ``path``, of a small JSON document beside it
        that describes it (Claude Code: a subagent's ``agent-<id>.meta.json``); ``inspect``
        reads it (``store.sidecar``) and shows it with the log or side file. None by default."""
        return None

    def sidecar_text(self, content: dict[str, Any]) -> str:
        """One line summing up a sidecar that was read (``inspect``'s row after the file name);
        ``inspect --json`` carries the whole object."""
        return ", ".join(sorted(content))

    # -- repair ------------------------------------------------------------------------------------

    def closers(self, scan: ScanResult, cause: Cause = "interrupted") -> Collection[dict[str, Any]]:
        """The records a repair appends after the committed prefix to balance ``scan``, in order
        (empty: nothing to append). Re-iterable and sized; a dialect whose log may wait on any
        number of calls makes them as they are walked (``core.closer_list.Closers``): a consumer
        only iterates, never holds them (issue 11 item 1)."""
        return []

    def encode_record(self, record: dict[str, Any]) -> bytes:
        """One new record as the dialect's writer would write it, ``\\n``-terminated."""
        return encode_record(record)

    def describe_closer(self, record: dict[str, Any]) -> str:
        """One raw line describing a closer (``inspect``, ``repair --dry-run``)."""
        return self.encode_record(record)[:-1].decode("utf-8", "replace")

    def salvage_readable_from(self, line: bytes) -> int | None:
        """For a dialect whose own loader skips the lines it cannot decode and reads on: where
        the readable part of ``line`` begins (0: all of it), None when nothing in it is. Then
        ``repair --salvage`` keeps every line the loader reads and drops only the others
        (``engine.line_salvage``). The default, None, is the dsh rule: a defect in the
        committed region ends what is kept (DESIGN §1.3)."""
        return None

    skips_bad_lines: ClassVar[bool] = False  # True: salvage through ``salvage_readable_from``

    def repaired_name(self, source_name: str, zstd: bool) -> str:
        """File name of a repaired log beside its source (DESIGN §3: ``session.jsonl.zstd`` →
        ``session.repaired.jsonl.zstd``)."""
        return log_name(f"{log_stem(source_name)}.repaired", zstd)

    def relinker(self, scan: ScanResult) -> Callable[[], LineEditor] | None:
        """``repair --relink``: a maker of fresh editors that re-point the broken parent links
        ``scan`` found (each pass over the lines gets a new one), or None when none is broken.
        A dialect whose entries have no parent links refuses (exit 4)."""
        raise UnsupportedError(
            f"sesstool cannot relink {self.title} logs: their entries have no parent links"
        )

    def refuse_default_output(self, source: Path) -> str | None:
        """Why ``repair`` / ``fork`` without ``-o`` must not write beside ``source`` (None: they
        may). Claude Code: never into a live ``projects/`` directory unless asked."""
        return None

    # -- fork (optional: by default the dialect refuses) -------------------------------------------

    def plan_fork(self, request: ForkInput) -> ForkPlan:
        """The child's header, appended records and seed rewrite; a dialect that cannot fork
        refuses (``UnsupportedError``, exit 4)."""
        raise UnsupportedError(f"sesstool cannot fork {self.title} logs")

    def fork_child_problems(self, child: ScanResult, plan: ForkPlan) -> list[str]:
        """What is wrong with the written child (its rescan), beyond the generic checks of the
        fork verification (clean verdict, header, event count, bytes)."""
        return []

    def new_child_id(self, created_at: int) -> str:
        """A fresh, unique child id when ``fork`` is not given ``--id`` (``created_at`` in ms)."""
        return f"session-{uuid.uuid4().hex}"

    def child_name(self, child_id: str, zstd: bool) -> str:
        """File name of a forked child written beside its source (the id as one safe path
        component, spec §2.2 encoding)."""
        return log_name(encode_session_id(child_id), zstd)

    def root_child(
        self, source: Path, parent_id: str, child_id: str, version: int, zstd: bool
    ) -> tuple[Path, Path | None] | None:
        """(child file, session directory to create) when ``source`` sits in this dialect's
        root layout as the session ``parent_id``; None otherwise (the child goes beside it)."""
        return None

    def fork_marker_note(self, plan: ForkPlan) -> str:
        """What ``fork`` shows when the plan appends no seed marker."""
        return "none"

    def fork_rewrite_note(self, plan: ForkPlan) -> str:
        """What a plan's per-line ``rewrite`` changes in the copied lines (fork's screen)."""
        return "every copied line goes through the dialect's rewrite"

    # -- migrate (optional: by default there is no upgrade chain) ----------------------------------

    def upgrade_chain(self, source: int, target: int) -> list[Step]:
        """The steps from ``source`` to ``target`` (spec §1.3 for dsh); none by default."""
        raise UpgradeRefused(f"{self.name}-format", source, "this dialect has no upgrade chain")

    def encode_header(self, header: dict[str, Any]) -> bytes:
        """The (upgraded) header record as a line."""
        return encode_record(header)
