"""Differential tests: sesstool against the published DeepSeek Harness packages (format v0).

Every log here was written, crashed, repaired or forked by the real library (writer.mjs) or
made by editing such a log; the real library's report on it (reader.mjs / the oracle) is the
expected answer. Where the packages and the spec disagree, the packages win.
"""

from __future__ import annotations

import functools
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.interop._support import (
    CRASH_SCENARIOS,
    SCENARIOS,
    VARIANTS,
    Log,
    cli_json,
    craft_cases,
    frame_length,
    library_read,
    message_shape,
    sesstool_events,
)
from tests.interop.conftest import FORK_CHILD_ID, Crafted, Forked, Repaired

LOG_KEYS = [(variant, scenario) for variant in VARIANTS for scenario in SCENARIOS]
CRASH_KEYS = [(variant, scenario) for variant in VARIANTS for scenario in CRASH_SCENARIOS]
CRAFT_KEYS = [(craft.name, encoding) for craft, encoding in craft_cases()]
PINNED = {
    "@deepseek-ai/dsh-session": "0.1.0-rc.8",
    "@deepseek-ai/dsh-session-persistence": "0.1.0-rc.8",
    "@deepseek-ai/dsh-session-persistence-jsonl": "0.1.0-rc.8",
    "@deepseek-ai/cordis": "4.0.4",
}
EXIT_FOR_CLASS = {"corrupt": 3, "unsupported": 4}


def _ids(key: tuple[str, str]) -> str:
    return f"{key[1]}-{key[0]}" if key[0] in VARIANTS else f"{key[0]}-{key[1]}"


@functools.cache
def inspect(path: str) -> tuple[int, dict[str, Any]]:
    return cli_json("inspect", "--json", path)


@functools.cache
def derive(path: str) -> tuple[int, dict[str, Any]]:
    return cli_json("derive", "--format", "json", path)


def sesstool_verdict(path: Path) -> str:
    code, doc = inspect(str(path))
    verdict = doc.get("verdict")
    if code != 0 or not isinstance(verdict, dict):
        return f"inspect exit {code}: {doc.get('_stderr', '').strip()}"
    return str(verdict["verdict"])


def library_says(result: dict[str, Any]) -> str:
    if result["accepted"]:
        return f"accepted ({result['verdict']}, {len(result['closers'])} closer(s), torn={result['torn']})"
    error = result["error"]
    return f"{error['class']}: {error['name']}: {error['message']}"


def sesstool_says(path: Path) -> str:
    _, doc = inspect(str(path))
    findings = [f"{f['rule']} ({f['severity']}): {f['message']}" for f in doc.get("findings", [])[:3]]
    return "; ".join(findings) or "no findings"


def without(mapping: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k not in keys}


# ---------------------------------------------------------------------------------------------
# The generated logs


def test_manifest_matches_the_writer(index: dict[str, Any]) -> None:
    written = {(entry["variant"], entry["name"]): entry["kind"] for entry in index["logs"]}
    assert set(written) == set(LOG_KEYS)
    assert {key for key, kind in written.items() if kind == "crash"} == set(CRASH_KEYS)


