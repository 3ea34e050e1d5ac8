"""Range-encoded ``sourceEventSeqs`` (§9.4): every accepted form expands to its exact seqs, every
refusal has its exact message, and a malformed element is a finding in a log, never a crash."""

from __future__ import annotations

import io
from typing import Any

import pytest

from sesstool.core.options import ScanOptions
from sesstool.core.seq_ranges import SeqRangeError, decode_seq_set, decode_seqs
from sesstool.dialects.registry import open_scanner
from sesstool.store.raw_reader import RawReader
from tests.rules.examples import find, header, jsonl, line_of, with_tool_pair

# (value, own seq, accepted -> the cited seqs)
ACCEPTED: list[tuple[Any, int, list[int]]] = [
    ([0], 5, [0]),  # seq 0 (the first event) can be cited
    ([[0, 2]], 5, [0, 1, 2]),
    ([1, [3, 5]], 6, [1, 3, 4, 5]),  # plain and ranged mixed
    ([[4, 4]], 5, [4]),  # a one-seq range
    ([[4, 4], 6, [8, 9]], 10, [4, 6, 8, 9]),
    ([4], 5, [4]),  # the seq just below the event's own
    ([[2, 4]], 5, [2, 3, 4]),  # a range ending just below the event's own seq
    ([[0, 3]], 4, [0, 1, 2, 3]),  # a range as long as the event's own seq allows
    ([2, 1], 5, [2, 1]),  # an unencoded list need not be sorted (only ranged lists must increase)
    ([7, 3, 5], 8, [7, 3, 5]),
]

# (value, own seq, allow_empty, allow_ranges, the exact refusal)
REFUSED: list[tuple[Any, int, bool, bool, str]] = [
    ("3", 5, True, True, "sourceEventSeqs is not an array"),
    ({"a": 1}, 5, True, True, "sourceEventSeqs is not an array"),
    (None, 5, True, True, "sourceEventSeqs is not an array"),
    ([], 5, False, True, "sourceEventSeqs is empty"),
    ([[1, 2, 3]], 5, True, True, "element [1, 2, 3] is neither a seq nor a [start, end] pair"),
    ([[1]], 5, True, True, "element [1] is neither a seq nor a [start, end] pair"),
    ([["ab"]], 5, True, True, "element ['ab'] is neither a seq nor a [start, end] pair"),
    (["ab"], 5, True, True, "element 'ab' is neither a seq nor a [start, end] pair"),
    ([[1.5, 3]], 5, True, True, "element [1.5, 3] is neither a seq nor a [start, end] pair"),
    ([[1, 3.0]], 5, True, True, "element [1, 3.0] is neither a seq nor a [start, end] pair"),
    ([[True, 2]], 5, True, True, "element [True, 2] is neither a seq nor a [start, end] pair"),
    ([[1, False]], 5, True, True, "element [1, False] is neither a seq nor a [start, end] pair"),
    ([True], 5, True, True, "element True is neither a seq nor a [start, end] pair"),
    ([1, 2.0], 5, True, True, "element 2.0 is neither a seq nor a [start, end] pair"),
    ([None], 5, True, True, "element None is neither a seq nor a [start, end] pair"),
    ([[3, 1]], 5, True, True, "range [3, 1] runs backwards"),
    ([[2, 1]], 5, True, True, "range [2, 1] runs backwards"),
    ([[0, 6]], 5, True, True, "range [0, 6] reaches past the event"),
    ([[0, 10**15]], 5, True, True, f"range [0, {10**15}] reaches past the event"),  # never expanded
    ([[0, 5]], 5, True, True, "sourceEventSeqs cites a seq not below the event's own seq 5"),
    ([[1, 6]], 5, True, True, "sourceEventSeqs cites a seq not below the event's own seq 5"),
    ([[4, 6], 1], 7, True, True, "range-encoded sourceEventSeqs must be strictly increasing"),
    ([[1, 2], [2, 3]], 5, True, True, "range-encoded sourceEventSeqs must be strictly increasing"),
    ([3, [1, 2]], 5, True, True, "range-encoded sourceEventSeqs must be strictly increasing"),
    ([1, [1, 2]], 5, True, True, "range-encoded sourceEventSeqs must be strictly increasing"),
    # each element is judged against the one just before it, not the first
    ([[1, 2], [5, 6], [4, 7]], 9, True, True, "range-encoded sourceEventSeqs must be strictly increasing"),
    ([[1, 2], [5, 6], 3], 9, True, True, "range-encoded sourceEventSeqs must be strictly increasing"),
    ([-1], 5, True, True, "sourceEventSeqs holds a negative seq"),
    ([[-2, 1]], 5, True, True, "sourceEventSeqs holds a negative seq"),
    ([[-1, 2]], 5, True, True, "sourceEventSeqs holds a negative seq"),  # the first negative seq
    ([-1, [2, 3]], 5, True, True, "sourceEventSeqs holds a negative seq"),
    ([5], 5, True, True, "sourceEventSeqs cites a seq not below the event's own seq 5"),
    # an unencoded list is judged by its smallest and its largest seq, whatever its order
    ([3, -1, 2], 5, True, True, "sourceEventSeqs holds a negative seq"),
    ([2, 7, 1], 5, True, True, "sourceEventSeqs cites a seq not below the event's own seq 5"),
    ([0], 0, True, True, "sourceEventSeqs cites a seq not below the event's own seq 0"),
    ([1, 1], 5, True, True, "sourceEventSeqs repeats a seq"),
    ([2, 0, 2], 5, True, True, "sourceEventSeqs repeats a seq"),
    (
        [[0, 2]],
        5,
        True,
        False,
        "sourceEventSeqs must densely contain non-negative safe integers (a v0 reader knows no "
        "[start, end] ranges)",
    ),
    (
        [1, [3, 4]],
        5,
        True,
        False,
        "sourceEventSeqs must densely contain non-negative safe integers (a v0 reader knows no "
        "[start, end] ranges)",
    ),
    # without ranges a malformed element keeps its own message
    (["ab"], 5, True, False, "element 'ab' is neither a seq nor a [start, end] pair"),
]


