"""The closers streamed (``core.closer_list.Closers``, ``render.json_stream``) print and write
exactly what the closers held in memory did (issue 11 item 1): every dsh, mini-agent, Codex
and Claude Code fixture, raw and zstd, through ``inspect`` (text and ``--json``), ``repair`` (its report as
text and ``--json``, the bytes it published; ``--salvage`` too), ``fork --json`` (and the
child's bytes) and ``migrate --repair`` (the bytes), once as shipped and once with every closer
collection made a list, every inspect row a tuple and every JSON document dumped whole with
``dumps_pretty``: the in-memory code these replaced. The goldens (from before) pin part of the
same bytes."""

from __future__ import annotations

import shutil
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sesstool.core.closer_list import Closers
from sesstool.core.jsonline import dumps_pretty
from sesstool.core.model import ScanResult
from sesstool.dialects.base import Cause, Row
from sesstool.dialects.claude.dialect import ClaudeDialect
from sesstool.dialects.codex import CodexDialect
from sesstool.dialects.dsh import DshDialect
from sesstool.dialects.mini import MiniDialect
from sesstool.engine import repair as repair_engine
from sesstool.render import json_stream, jsonout
from tests.adversarial.test_waiting_calls import mini_never_answered
from tests.conftest import FIXTURES, Sesstool
from tests.spilled_outputs import held

LOGS = sorted(
    p
    for dialect in ("dsh", "mini", "codex", "claude")
    for p in (FIXTURES / dialect).rglob("*.jsonl*")
    if p.suffix in (".jsonl", ".zstd") and "expected" not in p.parts
)
CHILD = {"codex": "0199a213-81c0-7800-8aa1-bbab2a035a53", "claude": "0b0c0a3e-0000-4000-8000-00000000c0de"}
Outputs = list[tuple[str, int, bytes, bytes]]


