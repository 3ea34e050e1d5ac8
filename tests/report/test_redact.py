"""Redaction: `sesstool redact` publishes a copy with every planted secret replaced (same value,
same token), the copy reads as the same log, the source keeps its bytes; `--redact` hides the
same values from every derive format and from the report page."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import zstandard

from tests.conftest import FIXTURES, Sesstool
from tests.report.planted import SECRETS, planted_log

TOKEN = re.compile(r"\[REDACTED:([a-z0-9-]+):(\d+)\]")


def _zstd_twin(raw: Path) -> Path:
    """Frame 1 = the header line, then one frame for the rest (spec §9.2)."""
    data = raw.read_bytes()
    head, body = data.split(b"\n", 1)
    c = zstandard.ZstdCompressor(level=3, write_checksum=True)
    out = raw.with_name(raw.name + ".zstd")
    out.write_bytes(c.compress(head + b"\n") + c.compress(body))
    return out


def _plain(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        import io

        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as r:
            return r.read()
    return data


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verdict(sesstool: Sesstool, path: Path) -> tuple[str, list[tuple[str, str, int | None]]]:
    doc = json.loads(sesstool("validate", "--format", "json", str(path)).stdout)
    (f,) = doc["files"]
    return f["verdict"]["verdict"], sorted(
        (x["rule"], x["severity"], x["address"]["line"]) for x in f["findings"]
    )


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_every_planted_secret_is_replaced(sesstool: Sesstool, tmp_path: Path, zstd: bool) -> None:
    source = planted_log(tmp_path / "session.jsonl")
    if zstd:
        source = _zstd_twin(source)
    before = _sha(source)
    result = sesstool("redact", "--json", str(source))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    out = Path(doc["output"]["path"])
    assert out.name == ("session.redacted.jsonl.zstd" if zstd else "session.redacted.jsonl")
    text = _plain(out).decode()
    for name, value in SECRETS.items():
        assert value not in text, name
        assert json.dumps(value)[1:-1] not in text, name
    tokens = TOKEN.findall(text)
    # the AWS key is planted four times (user text, env dump, two echo arguments): one token
    aws = {t for t in tokens if t[0] == "aws-access-key"}
    assert aws == {("aws-access-key", "1")} and sum(1 for t in tokens if t[0] == "aws-access-key") == 4
    assert doc["replaced"]["by_kind"] == {
        "api-key": 1, "aws-access-key": 1, "basic-auth-credentials": 1, "github-token": 1,
        "private-key": 1, "secret-keyword": 1, "slack-token": 1, "stripe-access-key": 1,
    }  # fmt: skip
    assert doc["replaced"]["values"] == len(SECRETS) and doc["replaced"]["records_reencoded"] == 0
    assert _sha(source) == before and doc["source"]["sha256"] == before
    assert _verdict(sesstool, out) == _verdict(sesstool, source)
    # records with nothing to hide are carried byte for byte
    src_lines, out_lines = _plain(source).split(b"\n"), _plain(out).split(b"\n")
    assert len(src_lines) == len(out_lines)
    for a, b in zip(src_lines, out_lines, strict=True):
        if not any(v.encode() in a or json.dumps(v)[1:-1].encode() in a for v in SECRETS.values()):
            assert a == b


def test_a_torn_log_stays_torn_and_its_tail_is_redacted(sesstool: Sesstool, tmp_path: Path) -> None:
    source = planted_log(tmp_path / "session.jsonl", torn=True)
    result = sesstool("redact", str(source), "-o", str(tmp_path / "copy.jsonl"))
    assert result.exit_code == 0, result.stderr
    out = (tmp_path / "copy.jsonl").read_bytes()
    assert not out.endswith(b"\n") and SECRETS["stripe"].encode() not in out
    assert _verdict(sesstool, tmp_path / "copy.jsonl") == _verdict(sesstool, source)
    assert _verdict(sesstool, source)[0] == "torn"
    refused = sesstool("redact", str(source), "--encoding", "zstd", "-o", str(tmp_path / "z.jsonl.zstd"))
    assert refused.exit_code == 3 and "torn" in refused.stderr
    assert not (tmp_path / "z.jsonl.zstd").exists()


CRASH_LOGS = [
    p
    for scenario in (
        "dsh/crash-dangling-call", "dsh/crash-not-started", "dsh/torn-tail", "dsh/clean-multiturn",
        "mini/dangling-call", "mini/not-started", "mini/torn-tail", "mini/basic",
    )
    for p in sorted((FIXTURES / scenario).glob("session*.jsonl*"))
]  # fmt: skip


@pytest.mark.parametrize("log", CRASH_LOGS, ids=[str(p.relative_to(FIXTURES)) for p in CRASH_LOGS])
def test_fixture_copies_read_as_the_same_log(sesstool: Sesstool, tmp_path: Path, log: Path) -> None:
    source = tmp_path / log.name
    source.write_bytes(log.read_bytes())
    out = tmp_path / ("copy.jsonl.zstd" if log.name.endswith(".zstd") else "copy.jsonl")
    result = sesstool("redact", str(source), "-o", str(out))
    torn_zstd = log.name.endswith(".zstd") and _verdict(sesstool, source)[0] == "torn"
    if torn_zstd:
        assert result.exit_code == 3 and "torn" in result.stderr  # documented refusal
        assert not out.exists()
        return
    assert result.exit_code == 0, result.stderr
    assert source.read_bytes() == log.read_bytes()
    assert _plain(out) == _plain(source), "nothing to hide: the same records"
    assert _verdict(sesstool, out) == _verdict(sesstool, source)


def test_redact_never_overwrites(sesstool: Sesstool, tmp_path: Path) -> None:
    source = planted_log(tmp_path / "session.jsonl")
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    result = sesstool("redact", str(source), "-o", str(taken))
    assert result.exit_code == 6 and taken.read_text() == "mine\n"


@pytest.mark.parametrize("fmt", ["json", "jsonl", "text", "markdown"])
def test_derive_redact_every_format(sesstool: Sesstool, tmp_path: Path, fmt: str) -> None:
    source = planted_log(tmp_path / "session.jsonl")
    plain = sesstool("derive", "--format", fmt, str(source))
    assert SECRETS["aws"] in plain.stdout  # the secrets are really there to hide
    result = sesstool("derive", "--format", fmt, "--redact", str(source))
    assert result.exit_code == 0, result.stderr
    for name, value in SECRETS.items():
        for spelled in (value, json.dumps(value)[1:-1]):
            assert spelled not in result.stdout, name
    assert "[REDACTED:aws-access-key:1]" in result.stdout
    assert "redacted: " in result.stderr and "aws-access-key 1" in result.stderr


def test_report_redact(sesstool: Sesstool, tmp_path: Path) -> None:
    source = planted_log(tmp_path / "session.jsonl")
    result = sesstool("report", "--redact", str(source))
    assert result.exit_code == 0, result.stderr
    for name, value in SECRETS.items():
        assert value not in result.stdout and json.dumps(value)[1:-1] not in result.stdout, name
    assert "id='redactions'" in result.stdout and "aws-access-key 1" in result.stderr


def test_remembered_finds_are_the_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Redactor.secrets_in`` remembers what it found in short texts (a fixed number of them,
    forgotten all at once): every text, seen again and after the memo was emptied, answers what a
    fresh redactor finds, and the redacted texts and tokens are the ones without a memo."""
    from sesstool.core import redact

    texts = [*SECRETS.values(), "role", "content", "user", f"key {next(iter(SECRETS.values()))}", "x" * 200]
    texts += [t[:12] for t in SECRETS.values()]
    fresh = [redact.Redactor().secrets_in(t) for t in texts]
    assert sum(map(bool, fresh)) >= 5  # the planted values are found
    monkeypatch.setattr(redact, "_MEMO_SIZE", 3)
    remembering = redact.Redactor()
    for _ in range(3):
        assert [remembering.secrets_in(t) for t in texts] == fresh
    unaided = redact.Redactor()
    monkeypatch.setattr(redact, "_MEMO_LENGTH", -1)  # nothing remembered
    redacted = [unaided.text(t) for t in texts * 2]
    monkeypatch.setattr(redact, "_MEMO_LENGTH", 128)
    again = redact.Redactor()
    assert [again.text(t) for t in texts * 2] == redacted and again.counts() == unaided.counts()
