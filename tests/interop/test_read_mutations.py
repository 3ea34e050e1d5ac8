"""Read-path fidelity by differential mutation: one field of one event of a real log changed to
another JSON type, and sesstool's verdict class compared with the published library's full
load (inspect, stored events, deriveMessages / request envelope, load and read back).

The class is *accepted* (clean, interrupted or torn: the library loads the log) or the refusal
class (corrupt, unsupported). Bases: every lane log whose plaintext ends on a record boundary,
raw and zstd, packed and unpacked. A mutation replaces the value at one path of one body record
(envelope or payload, at any depth) with a value of another type among string, number, array,
object, null and boolean. Seeded: ``SESSTOOL_MUTATION_SEED`` (default 13) and
``SESSTOOL_MUTATIONS`` (default 300 per run; the figure in the closing note of issue 13 is a
run with 2000). Every disagreement is listed with its field path.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.interop._support import Log, cli_json, encode_log, library_read, zstd_frames

SEED = int(os.environ.get("SESSTOOL_MUTATION_SEED", "13"))
COUNT = int(os.environ.get("SESSTOOL_MUTATIONS", "300"))
ACCEPTED = frozenset({"clean", "interrupted", "torn"})
# one value per JSON type; a mutation picks one of another type than the current value's
VALUES: dict[str, Any] = {
    "string": "x",
    "number": 7,
    "array": [],
    "object": {},
    "null": None,
    "boolean": True,
}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path below ``value`` (not the root itself)."""
    out: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out.extend(paths(child, (*prefix, key)))
    return out


def show(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


@dataclass(frozen=True)
class Mutation:
    base: str
    line: int  # 1-based physical line (1 = header)
    event_type: Any
    path: str
    old_type: str
    new_type: str
    file: Path


def _plain_lines(log: Log) -> tuple[str, list[bytes]] | None:
    """The encoding and lines of a base log; None for a log with a torn tail (the library's
    torn-tail marker): its last frame or line cannot be rebuilt as the library wrote it."""
    if log.oracle.get("torn") is not None or not log.oracle.get("accepted"):
        return None
    data = log.path.read_bytes()
    zstd = data.startswith(b"\x28\xb5\x2f\xfd")
    text = b"".join(zstd_frames(data)) if zstd else data
    if not text.endswith(b"\n"):
        return None
    return ("zstd" if zstd else "raw"), text[:-1].split(b"\n")


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


@pytest.fixture(scope="session")
def mutations(lane_dir: Path, logs: dict[tuple[str, str], Log]) -> list[Mutation]:
    bases = []
    for key, log in sorted(logs.items()):
        parsed = _plain_lines(log)
        if parsed is not None:
            bases.append((f"{key[1]}/{key[0]}", parsed))
    assert len(bases) >= 40, "too few complete lane logs to mutate"
    rng = random.Random(SEED)
    out: list[Mutation] = []
    for i in range(COUNT):
        name, (encoding, lines) = rng.choice(bases)
        index = rng.randrange(1, len(lines))
        event = json.loads(lines[index])
        path = rng.choice(paths(event))
        old = event
        for key in path:
            old = old[key]
        old_type = json_type(old)
        new_type = rng.choice([t for t in VALUES if t != old_type])
        _set(event, path, json.loads(json.dumps(VALUES[new_type])))
        edited = [
            *lines[:index],
            json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "backslashreplace"),
            *lines[index + 1 :],
        ]
        target = (
            lane_dir
            / "mutations"
            / f"{i:04d}"
            / ("session.jsonl.zstd" if encoding == "zstd" else "session.jsonl")
        )
        target.parent.mkdir(parents=True)
        target.write_bytes(encode_log(encoding, edited))
        etype = json.loads(lines[index]).get("type")
        out.append(Mutation(name, index + 1, etype, show(path), old_type, new_type, target))
    return out


def test_verdict_class_is_the_librarys(node: str, lane_dir: Path, mutations: list[Mutation]) -> None:
    results = library_read(node, [{"file": str(m.file)} for m in mutations], lane_dir)
    disagreements: list[str] = []
    for mutation, library in zip(mutations, results, strict=True):
        theirs = "accepted" if library["accepted"] else library["error"]["class"]
        code, doc = cli_json("inspect", "--json", str(mutation.file))
        verdict = doc.get("verdict", {}).get("verdict") if code == 0 else f"exit {code}"
        ours = "accepted" if verdict in ACCEPTED else verdict
        if ours != theirs:
            why = library["error"]["message"] if not library["accepted"] else library.get("verdict")
            reason = doc.get("verdict", {}).get("reason", "")
            disagreements.append(
                f"{mutation.base} line {mutation.line} ({mutation.event_type}) {mutation.path}: "
                f"{mutation.old_type} → {mutation.new_type}: library {theirs} ({why}); "
                f"sesstool {verdict} ({reason})"
            )
    print(f"\n{len(mutations)} mutations (seed {SEED}): {len(disagreements)} disagreements")
    for line in disagreements:
        print("  " + line)
    assert len(mutations) == COUNT
    assert not disagreements, f"{len(disagreements)} of {len(mutations)} disagree:\n" + "\n".join(
        disagreements
    )