def _held_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-memory code: closers a list, rows a tuple, a document dumped whole."""
    for cls in (DshDialect, MiniDialect, CodexDialect, ClaudeDialect):
        closers, rows = cls.closers, cls.inspect_rows

        def listed(
            self: Any, scan: ScanResult, cause: Cause = "interrupted", _of: Any = closers
        ) -> Collection[dict[str, Any]]:
            return list(_of(self, scan, cause))

        def tupled(self: Any, scan: ScanResult, _of: Any = rows) -> Iterable[Row]:
            return tuple(_of(self, scan))

        monkeypatch.setattr(cls, "closers", listed)
        monkeypatch.setattr(cls, "inspect_rows", tupled)

    def whole(doc: dict[str, Any]) -> Iterator[bytes]:
        return iter([dumps_pretty(held(doc))])

    monkeypatch.setattr(json_stream, "pretty_pieces", whole)
    monkeypatch.setattr(jsonout, "pretty_pieces", whole)


def _outputs(sesstool: Sesstool, log: Path, where: Path) -> Outputs:
    """Every command's exit status and standard output (``where`` as ``<dir>``) and the bytes it
    wrote, each on a fresh copy of ``log`` (a repair takes its directory's lock)."""
    child = CHILD.get(log.relative_to(FIXTURES).parts[0], "child")
    commands: dict[str, tuple[str, ...]] = {
        "inspect": ("inspect",),
        "inspect-json": ("inspect", "--json"),
        "repair": ("repair", "-o", "{out}"),
        "repair-json": ("repair", "--json", "-o", "{out}"),
        "repair-dry": ("repair", "--json", "--dry-run", "-o", "{out}"),
        "repair-salvage": ("repair", "--json", "--salvage", "-o", "{out}"),
        "fork": ("fork", "--json", "--id", child, "--created-at", "5", "-o", "{out}"),
        "migrate": ("migrate", "--repair", "-o", "{out}"),
    }
    seen: Outputs = []
    for name, args in commands.items():
        run = where / name
        run.mkdir(parents=True)
        copy = run / log.name
        shutil.copyfile(log, copy)
        target = run / f"out{''.join(log.suffixes)}"
        result = sesstool(*(a.replace("{out}", str(target)) for a in args), str(copy))
        written = target.read_bytes() if target.exists() else b""
        seen.append(
            (name, result.exit_code, result.stdout_bytes.replace(str(run).encode(), b"<dir>"), written)
        )
    return seen


def test_there_are_closers_to_compare(sesstool: Sesstool) -> None:
    assert len(LOGS) > 80 and sum(p.suffix == ".zstd" for p in LOGS) > 20
    with_closers = [
        p for p in LOGS if b'"closers": [\n' in sesstool("inspect", "--json", str(p)).stdout_bytes
    ]
    assert len(with_closers) >= 20 and any(p.suffix == ".zstd" for p in with_closers)


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(FIXTURES)) for p in LOGS])
def test_streamed_closers_print_and_write_what_held_ones_did(
    sesstool: Sesstool, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    streamed = _outputs(sesstool, log, tmp_path / "streamed")
    with monkeypatch.context() as patched:
        _held_mode(patched)
        in_memory = _outputs(sesstool, log, tmp_path / "held")
    assert [(n, c) for n, c, _, _ in streamed] == [(n, c) for n, c, _, _ in in_memory]
    for (name, _, out, written), (_, _, out_held, written_held) in zip(streamed, in_memory, strict=True):
        assert out == out_held, name
        assert written == written_held, name


@pytest.mark.parametrize("calls", [20, 21, 25])
def test_a_report_shows_the_ends_of_a_long_closer_list(
    sesstool: Sesstool, tmp_path: Path, calls: int
) -> None:
    """docs/format.md "Reports": up to 20 closers all shown; past that the first and last 10,
    how many lie between, and the whole count in the note."""
    log = mini_never_answered(tmp_path, calls)
    result = sesstool("report", str(log))
    assert result.exit_code == 0, result.stderr
    listed = result.stdout.split("<pre class='closers'>")[1].split("</pre>")[0].split("\n")
    quote = "&quot;"
    ids = [
        row.split(f"tool_call_id{quote}:{quote}")[1].split(quote)[0]
        for row in listed
        if "tool_call_id" in row
    ]
    assert f"would append {calls} closer(s)" in result.stdout
    if calls <= 20:
        assert ids == [f"call_{n}" for n in range(calls)] and len(listed) == calls
    else:
        assert ids == [f"call_{n}" for n in (*range(10), *range(calls - 10, calls))]
        assert listed[10] == f"… {calls - 20} more closers (sesstool repair --dry-run lists them all)"


class _Tampered:
    """A sink that changes what ``_produce`` wrote at its end: one byte more, one byte less, or
    the last byte (a closer's newline) replaced."""

    def __init__(self, sink: Any, how: str) -> None:
        self.sink, self.how, self.held = sink, how, b""

    def write(self, data: bytes) -> None:
        self.sink.write(self.held)
        self.held = bytes(data)

    def close(self) -> None:
        if self.how == "longer":
            self.held += b"x"
        elif self.how == "shorter":
            self.held = self.held[:-1]
        else:
            self.held = self.held[:-1] + b" "
        self.sink.write(self.held)


@pytest.mark.parametrize("how", ["longer", "shorter", "changed"])
def test_a_raw_repair_whose_closers_differ_on_disk_is_refused(
    sesstool: Sesstool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The streamed read-back sees a byte after the closers, one missing, one changed (the held
    code compared the joined closers with the file's tail)."""
    log = mini_never_answered(tmp_path, 300)
    real = repair_engine._produce

    def produce(sink: Any, *args: Any) -> None:
        tampered = _Tampered(sink, how)
        real(tampered, *args)
        tampered.close()

    monkeypatch.setattr(repair_engine, "_produce", produce)
    target = tmp_path / "out.jsonl"
    result = sesstool("repair", "-o", str(target), str(log))
    assert result.exit_code == 6, result.stdout + result.stderr
    assert "verification: the appended records are not" in result.stderr
    assert not target.exists()


def test_several_paths_stream_each_document_into_its_entry(sesstool: Sesstool, tmp_path: Path) -> None:
    """``inspect --json A B``: each entry of ``reports`` is the document that path alone prints,
    indented as the code that gathered each document first wrote it (``inspect_many``)."""
    logs = [mini_never_answered(tmp_path, 3000), *[p for p in LOGS if "crash" in str(p)][:4]]
    singles = [sesstool("inspect", "--json", str(p)).stdout_bytes for p in logs]
    version = orjson.loads(singles[0])["schema_version"]
    head = {"schema_version": version, "command": "inspect", "reports": []}
    expected = dumps_pretty(head)[: -len(b"[]\n}")].rstrip() + b" [\n    "
    expected += b",\n    ".join(doc.rstrip(b"\n").replace(b"\n", b"\n    ") for doc in singles)
    expected += b"\n  ]\n}\n"
    several = sesstool("inspect", "--json", *map(str, logs))
    assert several.exit_code == 0, several.stderr
    assert several.stdout_bytes == expected


def _lazy(items: list[Any]) -> Closers[Any]:
    return Closers(lambda: iter(items), len(items))


SURROGATE = "\ud800"
DOCUMENTS: list[dict[str, Any]] = [
    {"a": _lazy([])},
    {"a": 1, "repair": {"closers": _lazy([{"x": [1, {"y": "z"}]}, {}, [], "s", 2.5, None])}, "b": [1]},
    {"one": _lazy([1, 2]), "two": {"deeper": {"three": _lazy([{"k": "v"}])}}, "tail": {}},
    {"a": _lazy([{"id": f"call_{SURROGATE}"}])},  # a member orjson refuses: all in ASCII escapes
    {"a": f"é{SURROGATE}", "b": _lazy([{"id": "é"}])},  # the rest refused: the same
    {"a": "streamed-0", "b": _lazy(["streamed-0"]), "c": "\u2028 ü"},
]


@pytest.mark.parametrize("doc", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_pretty_pieces_are_the_whole_dump(doc: dict[str, Any]) -> None:
    """``render.json_stream.pretty_pieces``: what ``dumps_pretty`` gives for the document held
    whole — nesting, empty arrays, several arrays, ASCII escapes when orjson refuses any part."""
    assert b"".join(json_stream.pretty_pieces(doc)) == dumps_pretty(held(doc))
