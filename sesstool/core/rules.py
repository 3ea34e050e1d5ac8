"""The rule registry: every finding sesstool can report, with a stable id and a default severity.

Rule ids are a public interface (CI output, docs/rules.md); never rename one. ``verdict`` is the
verdict an error-level finding of that rule implies (spec §1.4: unsupported is never corrupt).
"""

from __future__ import annotations

import enum
import textwrap
from dataclasses import dataclass
from typing import Literal, get_args

from sesstool.core.errors import Address
from sesstool.core.humanize import MESSAGE_CHARS, bounded_message


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


VerdictClass = Literal["corrupt", "unsupported", "torn", "interrupted", "none"]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    section: str
    title: str
    verdict: VerdictClass = "corrupt"
    fix: str = ""  # what to do about a finding, where the verdict's usual remedy does not fit


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding. Its message is at most ``MESSAGE_CHARS`` characters and its length
    (``humanize.bounded_message``): a message that quotes a value the log chose quotes it cut
    (``chosen``, ``chosen_repr``), and this holds the findings kept bounded where one does not."""

    rule: str
    severity: Severity
    message: str
    address: Address

    def __post_init__(self) -> None:
        if len(self.message) > MESSAGE_CHARS:
            object.__setattr__(self, "message", bounded_message(self.message))


E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

_RULES: tuple[Rule, ...] = (
    # -- physical layer (§6.3, §9) ------------------------------------------------------------
    Rule("empty-file", E, "§6.3", "file is empty: no header record"),
    Rule("missing-header", E, "§2", "no complete header record"),
    Rule("torn-tail", W, "§6.3", "final record has no newline: a torn, uncommitted tail", "torn"),
    Rule(
        "uncommitted-tail",
        W,
        "§6.3",
        "bad record with no later turn/end: the rest is an uncommitted tail",
        "torn",
    ),
    Rule("line-too-long", E, "§6.3", "line longer than the configured limit"),
    Rule("invalid-utf8", E, "§9.1", "line is not valid UTF-8"),
    Rule("invalid-json", E, "§9.1", "line is not valid JSON"),
    Rule("bom", E, "§9.1", "byte order mark before a record"),
    Rule("nul-bytes", E, "§6.3", "run of NUL bytes where a record should be"),
    Rule("depth-limit", E, "§3", "JSON nested deeper than the limit"),
    Rule("not-an-object", E, "§3", "record is valid JSON but not an object"),
    Rule("duplicate-key", W, "§3", "an object repeats a key (decoders keep the last; --strict)"),
    Rule(
        "unsafe-integer",
        W,
        "§3",
        "an integer beyond ±(2^53−1): a JavaScript reader (the harness) keeps only its nearest double",
        "none",
    ),
    Rule("zstd-bad-magic", E, "§9.2", "bytes where a zstd frame should start are not zstd"),
    Rule("zstd-skippable-frame", E, "§9.2", "skippable zstd frame (not accepted in session logs)"),
    Rule("zstd-reserved-bit", E, "§9.2", "zstd frame header reserved bit set"),
    Rule("zstd-reserved-block", E, "§9.2", "zstd block of the reserved type"),
    Rule("zstd-window-too-large", E, "§9.2", "zstd frame window larger than the allowed maximum"),
    Rule("zstd-checksum", E, "§9.2", "zstd frame content checksum mismatch"),
    Rule("zstd-decode-error", E, "§9.2", "zstd frame fails to decompress"),
    Rule("zstd-budget-exceeded", E, "§9.2", "decompressed size over the budget (zstd bomb?)"),
    Rule("zstd-header-frame", E, "§9.2", "first zstd frame is not exactly the header line"),
    Rule(
        "zstd-single-frame",
        W,
        "§9.2",
        "the whole log is one zstd frame (a generic compressor's layout): the harness refuses it",
        "none",
        "`sesstool repair PATH` writes a copy in the harness's framing (the header line alone in "
        "frame 0, then the body); the records are read as they are meanwhile.",
    ),
    Rule("zstd-frame-boundary", E, "§6.3", "complete zstd frames do not end on a record boundary"),
    Rule("zstd-no-checksum", W, "§9.2", "zstd frame written without a content checksum"),
    Rule("zstd-torn-frame", W, "§7.4", "last zstd frame cut by EOF: a torn tail", "torn"),
    # -- header (§2) ---------------------------------------------------------------------------
    Rule("header-invalid", E, "§2.2", "header record is malformed"),
    Rule("header-field", E, "§2.2", "header field has the wrong type or value"),
    Rule("header-unknown-key", E, "§2.2", "header carries a key its version does not allow"),
    Rule("header-retired-key", E, "§2.2", "header uses retired policy baseline fields"),
    Rule(
        "header-newer-version", E, "§1.4", "log written by a newer harness than sesstool reads", "unsupported"
    ),
    Rule(
        "header-older-version", E, "§1.4", "log format older than any version sesstool reads", "unsupported"
    ),
    Rule(
        "header-filename-version",
        E,
        "§10.2, §1.4",
        "file name and header disagree on the version",
        "unsupported",
    ),
    Rule("header-seed-length", E, "§2.2", "seedLength exceeds the number of events"),
    Rule("header-is-seeded", E, "§2.2", "isSeeded disagrees with the inherited end-seed marker"),
    Rule("header-not-first", E, "§2, §6.3", "a header record after the first line"),
    # -- envelope (§3) -------------------------------------------------------------------------
    Rule("envelope-key", E, "§3", "event carries a top-level key that does not belong"),
    Rule("envelope-type", E, "§3", "event type missing or not a string"),
    Rule("envelope-seq", E, "§3", "seq missing or not a non-negative safe integer"),
    Rule("envelope-time", E, "§3", "time missing or not a safe integer"),
    Rule("envelope-data", E, "§3", "event has no data"),
    Rule("envelope-ignorable", E, "§3", "ignorable must be absent or exactly true"),
    Rule("seq-gap", E, "§3", "seq is not contiguous"),
    Rule("surface-op-missing", E, "§3", "surface event without surfaceOp"),
    Rule("surface-op-shape", E, "§3", "surfaceOp is not 'append' or a valid replace object"),
    Rule(
        "surface-meta-on-log-only",
        E,
        "§3",
        "surfaceOp/sourceEventSeqs on an event that is not a surface event",
    ),
    Rule(
        "source-seqs-shape",
        E,
        "§3, §9.4",
        "sourceEventSeqs not unique non-negative integers below the event's seq",
    ),
    Rule("source-seqs-forbidden", E, "§3", "assistant/message carries sourceEventSeqs (v3+)"),
    Rule("source-seqs-assistant-v2", W, "§1.2", "v2 assistant/message carries sourceEventSeqs"),
    # -- vocabulary (§1.4, §4) ------------------------------------------------------------------
    Rule("unknown-event-type", E, "§1.4", "event type unknown and not marked ignorable", "unsupported"),
    Rule("unknown-ignorable-event", N, "§1.4", "unknown event type marked ignorable (kept opaque)"),
    Rule("retired-event-type", E, "§1.3, §6.1", "retired event type this version refuses"),
    Rule(
        "version-event-type",
        E,
        "§1.2, §1.4",
        "event type does not exist in this format version",
        "unsupported",
    ),
    Rule(
        "message-projection-event",
        E,
        "§4.6",
        "image/offload needs a plugin interpreter sesstool does not have",
        "unsupported",
    ),
    Rule("packed-row", E, "§9.3", "malformed packed chunk row"),
    Rule("stream-record", E, "§4.5", "malformed embedded assistant stream record"),
    # -- message shapes (§4.3, §6.1) -----------------------------------------------------------
    Rule("event-data", E, "§4.1", "event data has the wrong shape"),
    Rule(
        "tolerated-shape",
        W,
        "§4.1",
        "a v0 payload shape the spec forbids but the published v0 reader loads: reported, and "
        "the verdict stays the reader's (docs/format.md, read-path mutations)",
    ),
    Rule("message-shape", E, "§4.3, §6.1", "message lacks id, role, content or source"),
    Rule("message-role", E, "§6.1", "message role does not match its event type"),
    Rule("assistant-source", E, "§6.1", "assistant message source is not a model with provider/model"),
    Rule("tool-result-shape", E, "§4.3, §6.1", "tool result message is malformed"),
    Rule("tool-result-error-flag", E, "§1.3", "tool/result has error but isError is not true (v3+)"),
    Rule("request-header", E, "§6.1", "request/header envelope is malformed"),
    Rule("request-context", E, "§4.1", "request/context is malformed"),
    # -- projection (§5) -----------------------------------------------------------------------
    Rule("replace-endpoint", E, "§5", "replace endpoint is not a current surface node"),
    Rule("replace-order", E, "§5", "replace start comes after its end in surface order"),
    Rule("replace-uncited", E, "§5", "sourceEventSeqs does not cite every replaced node"),
    Rule("replace-not-earlier", E, "§5", "replace endpoint not before the replacing event (v3+)"),
    Rule(
        "tool-result-replace",
        E,
        "§5",
        "tool/result replacement is not a content-only edit of one tool/result",
    ),
    Rule("protected-head", E, "§5", "replacement of the system head by something else (v3+)"),
    # -- relational (§6.2): error only in v4, where the native reader enforces them ------------
    Rule("turn-open", W, "§6.2", "turn/start while a turn is open"),
    Rule("turn-number", W, "§6.2", "turn number is not previous + 1"),
    Rule("turn-end-mismatch", W, "§6.2", "turn/end does not name the open turn"),
    Rule("turn-end-step-open", W, "§6.2", "turn/end while a step is open"),
    Rule("step-outside-turn", W, "§6.2", "step/start outside the open turn"),
    Rule("step-open", W, "§6.2", "step/start while a step is open"),
    Rule("step-number", W, "§6.2", "step number is not the next step"),
    Rule("step-end-mismatch", W, "§6.2", "step/end does not name the open step"),
    Rule("event-outside-step", W, "§6.2", "event does not name the open turn/step"),
    Rule("event-outside-turn", W, "§6.2", "event requires an open turn"),
    Rule("tool-result-unmatched", W, "§6.2", "tool/result resolves no pending tool/call"),
    Rule("tool-call-duplicate", W, "§6.2", "tool call id advertised or started twice in a step"),
    Rule("unresolved-call", N, "§6.2, §7.1", "tool call left without a result at a step boundary"),
    Rule("seed-length-marker", W, "§4.4", "no session/end-seed where the seed ends"),
    # -- end state (§6.4) ----------------------------------------------------------------------
    Rule("open-turn", W, "§6.4", "turn still open at end of log: interrupted", "interrupted"),
)

RULES: dict[str, Rule] = {r.id: r for r in _RULES}


def register_rules(rules: tuple[Rule, ...]) -> None:
    """Add a dialect's own rules to the one registry (``dialects.registry`` does, once per
    dialect). An id is registered once; the same rule again is a no-op, a different one an error."""
    for rule in rules:
        known = RULES.get(rule.id)
        if known is not None and known != rule:
            raise ValueError(f"rule id {rule.id!r} is registered twice with different definitions")
        RULES[rule.id] = rule


_VERDICT_CLASSES: dict[str, VerdictClass] = {v: v for v in get_args(VerdictClass)}


def rule_table(spec: str, table: str) -> tuple[Rule, ...]:
    """A dialect's rules, written as one text table in the shape every dialect shares: per rule a
    line ``<id> <severity> <verdict> <sections>`` (``sections`` of the dialect's spec document
    ``spec``, the rest of the line), then its title on the indented line(s) below it. The order is
    kept (docs/rules.md lists it). Raises ValueError on a malformed table: a dialect's module
    fails at import, and ``tests/test_rule_ids.py`` imports every dialect."""
    rules: list[Rule] = []
    head: list[str] = []
    title: list[str] = []

    def close() -> None:
        if not head:
            return
        if not title:
            raise ValueError(f"rule {head[0]!r} has no title")
        rule_id, severity, verdict_text, sections = head
        verdict = _VERDICT_CLASSES.get(verdict_text)
        if verdict is None:
            raise ValueError(f"rule {rule_id!r}: {verdict_text!r} is not a verdict class")
        if any(r.id == rule_id for r in rules):
            raise ValueError(f"rule {rule_id!r} is listed twice")
        if severity.upper() not in Severity.__members__:
            raise ValueError(f"rule {rule_id!r}: {severity!r} is not a severity")
        rules.append(Rule(rule_id, Severity.parse(severity), f"{spec} {sections}", " ".join(title), verdict))

    for line in textwrap.dedent(table).splitlines():
        if not line.strip():
            continue
        if line[0].isspace():
            if not head:
                raise ValueError(f"a title line before any rule: {line.strip()!r}")
            title.append(line.strip())
            continue
        close()
        fields = line.split(None, 3)
        if len(fields) != 4:
            raise ValueError(f"a rule line needs id, severity, verdict and sections: {line!r}")
        head, title = fields, []
    close()
    return tuple(rules)


# Relational rules are enforced by the native v4 reader; v0–v3 readers accept the log (§6.2).
RELATIONAL: frozenset[str] = frozenset(
    r.id for r in _RULES if r.section.startswith("§6.2") and r.id != "unresolved-call"
)


def severity_for(rule_id: str, version: int | None, strict_relations: bool | None = None) -> Severity:
    """The severity of a finding of ``rule_id``: relational rules are errors where the reader
    enforces them (``strict_relations``; by default a dsh version of 4 or more, §6.2)."""
    rule = RULES[rule_id]
    if strict_relations is None:
        strict_relations = version is not None and version >= 4
    if strict_relations and stricter_in_v4(rule_id):
        return Severity.ERROR
    return rule.severity


# What a finding's verdict usually asks of its reader (`sesstool rule ID`); ``Rule.fix`` overrides.
_FIX_BY_VERDICT: dict[VerdictClass, str] = {
    "corrupt": "The committed part of the log is damaged, so a reader refuses it: restore the file "
    "from a copy, or `sesstool repair --salvage PATH` keeps the records before the first defect "
    "and saves every dropped byte beside the copy.",
    "torn": "A write was cut short (the process died mid-append); the torn bytes were never "
    "committed. `sesstool repair PATH` drops them and appends the closers a resume would.",
    "interrupted": "The session stopped mid-turn. `sesstool repair PATH` appends the closing "
    "records the agent appends when it resumes (or resume the session in the agent).",
    "unsupported": "The log needs a reader sesstool is not: a newer harness version or a required "
    "event sesstool does not know. Nothing to repair; read it with a newer sesstool.",
    "none": "Reported as a fact: readers accept the log and nothing needs repairing. "
    "`sesstool validate --fail-on warning` (or info) makes it fail a CI job.",
}


def verdict_of_finding(rule: Rule, severity: Severity) -> VerdictClass:
    """The verdict one finding of ``rule`` at ``severity`` implies on an otherwise clean log:
    an error is corruption (or unsupported); a warning or info only a tear or an interruption
    (spec §1.4, §6.3, §6.4), else none."""
    if severity is Severity.ERROR:
        return "unsupported" if rule.verdict == "unsupported" else "corrupt"
    return rule.verdict if rule.verdict in ("torn", "interrupted") else "none"


def fix_for(rule: Rule, severity: Severity | None = None) -> str:
    """What to do about a finding of ``rule`` (at its default severity unless given): its own
    advice, else the usual remedy for the verdict it implies."""
    return rule.fix or _FIX_BY_VERDICT[verdict_of_finding(rule, severity or rule.severity)]


def stricter_in_v4(rule_id: str) -> bool:
    """True for the relational rules the native v4 reader enforces (an error in a v4 log)."""
    return rule_id in RELATIONAL or rule_id == "unresolved-call"