def test_the_pinned_packages_wrote_them(index: dict[str, Any]) -> None:
    assert index["packages"] == PINNED
    assert int(index["node"].lstrip("v").split(".")[0]) >= 22


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_the_library_accepts_every_log_it_wrote(
    logs: dict[tuple[str, str], Log], key: tuple[str, str]
) -> None:
    log = logs[key]
    assert log.oracle["accepted"], library_says(log.oracle)
    expected = "clean" if log.kind == "clean" else log.oracle["verdict"]
    assert log.oracle["verdict"] == expected
    if log.kind == "crash":
        assert log.oracle["verdict"] in ("interrupted", "torn")


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_verdict(logs: dict[tuple[str, str], Log], key: tuple[str, str]) -> None:
    log = logs[key]
    assert sesstool_verdict(log.path) == log.oracle["verdict"], (
        f"library: {library_says(log.oracle)} | sesstool: {sesstool_says(log.path)}"
    )


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_events_count_and_types_in_order(logs: dict[tuple[str, str], Log], key: tuple[str, str]) -> None:
    log = logs[key]
    stored = log.oracle["stored"]
    code, doc = inspect(str(log.path))
    assert code == 0
    count = doc["stats"]["events"]
    assert count == len(stored)
    assert doc["stats"]["by_type"] == dict(Counter(kind for _, kind in stored))
    assert sesstool_events(log.path, count) == stored


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_derived_roles_sources_and_block_types(
    logs: dict[tuple[str, str], Log], key: tuple[str, str]
) -> None:
    log = logs[key]
    code, doc = derive(str(log.path))
    assert code == 0, doc
    assert [message_shape(m) for m in doc["messages"]] == [
        message_shape(m) for m in log.oracle["messagesStored"]
    ]


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_derived_messages_identical(logs: dict[tuple[str, str], Log], key: tuple[str, str]) -> None:
    log = logs[key]
    code, doc = derive(str(log.path))
    assert code == 0, doc
    assert doc["messages"] == log.oracle["messagesStored"]


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_request_envelope(logs: dict[tuple[str, str], Log], key: tuple[str, str]) -> None:
    log = logs[key]
    code, doc = derive(str(log.path))
    assert code == 0, doc
    assert doc["request"]["header"] == log.oracle["requestStored"]["header"]
    assert doc["request"]["context"] == log.oracle["requestStored"]["context"]


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_header(logs: dict[tuple[str, str], Log], key: tuple[str, str]) -> None:
    log = logs[key]
    _, doc = inspect(str(log.path))
    logical = without(doc["header"], "type")
    assert logical == log.oracle["header"]


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_repair_plan_is_the_library_closers(logs: dict[tuple[str, str], Log], key: tuple[str, str]) -> None:
    log = logs[key]
    _, doc = inspect(str(log.path))
    assert doc["repair"]["closers"] == log.oracle["closers"]


# ---------------------------------------------------------------------------------------------
# Repair: sesstool's output loads in the library with nothing left to do, and equals what the
# library's own load-time repair produces.


@pytest.mark.parametrize("key", CRASH_KEYS, ids=_ids)
def test_sesstool_repair_loads_in_the_library(
    sesstool_repairs: dict[tuple[str, str], Repaired], logs: dict[tuple[str, str], Log], key: tuple[str, str]
) -> None:
    repaired = sesstool_repairs[key]
    oracle = logs[key].oracle
    assert repaired.exit_code == 0, repaired.report
    assert repaired.library is not None, "sesstool wrote no output"
    assert repaired.library["accepted"], library_says(repaired.library)
    assert repaired.library["verdict"] == "clean", library_says(repaired.library)
    assert repaired.library["closers"] == []
    assert repaired.library["stored"] == oracle["repaired"]["events"]
    assert repaired.library["messages"] == oracle["messages"]


@pytest.mark.parametrize("key", CRASH_KEYS, ids=_ids)
def test_the_library_repair_is_clean_for_sesstool(
    logs: dict[tuple[str, str], Log], key: tuple[str, str]
) -> None:
    log = logs[key]
    assert sesstool_verdict(log.library_repaired) == "clean"
    _, doc = inspect(str(log.library_repaired))
    assert doc["stats"]["events"] == len(log.oracle["repaired"]["events"])


# ---------------------------------------------------------------------------------------------
# Fork: every sesstool fork of a v0 log loads in the library as a seeded session, equal to the
# library's own fork at the same boundary.


@pytest.mark.parametrize("key", LOG_KEYS, ids=_ids)
def test_fork_loads_as_the_library_fork(
    forks: dict[tuple[str, str], Forked], logs: dict[tuple[str, str], Log], key: tuple[str, str]
) -> None:
    forked = forks[key]
    log = logs[key]
    own = forked.library_fork
    assert own is not None
    if forked.exit_code != 0:
        # No completed turn to fork at by default: the library refuses the same prefix.
        assert forked.exit_code in (2, 4), forked.report
        assert not own["accepted"] and own["error"]["code"] == "OPEN_TURN", own
        return
    child = forked.library_child
    assert child is not None
    assert child["accepted"], library_says(child)
    assert child["verdict"] == "clean", library_says(child)
    boundary = forked.report["boundary"]["seq"]
    assert child["header"]["parentSession"] == log.id
    assert child["header"]["seedLength"] == boundary + 1
    assert own["accepted"], own
    assert without(child["header"], "createdAt") == without(own["header"], "createdAt")
    mine, theirs = child["storedEvents"], own["events"]
    assert [[e["seq"], e["type"]] for e in mine] == [[e["seq"], e["type"]] for e in theirs]
    # The end-seed marker's time is the fork's own clock; everything else is identical.
    strip = [
        without(e, "time") if e["type"] == "session/end-seed" and e["seq"] > boundary else e for e in mine
    ]
    strip_own = [
        without(e, "time") if e["type"] == "session/end-seed" and e["seq"] > boundary else e for e in theirs
    ]
    assert strip == strip_own


