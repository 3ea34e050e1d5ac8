"""``core.required_text``: what every match of a pattern holds, and the gate that skips a
pattern on a text that cannot match it (``--redact``'s detectors). A gate may let through a text
its pattern does not match, never the reverse: shown for every detector pattern on texts made to
match it (Hypothesis's ``from_regex``), with the characters ``re`` folds to ASCII letters
(``ſ``, ``ı``, ``İ``, the Kelvin sign) put in; and a ``Redactor`` finds, with its gates, exactly
what it finds without them, on every string of every fixture and on drawn texts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sesstool.core import redact, required_text
from sesstool.core.required_text import gate, needed, shortest
from tests.conftest import FIXTURES, examples


def _needs(pattern: str, flags: int = 0) -> list[set[str]]:
    return [set(need) for need in needed(re.compile(pattern, flags))]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("abc", [{"abc"}]),
        (r"ab\d+cde", [{"cde"}, {"ab"}]),  # the longer run first
        ("(?:cloudant|cl|clou)key", [{"key"}, {"cl"}]),  # re factors the branches: "cl", then (oudant||ou)
        ("(?:ghp|gho|ghu)_x", [{"gh"}, {"_x"}]),
        ("x(?:token|pass)", [{"pass", "token"}, {"x"}]),
        ("(?:foo|bar)+z", [{"bar", "foo"}, {"z"}]),  # repeated at least once
        ("(?:foo|bar)*z", [{"z"}]),  # perhaps not at all
        ("(?:foo|)z", [{"z"}]),  # a branch that needs nothing
        ("(?:ab[cd]|xy)", [{"ab", "xy"}]),  # each branch's best need
        ("(?i:key)x", [{"x"}]),  # a group with flags of its own: unknown
        ("(?=secret)x", [{"x"}]),  # a look-ahead: unknown
        ("[ab]+", []),
        (r"(a)\1", [{"a"}]),
    ],
)
def test_the_needs_of_a_pattern(pattern: str, expected: list[set[str]]) -> None:
    assert _needs(pattern) == expected


@pytest.mark.parametrize(
    ("pattern", "least"),
    [("abc", 3), (r"(?<=\W)ab\d{3}", 5), ("x?", 0), ("(?:ab|c)+d", 2), (r"(a)\1", 2), (r"\bx{4,}", 4)],
)
def test_the_shortest_match_of_a_pattern(pattern: str, least: int) -> None:
    assert shortest(re.compile(pattern)) == least


@settings(max_examples=examples(300))
@given(st.data())
def test_no_match_of_a_detector_is_shorter_than_its_shortest(data: st.DataObject) -> None:
    """A redactor hands a text to a detector only when it is at least as long as its shortest."""
    pattern = data.draw(st.sampled_from(PATTERNS))
    match = data.draw(st.from_regex(pattern, fullmatch=True))
    assert len(match) >= shortest(pattern), (pattern.pattern, match)


def test_no_gate_without_a_need_of_two_characters() -> None:
    assert gate([re.compile(r"\d{8,10}:[0-9A-Za-z_-]{35}")]) is None  # ":" alone prunes nothing
    assert gate([re.compile("[ab]+c?")]) is None
    assert gate([re.compile("password"), re.compile("[ab]+")]) is None  # one pattern without a gate
    assert gate([]) is None


def test_a_gate_searches_all_of_a_patterns_needs() -> None:
    door = gate([re.compile(r"(?:cloudant|cl)_?(?:key|pwd|password)\s*=\s*\w{8}", re.IGNORECASE)])
    assert door is not None
    assert not door.found("the CLI renders the conversation")  # "cl" alone
    assert not door.found("a key and a password")  # the keys alone
    assert door.found("cl key")  # both needs (the gate may pass what the pattern refuses)
    assert door.found("CLOUDANT_PASSWORD = abcdefgh")


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("password", "paſsword"),  # LATIN SMALL LETTER LONG S: re takes it for s
        ("private", "prıvate"),  # DOTLESS I
        ("private", "PRİVATE"),  # CAPITAL I WITH DOT ABOVE: str.lower() makes two characters of it
        ("key", "\u212aey"),  # KELVIN SIGN
        ("contraseña", "CONTRASEÑA"),
        ("password", "PaSsWoRd"),
    ],
)
def test_a_case_insensitive_gate_folds_as_re_does(pattern: str, text: str) -> None:
    compiled = re.compile(pattern, re.IGNORECASE)
    door = gate([compiled])
    assert compiled.search(f"x {text} y") and door is not None and door.found(f"x {text} y")
    assert not door.found(f"x {text[:-1]} y")


def test_an_ascii_gate_folds_ascii_only() -> None:
    compiled = re.compile("password", re.IGNORECASE | re.ASCII)
    door = gate([compiled])
    assert door is not None and door.found("PASSWORD") and compiled.search("PASSWORD")
    assert compiled.search("paſsword") is None and not door.found("paſsword")  # ASCII folding: ſ is no s


def _detector_patterns() -> list[re.Pattern[str]]:
    """Every pattern ``--redact`` tries: detect-secrets' plugins (the keyword plugin's too) and
    the shapes sesstool adds."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    patterns = [pattern for _, pattern in redact._EXTRA]
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    for cls in classes:
        plugin = cls()
        patterns.extend(getattr(plugin, "denylist", ()) or redact._plugin_patterns(plugin))
    return patterns


PATTERNS = _detector_patterns()
# characters re takes for an ASCII letter that are not it (under IGNORECASE without ASCII)
_FOLDED = {"s": "ſ", "i": "ıİ", "k": "\u212a", "S": "ſ", "I": "ıİ", "K": "\u212a"}


