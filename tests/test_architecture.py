"""The three rings (DESIGN §2): imports point inward only; the core never touches files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "sesstool"
RINGS = {"core": 0, "store": 1, "engine": 2, "render": 3, "cli": 4}
FORBIDDEN_IN_CORE = {"click", "rich", "zstandard", "os", "io", "pathlib", "shutil", "tempfile"}


def _modules(ring: str) -> list[Path]:
    return sorted((PKG / ring).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("ring", list(RINGS))
def test_imports_point_inward(ring: str) -> None:
    for path in _modules(ring):
        for name in _imports(path):
            if not name.startswith("sesstool."):
                continue
            target = name.split(".")[1]
            if target in RINGS and target != ring:
                # render and cli form the outer ring together; render may not import cli
                assert RINGS[target] < RINGS[ring] and not (ring == "render" and target == "cli"), (
                    f"{path.relative_to(PKG)} imports {name}: rings must point inward"
                )


def test_core_is_pure() -> None:
    for path in _modules("core"):
        imported = {n.split(".")[0] for n in _imports(path)}
        bad = imported & FORBIDDEN_IN_CORE
        assert not bad, f"{path.name} imports {bad}: the core ring does no I/O and no UI"
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("open", "print"), f"{path.name} calls {node.func.id}()"
