"""Golden outputs for every fixture log, raw and zstd, compared exactly.

Refresh with ``make goldens`` (SESSTOOL_UPDATE_GOLDENS=1) — and read the diff before committing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, Sesstool, check_golden

DSH = FIXTURES / "dsh"
# Budgets that let the bad-bytes fixtures stay small in the repository.
EXTRA_ARGS: dict[str, list[str]] = {
    "bad-long-line": ["--max-line-bytes", "262144"],
    "zstd-bomb": ["--max-decompressed", "64M"],
}


def _logs() -> list[Path]:
    logs = [
        p
        for root in (DSH, FIXTURES / "mini")
        for p in sorted(root.glob("*/session*.jsonl*"))
        if p.name.endswith((".jsonl", ".zstd"))
    ]
    assert len(logs) >= 70, "fixture corpus missing"
    return logs


LOGS = _logs()
IDS = [f"{p.parent.parent.name}/{p.parent.name}/{p.name}" for p in LOGS]


def _golden(log: Path, command: str, ext: str) -> Path:
    return log.parent / "expected" / f"{log.name}.{command}.{ext}"


def _args(log: Path) -> list[str]:
    return [str(log.relative_to(ROOT)), *EXTRA_ARGS.get(log.parent.name, [])]


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_inspect_json(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("inspect", "--json", *_args(log))
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout)
    check_golden(_golden(log, "inspect", "json"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_inspect_human(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("inspect", "--timeline", *_args(log))
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout
    check_golden(_golden(log, "inspect", "txt"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_validate_json(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("validate", "--format", "json", *_args(log))
    doc = json.loads(result.stdout)
    assert result.exit_code == (1 if doc["failed"] else 0), result.stderr
    check_golden(_golden(log, "validate", "json"), result.stdout)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_derive_json(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("derive", "--format", "json", *_args(log))
    if result.exit_code == 0:
        json.loads(result.stdout)
        actual = result.stdout
    else:
        assert result.stdout == ""
        actual = json.dumps({"exit_code": result.exit_code, "stderr": result.stderr}, indent=2) + "\n"
    check_golden(_golden(log, "derive", "json"), actual)


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_derive_markdown(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("derive", "--format", "markdown", *_args(log))
    if result.exit_code == 0:
        actual = result.stdout
    else:
        assert result.stdout == ""
        actual = f"exit {result.exit_code}\n{result.stderr}"
    check_golden(_golden(log, "derive", "md"), actual)


CRASHES = [p for p in LOGS if p.parent.name in ("crash-dangling-call", "crash-not-started", "dangling-call")]


CRASH_IDS = [f"{p.parent.parent.name}/{p.parent.name}/{p.name}" for p in CRASHES]


# Every report page inlines the same stylesheet and script (render/report_assets.py): one golden
# holds them, each page's golden holds the rest with a marker where each element's text stands.
# The comparison stays exact: the page must equal its golden with the assets put back.
REPORT_ASSETS = FIXTURES / "report-assets.expected.html"
_ASSET = re.compile(r"<(style|script)>(.*?)</\1>", re.S)


def _asset_marker(tag: str) -> str:
    return f"<{tag}>[{REPORT_ASSETS.name}: the {tag}]</{tag}>"


def _check_report(path: Path, page: str) -> None:
    assets = {m.group(1): m.group(0) for m in _ASSET.finditer(page)}
    assert sorted(assets) == ["script", "style"] and len(_ASSET.findall(page)) == 2, "one of each"
    body = _ASSET.sub(lambda m: _asset_marker(m.group(1)), page)
    check_golden(REPORT_ASSETS, f"{assets['style']}\n{assets['script']}\n")
    check_golden(path, body)
    shared = {m.group(1): m.group(0) for m in _ASSET.finditer(REPORT_ASSETS.read_text())}
    rebuilt = path.read_text()
    for tag, element in shared.items():
        rebuilt = rebuilt.replace(_asset_marker(tag), element)
    assert rebuilt == page, f"report page differs from {path.relative_to(ROOT)} + {REPORT_ASSETS.name}"


@pytest.mark.parametrize("log", CRASHES, ids=CRASH_IDS)
def test_report_html(sesstool: Sesstool, log: Path) -> None:
    result = sesstool("report", *_args(log))
    assert result.exit_code == 0, result.stderr
    _check_report(_golden(log, "report", "html"), result.stdout)
