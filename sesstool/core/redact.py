"""Credential-shaped values found and replaced by stable tokens (``--redact``, ``sesstool redact``).

Detection uses the pattern plugins of Yelp's ``detect-secrets`` (AWS, GitHub, GitLab, Slack,
Stripe, JWT, private keys, basic-auth URLs, the ``password = "…"`` keyword heuristic, …), not a
list of our own; its entropy plugins are left out (every commit hash would go) and so is its
public-IP plugin (an address is not a credential). A few shapes its 1.5 release does not know
are added and documented in docs/format.md ("Redaction"). One ``Redactor`` holds the mapping for
one file: the same value always becomes the same token (``[REDACTED:aws-access-key:1]``), so
equal values stay equal and the redacted log keeps its pairings.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sesstool.core import required_text
from sesstool.core.closer_list import Closers
from sesstool.core.held_map import HeldMap, TableMaker
from sesstool.core.joined_text import JoinedText

_TOKEN = re.compile(r"\[REDACTED:[a-z0-9-]+:\d+\]")
_PEM = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(-----END \1PRIVATE KEY\2-----|\Z)", re.DOTALL
)
# Shapes detect-secrets 1.5 does not know (docs/format.md "Redaction").
_EXTRA: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("api-key", re.compile(r"\bsk-(?:proj-|ant-[a-z0-9]+-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("json-web-token", re.compile(r"\beyJ[A-Za-z0-9_=-]+\.eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+")),
)
_SKIPPED_PLUGINS = ("High Entropy", "Public IP", "Private Key", "JSON Web Token")
_TRIM = " \t\r\n\"'=:,"
_MIN_LENGTH = 6
_MEMO_LENGTH = 128  # strings up to this long have their finds remembered (keys, roles, types)...
_MEMO_SIZE = 4096  # ... this many of them at most (then forgotten all at once): a fixed amount
# a streamed text (``JoinedText``) up to this many characters is redacted whole, as the str it
# stands for; a longer one part by part (docs/format.md "Memory": a fixed amount held)
WHOLE_AT = 1 << 20


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")


Finder = Callable[[str], Iterator[str]]


def _detect_secrets_finders() -> list[tuple[str, Finder]]:
    # imported on use: detect-secrets takes ~0.5 s to import, and only --redact needs it
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    finders: list[tuple[str, Finder]] = []
    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    for kind, cls in sorted(mapping.items()):
        if any(skip in kind for skip in _SKIPPED_PLUGINS):
            continue
        plugin = cls()
        if isinstance(plugin, RegexBasedDetector):
            patterns = tuple(plugin.denylist)
            finders.append((_slug(kind), _regex_finder(patterns)))
        else:
            finders.append((_slug(kind), _plugin_finder(plugin)))
    return finders


class _Finder:
    """A detector's finds in a text; none in a text shorter than ``shortest`` characters (the
    fewest a match of its patterns spans: most strings of a log, ids and keys, are shorter
    than every detector's shortest match and are not handed to any)."""

    __slots__ = ("_find", "shortest")

    def __init__(self, find: Finder, shortest: int) -> None:
        self._find = find
        self.shortest = shortest

    def __call__(self, text: str) -> Iterator[str]:
        return self._find(text)


def _regex_finder(patterns: tuple[re.Pattern[str], ...]) -> Finder:
    """The whole credential of each match: a capturing group when it holds the value (a
    password in a URL), else the match (some plugins capture only a prefix such as ``ghp``).
    A pattern is tried only on a text its gate finds (``core.required_text``: what every match
    of it contains, ``eyJ``, ``xox``, ``.cloudant.com``)."""
    gated = tuple((required_text.gate((pattern,)), pattern) for pattern in patterns)

    def find(text: str) -> Iterator[str]:
        for door, pattern in gated:
            if door is not None and not door.found(text):
                continue
            for m in pattern.finditer(text):
                groups = [g for g in m.groups() if g and len(g) >= 8]
                yield (groups[-1] if groups else m.group(0)).strip(_TRIM)

    return _Finder(find, min(map(required_text.shortest, patterns), default=0))


def _plugin_patterns(plugin: Any) -> tuple[re.Pattern[str], ...]:
    """The patterns a detect-secrets plugin that is not a ``RegexBasedDetector`` matches a line
    with, when known: the keyword plugin's ``analyze_string`` (called with the line alone) tries
    its module's ``QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP`` in detect-secrets 1.5, the release
    read; none in another (a later one may try other patterns: its lines then go ungated)."""
    if not _GATED_RELEASE.match(_detect_secrets_version()):
        return ()
    table = getattr(sys.modules.get(type(plugin).__module__), "QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP", None)
    return tuple(table) if isinstance(table, dict) and table else ()


_GATED_RELEASE = re.compile(r"1\.5(\.|$)")  # the detect-secrets whose keyword plugin was read


def _detect_secrets_version() -> str:
    from detect_secrets.__version__ import VERSION

    return str(VERSION)


def _plugin_finder(plugin: Any) -> Finder:
    """Each line through the plugin, a line (and first the whole text) only when the gate of
    its patterns finds it (every keyword pattern needs a keyword: ``key``, ``pass``, ...)."""
    patterns = _plugin_patterns(plugin)
    door = required_text.gate(patterns) if patterns else None

    def find(text: str) -> Iterator[str]:
        if door is not None and not door.found(text):
            return
        for line in text.splitlines() or [text]:
            if door is not None and not door.found(line):
                continue
            for value in plugin.analyze_string(line):
                if isinstance(value, str):
                    yield value.strip(_TRIM)

    return _Finder(find, min(map(required_text.shortest, patterns), default=0))


