"""The published upgrade chain as the oracle of ``sesstool migrate`` (spec §1.3, §13.A).

For every dsh fixture log below v2/v3 and every log the lane writes with the v0 library (raw
and zstd, packed and unpacked, clean, forked, crashed, compacted, with lone surrogates, plus the
library's own repairs of the crashed ones): ``sesstool migrate --to 2`` and ``--to 3`` must
equal what the published packages produce (upgrade.mjs), byte for byte — for zstd the
plaintext, and the framing of §9.2/§10 (a header-only first frame, one body frame, checksums).
Where the packages refuse, sesstool refuses; and the packages' codecs accept sesstool's v2/v3
output (decoded with the current-version validation, then re-encoded to the same bytes).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.interop._support import HERE, REPO, Log, cli_json, frame_length, run_node, zstd_frames

UPGRADE = HERE / "upgrade.mjs"
FIXTURE_LOGS = sorted(
    p
    for p in (REPO / "fixtures" / "dsh").glob("*/session*.jsonl*")
    if p.name.split(".")[1] in ("jsonl", "v1", "v2")
)
# sesstool refuses where the packages migrate: each with the decision that makes it so.
STRICTER = {
    "bad-utf8": (3, "invalid UTF-8", "DESIGN §7: invalid UTF-8 is corrupt; Node decodes it as U+FFFD"),
}
# sesstool migrates where the packages refuse: each with its decision and the raw fixture whose
# real migration sesstool's output must equal (test_lenient_cases_equal_the_raw_twins_migration).
LENIENT = {
    "zstd-one-frame-torn": (
        "crash-dangling-call",
        "docs/format.md 'zstd' (issue 15 item 7): a log compressed whole by the stock zstd tool keeps "
        "the raw log's torn last record, a tear, not 'complete frame contains a torn JSONL record'",
    ),
}


@dataclass(frozen=True)
class Case:
    name: str
    source: Path
    to: int
    exit_code: int
    report: dict[str, Any]
    output: Path
    oracle: dict[str, Any]
    expected: Path


def _sources(logs: dict[tuple[str, str], Log], copies: Path) -> Iterator[tuple[str, Path]]:
    for path in FIXTURE_LOGS:
        # a copy: migrate takes the session.lock of the source's directory, never the repo's
        copy = copies / path.parent.name / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        yield f"fixture:{path.parent.name}/{path.name}", copy
    for (variant, scenario), log in sorted(logs.items()):
        yield f"lane:{scenario}/{variant}", log.path
        if log.library_repaired.exists():
            yield f"lane-repaired:{scenario}/{variant}", log.library_repaired


def _version(path: Path) -> int:
    part = path.name.split(".")[1]
    return 0 if part == "jsonl" else int(part[1:])


@pytest.fixture(scope="session")
def upgrade_cases(node: str, lane_dir: Path, logs: dict[tuple[str, str], Log]) -> dict[str, Case]:
    out = lane_dir / "upgrade"
    jobs: list[dict[str, Any]] = []
    runs: list[tuple[str, Path, int, int, dict[str, Any], Path, Path]] = []
    for i, (name, source) in enumerate(_sources(logs, out / "fixtures")):
        for to in (2, 3):
            if _version(source) >= to:
                continue
            case_dir = out / f"{i:03d}-v{to}"
            case_dir.mkdir(parents=True)
            target = case_dir / source.name.replace("session", f"sesstool.v{to}", 1)
            code, report = cli_json("migrate", "--json", "--to", str(to), "-o", str(target), str(source))
            expected = case_dir / f"real.v{to}.jsonl"
            jobs.append({"file": str(source), "to": to, "out": str(expected)})
            runs.append((f"{name}→v{to}", source, to, code, report, target, expected))
    jobs_file = out / "jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    results: list[dict[str, Any]] = json.loads(run_node(node, UPGRADE, "--jobs", str(jobs_file)))
    return {
        name: Case(name, source, to, code, report, target, result, expected)
        for (name, source, to, code, report, target, expected), result in zip(runs, results, strict=True)
    }


@pytest.fixture(scope="session")
def acceptance(node: str, lane_dir: Path, upgrade_cases: dict[str, Case]) -> dict[str, dict[str, Any]]:
    """The packages' codecs decoding every sesstool output at its own version."""
    migrated = [case for case in upgrade_cases.values() if case.exit_code == 0]
    jobs = [{"file": str(case.output), "accept": case.to} for case in migrated]
    jobs_file = lane_dir / "upgrade" / "accept.json"
    jobs_file.write_text(json.dumps(jobs))
    results: list[dict[str, Any]] = json.loads(run_node(node, UPGRADE, "--jobs", str(jobs_file)))
    return {case.name: result for case, result in zip(migrated, results, strict=True)}


def plaintext_and_frames(path: Path) -> tuple[bytes, list[bytes] | None]:
    data = path.read_bytes()
    if not data.startswith(b"\x28\xb5\x2f\xfd"):
        return data, None
    frames = zstd_frames(data)
    return b"".join(frames), frames


def checksummed(data: bytes) -> Iterator[bool]:
    """Whether each frame of a complete zstd file sets the checksum flag (§9.2)."""
    offset = 0
    while offset < len(data):
        yield bool(data[offset + 4] & 0x04)
        offset += frame_length(data, offset)