@pytest.mark.parametrize(("value", "own_seq", "expected"), ACCEPTED, ids=repr)
def test_accepted_forms_expand_to_their_seqs(value: Any, own_seq: int, expected: list[int]) -> None:
    assert decode_seqs(value, own_seq, allow_empty=False) == expected
    plain = all(type(v) is int for v in value)
    if plain:  # an unencoded list means the same to a v0 reader
        assert decode_seqs(value, own_seq, allow_empty=False, allow_ranges=False) == expected


@pytest.mark.parametrize(("value", "own_seq", "expected"), ACCEPTED, ids=repr)
def test_the_seq_set_holds_exactly_the_cited_seqs(value: Any, own_seq: int, expected: list[int]) -> None:
    """What the scanner asks of a citation (membership, count, order, "only this call's seq")
    matches the expansion, at every seq from below 0 to past the event's own."""
    cited = decode_seq_set(value, own_seq, allow_empty=False)
    for seq in range(-2, own_seq + 2):
        assert (seq in cited) is (seq in expected), seq
        assert cited.is_single(seq) is (expected == [seq]), seq
    # only ints are seqs: a bool, a float or a string equal to a cited seq is not cited
    for other in (True, False, float(expected[0]), str(expected[0]), None):
        assert other not in cited
    assert (len(cited), list(cited)) == (len(expected), sorted(expected))


def test_an_empty_seq_set_cites_nothing() -> None:
    cited = decode_seq_set([], 5, allow_empty=True)
    assert (0 in cited, len(cited), list(cited), cited.is_single(0)) == (False, 0, [], False)


def test_an_empty_list_is_accepted_only_where_allowed() -> None:
    assert decode_seqs([], 5, allow_empty=True) == []
    with pytest.raises(SeqRangeError, match=r"^sourceEventSeqs is empty$"):
        decode_seqs([], 5, allow_empty=False)


@pytest.mark.parametrize(("value", "own_seq", "allow_empty", "allow_ranges", "message"), REFUSED, ids=repr)
def test_refusals_have_their_exact_message(
    value: Any, own_seq: int, allow_empty: bool, allow_ranges: bool, message: str
) -> None:
    with pytest.raises(SeqRangeError) as err:
        decode_seqs(value, own_seq, allow_empty, allow_ranges)
    assert str(err.value) == message


MALFORMED = [[[1, 2, 3]], ["ab"], [[1.5, 3]], [[5, 4]], [[0, 2], 1], [True], {"a": 1}]


@pytest.mark.parametrize("value", MALFORMED, ids=repr)
def test_a_malformed_citation_in_a_log_is_a_finding_not_a_crash(value: Any) -> None:
    events = with_tool_pair(2)
    result = find(events, "tool/result")
    result["sourceEventSeqs"] = value
    scanner = open_scanner("log", ScanOptions())
    reader = RawReader(io.BytesIO(jsonl(header(2), events)))
    for item in reader.batches():
        scanner.feed(item)
    scan = scanner.finish(reader.summary)
    with pytest.raises(SeqRangeError) as expected:
        decode_seqs(value, result["seq"], allow_empty=False)
    findings = [(f.rule, f.message, f.address.line, f.address.seq) for f in scan.findings]
    assert findings == [("source-seqs-shape", str(expected.value), line_of(events, result), result["seq"])]
    assert scan.verdict == "corrupt"