def _extra_finders() -> list[tuple[str, Finder]]:
    def pem(text: str) -> Iterator[str]:
        for m in _PEM.finditer(text):
            yield m.group(0)

    finders: list[tuple[str, Finder]] = [("private-key", _Finder(pem, required_text.shortest(_PEM)))]
    for kind, pattern in _EXTRA:
        finders.append((kind, _regex_finder((pattern,))))
    return finders


@dataclass(frozen=True, slots=True)
class RedactionCounts:
    """Distinct values replaced, by kind, and replacements made in total."""

    by_kind: tuple[tuple[str, int], ...]
    replacements: int

    @property
    def values(self) -> int:
        return sum(n for _, n in self.by_kind)


class Redactor:
    """Finds credential-shaped values and maps each distinct value to one token."""

    def __init__(
        self, finders: list[tuple[str, Finder]] | None = None, spill: TableMaker | None = None
    ) -> None:
        """``spill``: what makes the value → token table once it outgrows memory (the engine's
        ``store.run_spill.spilled_strings``; None: a dict whatever its size)."""
        chosen = finders if finders is not None else [*_extra_finders(), *_detect_secrets_finders()]
        least = [getattr(finder, "shortest", 0) for _, finder in chosen]
        # by a text's length (up to the longest ``shortest``): the finders a match of which fits
        # in it, in their order (the first to find a value names its kind)
        self._fitting = [
            [pair for pair, fewest in zip(chosen, least, strict=True) if fewest <= length]
            for length in range(max(least, default=0) + 1)
        ]
        # a text shorter than this fits no detector's match (a key, a role, a block's type)
        self._shortest = next((length for length, fitting in enumerate(self._fitting) if fitting), 0)
        # every distinct value found → its token: as many as a log chooses (issue 11 item 1)
        self._tokens = HeldMap("the credential values being redacted", spill)
        self._per_kind: dict[str, int] = {}
        self._memo: dict[str, tuple[tuple[str, str], ...]] = {}
        self.replacements = 0

    def secrets_in(self, text: str) -> list[tuple[str, str]]:
        """(value, kind) found in ``text``, longest first; tokens we wrote are never values. What
        the finders find is a function of the text alone: a short text seen again (a message's
        keys, its role, its block types) is answered from memory instead of ~40 patterns."""
        short = len(text) <= _MEMO_LENGTH
        if short:
            known = self._memo.get(text)
            if known is not None:
                return list(known)
        found: dict[str, str] = {}
        try:
            for kind, finder in self._fitting[min(len(text), len(self._fitting) - 1)]:
                for value in finder(text):
                    if len(value) >= _MIN_LENGTH and not _TOKEN.fullmatch(value) and value not in found:
                        found[value] = kind
        finally:
            required_text.forget()  # the gates' folded copy of the text
        secrets = sorted(found.items(), key=lambda kv: (-len(kv[0]), kv[0]))
        if short:
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.clear()
            self._memo[text] = tuple(secrets)
        return secrets

    def token(self, value: str, kind: str) -> str:
        token = self._tokens.get(value)
        if token is None:
            n = self._per_kind.get(kind, 0) + 1
            self._per_kind[kind] = n
            token = f"[REDACTED:{kind}:{n}]"
            self._tokens.put(value, token)
        return token

    def text(self, text: str) -> str:
        """``text`` with every credential-shaped value replaced."""
        if len(text) < self._shortest or not text:
            return text
        for value, kind in self.secrets_in(text):
            if value in text:
                self.replacements += text.count(value)
                text = text.replace(value, self.token(value, kind))
        return text

    def joined(self, text: JoinedText) -> str | JoinedText:
        """A streamed text redacted: up to ``WHOLE_AT`` characters, the str it stands for passed
        through ``text`` (what a text held in memory gets, token for token); past them, each part
        passed through ``text`` as it is walked, the separators kept. Part by part is not the
        whole text's redaction in general (a pattern may span a separator: a private key's
        armour, ``_authToken=`` then blank lines; a value found in one part is replaced in
        another only where found there too; tokens numbered in part order): documented in
        docs/format.md "Memory", as the price of a text longer than memory should hold."""
        whole = text.whole(WHOLE_AT)
        return self.text(whole) if whole is not None else text.each(self.text)

    def value(self, obj: Any) -> Any:
        """A JSON value with every string (keys included) passed through ``text``."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, JoinedText):
            return self.joined(obj)
        if isinstance(obj, Closers):  # made as walked (a run of interrupted results): each member
            return obj.mapped(self.value)  # redacted as it is walked, the same token each walk
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.value(v) for v in obj)
        if isinstance(obj, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in obj.items()}
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):  # a dialect's message object
            changes = {f.name: self.value(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
            return dataclasses.replace(obj, **changes)
        return obj

    def strings(self, obj: Any) -> Iterator[str]:
        """Every string in a JSON value (keys included)."""
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, list | tuple):
            for v in obj:
                yield from self.strings(v)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(k, str):
                    yield k
                yield from self.strings(v)

    def counts(self) -> RedactionCounts:
        return RedactionCounts(tuple(sorted(self._per_kind.items())), self.replacements)