@pytest.mark.parametrize("variant", VARIANTS)
def test_fork_default_location_is_the_library_layout(
    forks: dict[tuple[str, str], Forked], logs: dict[tuple[str, str], Log], tmp_path: Path, variant: str
) -> None:
    log = logs[variant, "multi-turn"]
    root = tmp_path / "root"
    source = root / log.oracle["placedAt"]
    source.parent.mkdir(parents=True)
    shutil.copyfile(log.path, source)
    code, report = cli_json("fork", "--json", "--id", FORK_CHILD_ID, "--created-at", "1", str(source))
    assert code == 0, report
    own = forks[variant, "multi-turn"].library_fork
    assert own is not None
    assert Path(report["output"]["path"]).resolve() == (root / own["file"]).resolve()


@pytest.mark.parametrize("variant", VARIANTS)
def test_fork_at_an_end_seed_boundary(
    node: str,
    lane_dir: Path,
    forks: dict[tuple[str, str], Forked],
    logs: dict[tuple[str, str], Log],
    tmp_path: Path,
    variant: str,
) -> None:
    """A prefix that already ends with session/end-seed gets no second marker (library rule)."""
    log = logs[variant, "resume"]
    boundary = next(seq for seq, kind in log.oracle["stored"] if kind == "session/end-seed")
    target = tmp_path / log.path.name
    code, report = cli_json(
        "fork",
        "--json",
        "--id",
        FORK_CHILD_ID,
        "--created-at",
        "1",
        "--at",
        str(boundary),
        "-o",
        str(target),
        str(log.path),
    )
    assert code == 0, report
    child, parent = library_read(
        node,
        [
            {"file": str(target)},
            {"file": str(log.path), "fork": {"boundary": boundary, "childId": FORK_CHILD_ID}},
        ],
        lane_dir,
    )
    assert child["accepted"], library_says(child)
    assert child["storedEvents"] == parent["fork"]["events"]
    assert without(child["header"], "createdAt") == without(parent["fork"]["header"], "createdAt")


# ---------------------------------------------------------------------------------------------
# Crafted defects: the library's verdict (refusal class, or its tail/closers) is sesstool's.


@pytest.mark.parametrize("key", CRAFT_KEYS, ids=_ids)
def test_crafted_verdict(crafted: dict[tuple[str, str], Crafted], key: tuple[str, str]) -> None:
    case = crafted[key]
    assert sesstool_verdict(case.path) == case.library["verdict"], (
        f"library: {library_says(case.library)} | sesstool: {sesstool_says(case.path)}"
    )


@pytest.mark.parametrize("key", CRAFT_KEYS, ids=_ids)
def test_crafted_derive(crafted: dict[tuple[str, str], Crafted], key: tuple[str, str]) -> None:
    """A log the library refuses, sesstool's derive refuses with the same class (exit 3/4); a
    log it accepts derives to the library's events and messages."""
    case = crafted[key]
    code, doc = derive(str(case.path))
    if not case.library["accepted"]:
        assert code == EXIT_FOR_CLASS[case.library["error"]["class"]], (library_says(case.library), doc)
        return
    assert code == 0, (library_says(case.library), doc)
    assert doc["messages"] == case.library["messagesStored"]
    _, report = inspect(str(case.path))
    count = report["stats"]["events"]
    assert count == len(case.library["stored"])
    assert sesstool_events(case.path, count) == case.library["stored"]