@st.composite
def _matching(draw: st.DrawFn) -> tuple[re.Pattern[str], str]:
    """A detector pattern and a text around a string made to match it, some of its letters
    perhaps swapped for characters re folds to them."""
    pattern = draw(st.sampled_from(PATTERNS))
    inner = draw(st.from_regex(pattern, fullmatch=True))
    if pattern.flags & re.IGNORECASE and draw(st.booleans()):
        inner = "".join(draw(st.sampled_from([c, *_FOLDED[c]])) if c in _FOLDED else c for c in inner)
    around = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
    return pattern, f"{draw(around)}{inner}{draw(around)}"


@settings(max_examples=examples(600))
@given(_matching())
def test_a_gate_finds_every_text_its_pattern_matches(case: tuple[re.Pattern[str], str]) -> None:
    pattern, text = case
    door = gate([pattern])
    if door is not None and pattern.search(text):
        assert door.found(text), (pattern.pattern, text)


def test_every_detector_pattern_has_its_gate_checked() -> None:
    """The property above draws from every pattern; most of them have a gate to check."""
    ungated = [p.pattern for p in PATTERNS if gate([p]) is None]
    assert len(PATTERNS) >= 45 and len(ungated) <= 5, ungated


def _ungated() -> redact.Redactor:
    """A redactor trying every detector on every string: no gates, and its finders wrapped so
    that none states a shortest match (each string of any length handed to all of them)."""
    with mock.patch.object(required_text, "gate", return_value=None):
        finders = [*redact._extra_finders(), *redact._detect_secrets_finders()]

    def plain(find: redact.Finder) -> redact.Finder:
        return lambda text: find(text)

    return redact.Redactor([(kind, plain(find)) for kind, find in finders])


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _fixture_strings() -> list[str]:
    seen: set[str] = set()
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                seen.update(_strings(orjson.loads(line)))
            except orjson.JSONDecodeError:
                continue
    return sorted(seen)


SAMPLES = [
    'api_key = "abcdefghijklmnop"',
    "my PASSWORD: 'hunter2hunter2'",
    'paſsword: "abcdefghij"',
    'prİvate_key = "abcdefghijkl"',
    "AKIAABCDEFGHIJKLMNOP",
    "xoxb-1234567890-abcdefghij",
    "ghp_" + "a" * 36,
    "github_pat_" + "b" * 50,
    "sk-proj-" + "c" * 40,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghij",
    "https://user:supersecretpw@example.com/path",
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
    "cloudant_password = " + "ab12" * 16,
    "sk_live_" + "d" * 24,
    "SG." + "e" * 22 + "." + "f" * 43,
]


def test_a_redactor_finds_with_its_gates_what_it_finds_without_them() -> None:
    gated, ungated = redact.Redactor(), _ungated()
    strings = [*_fixture_strings(), *SAMPLES]
    assert len(strings) > 1000
    found = 0
    for text in strings:
        expected = ungated.secrets_in(text)
        assert gated.secrets_in(text) == expected, text
        assert gated.text(text) == ungated.text(text), text  # a string too short for any, untouched
        found += bool(expected)
    assert found >= len(SAMPLES)  # the comparison saw credentials, not only their absence


@settings(max_examples=examples(300))
@given(_matching())
def test_a_redactor_finds_with_its_gates_what_it_finds_without_them_on_drawn_texts(
    case: tuple[re.Pattern[str], str],
) -> None:
    _, text = case
    assert _REDACTORS[0].secrets_in(text) == _REDACTORS[1].secrets_in(text), text


_REDACTORS = (redact.Redactor(), _ungated())


def test_the_equivalents_are_asked_of_re() -> None:
    """Not a case table: ``re``'s own folding, past ASCII too."""
    flags = re.IGNORECASE
    assert required_text._equivalents("s", flags) == frozenset("sSſ")
    assert required_text._equivalents("k", flags) == frozenset("kK\u212a")
    assert required_text._equivalents("ñ", flags) == frozenset("ñÑ")
    assert required_text._equivalents("s", flags | re.ASCII) == frozenset("sS")
    assert required_text._equivalents(":", flags) == frozenset(":")


def test_nothing_holds_a_text_past_its_scan() -> None:
    """The gates fold a text once for all the patterns it is tried with; the redactor drops
    that copy when its scan ends (a text may be a 16 MiB prompt)."""
    import gc
    import weakref

    class Text(str):
        pass

    text = Text("a password = 'hunter2hunter2' " * 1000)
    gone = weakref.ref(text)
    assert _REDACTORS[0].secrets_in(text) == [("hunter2hunter2", "secret-keyword")]
    del text
    gc.collect()
    assert gone() is None


def test_the_keyword_gate_is_built_only_for_the_release_read() -> None:
    """The keyword plugin's patterns are read from detect-secrets 1.5's module; another release
    may try others in ``analyze_string``, so its lines go ungated, and are still found."""
    from detect_secrets.plugins.keyword import KeywordDetector

    plugin = KeywordDetector()
    assert redact._plugin_patterns(plugin)  # this release: the gate's patterns
    line = 'db_password = "Zq8vW3xT9mK2pL5n"'
    gated = list(redact._plugin_finder(plugin)(line))
    assert set(gated) == {"Zq8vW3xT9mK2pL5n"}
    with mock.patch.object(redact, "_detect_secrets_version", return_value="1.6.0"):
        assert redact._plugin_patterns(plugin) == ()
        assert list(redact._plugin_finder(plugin)(line)) == gated
    for known in ("1.5", "1.5.0", "1.5.12"):
        with mock.patch.object(redact, "_detect_secrets_version", return_value=known):
            assert redact._plugin_patterns(plugin)
    for other in ("1.50.0", "11.5.0", "2.0"):
        with mock.patch.object(redact, "_detect_secrets_version", return_value=other):
            assert redact._plugin_patterns(plugin) == ()