def test_every_source_was_compared(upgrade_cases: dict[str, Case]) -> None:
    names = list(upgrade_cases)
    assert sum(n.startswith("lane:") for n in names) >= 2 * 4 * 13, names  # 13 scenarios × 4 variants
    assert sum(n.startswith("fixture:") for n in names) >= 40, names
    migrated = [c for c in upgrade_cases.values() if c.oracle["accepted"]]
    assert len(migrated) >= 100, "the oracle refused nearly everything: the chain is not running"


def test_migrate_is_the_real_chain_byte_for_byte(upgrade_cases: dict[str, Case]) -> None:
    """One assertion per case would be ~250 tests; every failure is listed at once instead."""
    failures: list[str] = []
    for case in upgrade_cases.values():
        problem = _compare(case)
        if problem:
            failures.append(f"{case.name}: {problem}")
    assert not failures, f"{len(failures)} of {len(upgrade_cases)} differ:\n" + "\n".join(failures)


def _compare(case: Case) -> str | None:
    oracle = case.oracle
    stderr = case.report.get("_stderr", "")
    if not oracle["accepted"]:
        if case.source.parent.name in LENIENT and case.name.startswith("fixture:"):
            return None if case.exit_code == 0 else f"expected the documented migration, got {case.exit_code}"
        if case.exit_code not in (3, 4):
            return (
                f"the real chain refuses ({oracle['error']['message']}) but sesstool exited {case.exit_code}"
            )
        return None
    stricter = STRICTER.get(case.source.parent.name)
    if stricter is not None and case.name.startswith("fixture:"):
        code, text, _why = stricter
        if case.exit_code != code or text not in stderr:
            return f"expected the documented refusal (exit {code}, {text!r}), got {case.exit_code}: {stderr}"
        return None
    if case.exit_code != 0:
        return f"the real chain migrates it but sesstool exited {case.exit_code}: {stderr.strip()}"
    plain, frames = plaintext_and_frames(case.output)
    expected = case.expected.read_bytes()
    if plain != expected:
        ours, theirs = plain.split(b"\n"), expected.split(b"\n")
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            if a != b:
                same = (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
                at = next(same, min(len(a), len(b)))
                start = max(0, at - 120)
                return (
                    f"line {i + 1} differs at byte {at}:\n  sesstool: …{a[start : at + 200]!r}\n"
                    f"  real:     …{b[start : at + 200]!r}"
                )
        return f"{len(ours) - 1} lines from sesstool, {len(theirs) - 1} from the real chain"
    if frames is not None:
        header_line = expected[: expected.index(b"\n") + 1]
        body = expected[len(header_line) :]
        if frames != ([header_line, body] if body else [header_line]):
            return f"zstd framing: {len(frames)} frames, not the header line then one body frame"
        if not all(checksummed(case.output.read_bytes())):
            return "a zstd frame lacks the checksum flag"
    return None


def test_lenient_cases_equal_the_raw_twins_migration(upgrade_cases: dict[str, Case]) -> None:
    """Where sesstool migrates a log the packages refuse (LENIENT), its output is exactly the real
    chain's migration of the raw log the file was made from."""
    checked = 0
    for case in upgrade_cases.values():
        lenient = LENIENT.get(case.source.parent.name)
        if lenient is None or not case.name.startswith("fixture:"):
            continue
        twin = upgrade_cases[f"fixture:{lenient[0]}/session.jsonl→v{case.to}"]
        assert twin.oracle["accepted"], twin.name
        assert case.exit_code == 0, case.report
        assert plaintext_and_frames(case.output)[0] == twin.expected.read_bytes(), case.name
        checked += 1
    assert checked == 2 * len(LENIENT)


def test_the_packages_accept_sesstools_output(
    upgrade_cases: dict[str, Case], acceptance: dict[str, dict[str, Any]]
) -> None:
    failures: list[str] = []
    for name, result in acceptance.items():
        case = upgrade_cases[name]
        if not result["accepted"]:
            failures.append(
                f"{name}: the v{case.to} codec refuses sesstool's output: {result['error']['message']}"
            )
            continue
        plain, _ = plaintext_and_frames(case.output)
        if result["reencoded"].encode("utf-8", "surrogatepass") != plain:
            failures.append(f"{name}: decoding and re-encoding with the v{case.to} codec changes the bytes")
    assert len(acceptance) >= 100
    assert not failures, "\n".join(failures)


def test_plugin_form_refusal_agrees(node: str, lane_dir: Path) -> None:
    """§13.A item 4, on the refusal fixture: both sides refuse, naming the same facts."""
    source = REPO / "fixtures" / "migrate" / "v0-to-v1" / "refuse-plugin-form" / "in.jsonl"
    jobs_file = lane_dir / "upgrade-plugin-form.json"
    jobs_file.write_text(json.dumps([{"file": str(source), "to": 2, "out": str(lane_dir / "pf.jsonl")}]))
    [real] = json.loads(run_node(node, UPGRADE, "--jobs", str(jobs_file)))
    assert not real["accepted"]
    assert (
        "source form must be one of instructions, catalog, snapshot, notice, relay, recall"
        in (real["error"]["message"])
    )
    code, report = cli_json("migrate", "--to", "2", "-o", str(lane_dir / "pf-sesstool.jsonl"), str(source))
    assert code == 4
    assert (
        "user/message 3 source form must be one of instructions, catalog, snapshot, notice"
        in report["_stderr"]
    )