@pytest.mark.parametrize("key", CRAFT_KEYS, ids=_ids)
def test_crafted_repair(
    crafted: dict[tuple[str, str], Crafted],
    crafted_repairs: dict[tuple[str, str], Repaired],
    key: tuple[str, str],
) -> None:
    """Refused by the library: sesstool's repair refuses with the same class. Accepted: the
    repair plan is the library's closers, and a repair (torn or interrupted) loads in the
    library with nothing left to do, equal to the library's own repair."""
    case = crafted[key]
    if not case.library["accepted"]:
        code, doc = cli_json("repair", "--dry-run", "--json", str(case.path))
        assert code == EXIT_FOR_CLASS[case.library["error"]["class"]], (library_says(case.library), doc)
        return
    _, report = inspect(str(case.path))
    assert report["repair"]["closers"] == case.library["closers"]
    if case.library["verdict"] == "clean":
        return
    repaired = crafted_repairs[key]
    assert repaired.exit_code == 0, repaired.report
    assert repaired.library is not None and repaired.library["accepted"], repaired.library
    assert repaired.library["verdict"] == "clean", library_says(repaired.library)
    assert repaired.library["stored"] == case.library["repaired"]["events"]


# ---------------------------------------------------------------------------------------------
# A zstd log cut inside its header frame (issue 12: a seeded header recovered from the torn frame
# was judged against the empty body). The library refuses it whole, before reading the header.

HEADER_FRAME_CUTS = [(name, where) for name in ("forked-child", "v0-tiny") for where in ("last", "half", "5")]


@pytest.mark.parametrize("key", HEADER_FRAME_CUTS, ids=lambda key: f"{key[0]}-{key[1]}")
def test_cut_inside_the_header_frame(node: str, lane_dir: Path, key: tuple[str, str]) -> None:
    name, where = key
    data = (FIXTURES / "dsh" / name / "session.jsonl.zstd").read_bytes()
    frame0 = frame_length(data, 0)
    cut = {"last": frame0 - 1, "half": frame0 // 2, "5": 5}[where]
    path = lane_dir / f"header-cut-{name}-{cut}.jsonl.zstd"
    path.write_bytes(data[:cut])
    (library,) = library_read(node, [{"file": str(path)}], lane_dir)
    assert not library["accepted"] and library["error"]["class"] == "corrupt", library_says(library)
    _, doc = inspect(str(path))
    assert doc["verdict"]["verdict"] == "corrupt"
    assert [f["rule"] for f in doc["findings"]] == ["zstd-torn-frame", "missing-header"], sesstool_says(path)


# ---------------------------------------------------------------------------------------------
# A log compressed whole by the stock zstd CLI (issue 15 item 7; docs/format.md "zstd"): the
# library refuses it for its framing alone; sesstool reads the records it holds (the raw twin's,
# which the library accepts) with a warning, and its repair is a log the library loads.

ONE_FRAME_LOGS = [("zstd-one-frame", "clean-multiturn"), ("zstd-one-frame-torn", "crash-dangling-call")]


@pytest.mark.parametrize("key", ONE_FRAME_LOGS, ids=lambda key: key[0])
def test_one_frame_log(node: str, lane_dir: Path, key: tuple[str, str]) -> None:
    name, raw_name = key
    one_frame = FIXTURES / "dsh" / name / "session.jsonl.zstd"
    raw = FIXTURES / "dsh" / raw_name / "session.jsonl"
    source = lane_dir / f"{name}.jsonl.zstd"
    shutil.copyfile(one_frame, source)
    code, report = cli_json(
        "repair", "--json", "-o", str(lane_dir / f"{name}.repaired.jsonl.zstd"), str(source)
    )
    assert code == 0, report
    library, twin, repaired = library_read(
        node, [{"file": str(one_frame)}, {"file": str(raw)}, {"file": report["output"]["path"]}], lane_dir
    )
    assert not library["accepted"], library_says(library)
    assert "first frame is not exactly one header line" in library["error"]["message"]
    assert twin["accepted"], library_says(twin)
    _, doc = inspect(str(one_frame))
    assert doc["findings"][0]["rule"] == "zstd-single-frame"
    assert doc["verdict"]["verdict"] == twin["verdict"], sesstool_says(one_frame)
    assert sesstool_events(one_frame, doc["stats"]["events"]) == twin["stored"]
    assert repaired["accepted"] and repaired["verdict"] == "clean", library_says(repaired)
    assert repaired["stored"] == (
        twin["repaired"]["events"] if twin["verdict"] != "clean" else twin["stored"]
    )
