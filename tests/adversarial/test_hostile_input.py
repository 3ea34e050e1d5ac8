"""RELIABILITY.md test plan, items 14, 21, 22 and 23: hostile bytes get a precise finding and an
address, never a traceback and never a false "corrupt"; carried bytes survive verbatim."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, Sesstool

BASE = (FIXTURES / "dsh" / "v0-tiny" / "session.jsonl").read_bytes()  # balanced, 14 lines


def findings(sesstool: Sesstool, path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = sesstool("validate", "--format", "json", *args, str(path))
    assert "Traceback" not in result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)["files"][0]
    return result.exit_code, doc


def write(tmp_path: Path, data: bytes, name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- item 14: NUL runs and garbage after the last newline are a torn tail ------------------------


@pytest.mark.parametrize("size", [512, 1000, 4096])
def test_nul_tail_is_torn_not_a_record(sesstool: Sesstool, tmp_path: Path, size: int) -> None:
    code, doc = findings(sesstool, write(tmp_path, BASE + b"\x00" * size))
    assert code == 0 and doc["verdict"]["verdict"] == "torn"
    (torn,) = [f for f in doc["findings"] if f["rule"] == "torn-tail"]
    assert torn["address"]["offset"] == len(BASE) and str(size) in torn["message"]


def test_garbage_tail_is_torn(sesstool: Sesstool, tmp_path: Path) -> None:
    code, doc = findings(sesstool, write(tmp_path, BASE + b"\x13\x88garbage{\xff"))
    assert code == 0 and doc["verdict"]["verdict"] == "torn"
    assert [f["rule"] for f in doc["findings"]] == ["torn-tail"]


def test_nul_line_before_a_turn_end_is_corruption(sesstool: Sesstool, tmp_path: Path) -> None:
    lines = BASE.split(b"\n")
    lines.insert(5, b"\x00" * 600)
    code, doc = findings(sesstool, write(tmp_path, b"\n".join(lines)))
    assert code == 1 and doc["verdict"]["verdict"] == "corrupt"
    (nul,) = [f for f in doc["findings"] if f["rule"] == "nul-bytes"]
    assert nul["address"]["line"] == 6 and nul["severity"] == "error"


# -- item 21: deep nesting --------------------------------------------------------------------


def _with_user_payload(payload: bytes) -> bytes:
    lines = BASE.split(b"\n")
    user = json.loads(lines[3])
    user["data"]["content"][0]["text"] = "PAYLOAD"
    lines[3] = json.dumps(user, separators=(",", ":")).encode().replace(b'"PAYLOAD"', payload)
    return b"\n".join(lines)


@pytest.mark.parametrize("payload", [b"[" * 2000 + b"]" * 2000, b"[" * 1_000_000])
def test_deep_nesting_is_a_clean_depth_error(sesstool: Sesstool, tmp_path: Path, payload: bytes) -> None:
    code, doc = findings(sesstool, write(tmp_path, _with_user_payload(payload)))
    assert code == 1 and doc["verdict"]["verdict"] == "corrupt"
    (deep,) = [f for f in doc["findings"] if f["rule"] in ("depth-limit", "invalid-json")]
    assert deep["address"]["line"] == 4
    if payload.endswith(b"]"):
        assert deep["rule"] == "depth-limit"


# -- item 22: what Node writes, and what orjson would lose, is valid and carried verbatim --------

ODD_VALUES = [
    b'"lone \\ud800 surrogate"',  # JSON.stringify writes lone surrogates like this
    b"18446744073709551616",  # beyond u64: orjson silently makes it a float
    b"1e-400",  # underflows to 0.0
    b'{"a":1,"a":2}',  # duplicate keys: the last wins
]


@pytest.mark.parametrize("value", ODD_VALUES)
def test_odd_but_valid_values_are_not_corruption(sesstool: Sesstool, tmp_path: Path, value: bytes) -> None:
    lines = BASE.split(b"\n")
    # the value goes into the user message's source object, a place no rule inspects
    lines[3] = lines[3].replace(
        b'"source":{"kind":"user"}', b'"source":{"kind":"user","note":' + value + b"}"
    )
    log = write(tmp_path, b"\n".join(lines))
    code, doc = findings(sesstool, log)
    assert code == 0 and doc["verdict"]["verdict"] == "clean", doc["findings"]
    strict_code, strict = findings(sesstool, log, "--strict")
    assert strict_code == 0  # a warning does not fail --fail-on error
    dupes = [f["rule"] for f in strict["findings"] if f["rule"] == "duplicate-key"]
    assert dupes == (["duplicate-key"] if value.startswith(b'{"a"') else [])


def test_odd_values_are_copied_byte_for_byte_by_repair(sesstool: Sesstool, tmp_path: Path) -> None:
    lines = BASE.split(b"\n")[:6]  # header … user/message, request/header: turn 1 open
    lines[3] = lines[3].replace(
        b'"text":"hi"', b'"text":"\\ud800 \\udfff","n":18446744073709551616,"e":1e-400,"d":1,"d":2'
    )
    src = write(tmp_path, b"\n".join(lines) + b"\n")
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    result = sesstool("repair", "--json", str(src))
    assert result.exit_code == 0, result.stderr
    out = Path(json.loads(result.stdout)["output"]["path"])
    assert out.read_bytes().startswith(src.read_bytes())  # carried verbatim, not re-serialised
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before


# -- item 23: what is not JSON, or not UTF-8, is rejected with a line number ---------------------

BAD_RECORDS = [
    (b'{"type":"todo/write","seq":5,"time":NaN,"data":{}}', "invalid-json"),
    (b'{"type":"todo/write","seq":5,"time":Infinity,"data":{}}', "invalid-json"),
    (b'\xef\xbb\xbf{"type":"todo/write","seq":5,"time":1,"data":{}}', "bom"),
    (b'{"type":"todo/write","seq":5,"time":1,"data":{"t":"a\x00b"}}', "invalid-json"),
    (b'{"type":"todo/write","seq":5,"time":1,"data":{"t":"\xff"}}', "invalid-utf8"),
    (b'{"type":"todo/write","seq":5,"time":1,"data":{"t":"\xc0\x80"}}', "invalid-utf8"),  # overlong
]


@pytest.mark.parametrize(("record", "rule"), BAD_RECORDS)
def test_undecodable_records_are_rejected_with_their_line(
    sesstool: Sesstool, tmp_path: Path, record: bytes, rule: str
) -> None:
    lines = BASE.split(b"\n")
    lines.insert(6, record)  # line 7, before the turn's remaining records
    code, doc = findings(sesstool, write(tmp_path, b"\n".join(lines)))
    assert code == 1 and doc["verdict"]["verdict"] == "corrupt"
    first = doc["findings"][0]
    assert (first["rule"], first["address"]["line"], first["severity"]) == (rule, 7, "error")
    assert first["address"]["seq"] is None


@pytest.mark.parametrize(("record", "rule"), BAD_RECORDS)
def test_undecodable_records_are_never_written_out(
    sesstool: Sesstool, tmp_path: Path, record: bytes, rule: str
) -> None:
    src = write(tmp_path, BASE + record)  # as a torn last record (no newline)
    result = sesstool("repair", "--json", str(src))
    assert result.exit_code == 0, result.stderr
    out = Path(json.loads(result.stdout)["output"]["path"])
    assert record not in out.read_bytes() and out.read_bytes() == BASE


# -- inputs the fuzzers found (fixtures/fuzz/regressions): each must scan without raising -------

REGRESSIONS = sorted((FIXTURES / "fuzz" / "regressions").iterdir())


# each case's verdict and the exit status of validate, inspect and derive: a new case is pinned
# here when it is added (unhashable-type: an object as an event type once crashed the scanner)
PINNED = {"unhashable-type.jsonl": ("corrupt", (1, 0, 3))}


def test_every_fuzzer_finding_is_pinned() -> None:
    assert sorted(PINNED) == [p.name for p in REGRESSIONS]


@pytest.mark.parametrize("case", REGRESSIONS, ids=[p.name for p in REGRESSIONS])
def test_fuzzer_findings_stay_fixed(sesstool: Sesstool, case: Path) -> None:
    verdict, codes = PINNED[case.name]
    commands = (("validate", "--format", "json"), ("inspect", "--json", "--timeline"), ("derive",))
    for args, code in zip(commands, codes, strict=True):
        result = sesstool(*args, str(case))
        assert result.exit_code == code, (args, result.stderr)
        assert "Traceback" not in result.stderr
    checked = json.loads(sesstool("validate", "--format", "json", str(case)).stdout)
    assert checked["files"][0]["verdict"]["verdict"] == verdict
