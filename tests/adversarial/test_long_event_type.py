"""Issue 11 item 1: a dsh log's unknown event type is the log's choice, of any length. The refusal
(``core.envelope.refusal``, §1.4) quoted it whole: a line whose type is 1 MiB made every command's
message 1 MiB (``derive``/``repair``/``migrate`` on stderr, ``inspect``'s verdict, ``validate``'s
finding in every format; 1,048,787 bytes of stderr on main's code), and each finding kept held
it. Now the type (and the session id beside it, ``ignorable`` and the keys that do not belong)
is quoted as every dialect quotes what a log chose: ``humanize.chosen``, its first 128
characters and its length. A short type is quoted whole, as before (the goldens of
fixtures/dsh/unknown-required are unchanged)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import zstandard

from sesstool.core import rule_ids as R
from sesstool.core.envelope import envelope_problems
from tests.conftest import FIXTURES, Sesstool

TYPE = "acme/" + "w" * (1 << 20)  # 1 MiB and 5 characters
CUT = f"…[{len(TYPE):,} characters]"
SHORT = 16 << 10  # every output of a command on the log (SARIF: 4.6 KiB): at most this many bytes


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """fixtures/dsh/unknown-required with its unknown type made 1 MiB long, raw and zstd."""
    where = tmp_path_factory.mktemp("long-type")
    lines = []
    for line in (FIXTURES / "dsh" / "unknown-required" / "session.jsonl").read_bytes().splitlines():
        obj = orjson.loads(line)
        if obj.get("type") == "acme/widget-state":
            obj["type"] = TYPE
        lines.append(orjson.dumps(obj) + b"\n")
    raw = where / "session.jsonl"
    raw.write_bytes(b"".join(lines))
    packed = where / "zstd" / "session.jsonl.zstd"
    packed.parent.mkdir()
    packed.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(raw.read_bytes()))
    return {"raw": raw, "zstd": packed}


READS = [
    ("inspect",),
    ("inspect", "--json"),
    ("inspect", "--timeline"),
    ("validate",),
    ("validate", "--format", "json"),
    ("validate", "--format", "github"),
    ("validate", "--format", "junit"),
    ("validate", "--format", "sarif"),
]
REFUSED = [("derive",), ("repair", "--dry-run"), ("migrate", "--dry-run")]


@pytest.mark.parametrize("encoding", ["raw", "zstd"])
def test_every_command_quotes_a_long_unknown_type_cut(
    sesstool: Sesstool, logs: dict[str, Path], encoding: str
) -> None:
    log = str(logs[encoding])
    for args in READS + REFUSED:
        done = sesstool(*args, log)
        assert done.exit_code == (4 if args in REFUSED else 1 if args[0] == "validate" else 0), args
        said = done.stdout + done.stderr
        assert len(said.encode()) <= SHORT, (args, len(said))
        assert "unknown-event-type" in said or "unknown to this harness" in said, args
        assert f"acme/{'w' * 123}" in said and CUT in said, args


def test_the_other_envelope_problems_quote_a_long_value_cut() -> None:
    """``ignorable`` of any length and keys that do not belong, however many and long."""
    keys = {f"k{i}".ljust(1 << 12, "x") for i in range(256)}
    obj = {"type": "turn/start", "seq": 0, "time": 0, "ignorable": "y" * (1 << 20), **dict.fromkeys(keys, 1)}
    problems = dict(envelope_problems(obj, obj.keys(), obj["type"], None))
    assert set(problems) == {R.ENVELOPE_KEY, R.ENVELOPE_DATA, R.ENVELOPE_IGNORABLE}
    assert all(len(message) < 512 for message in problems.values()), problems
    assert problems[R.ENVELOPE_IGNORABLE].endswith(f"'{'y' * 128}'…[1,048,576 characters]")
    short = {"type": "turn/start", "seq": 0, "time": 0, "data": {}, "ignorable": False, "extra": 1}
    assert dict(envelope_problems(short, short.keys(), short["type"], None)) == {
        R.ENVELOPE_KEY: "event has keys that do not belong: ['extra']",
        R.ENVELOPE_IGNORABLE: "ignorable must be absent or true, got False",
    }
