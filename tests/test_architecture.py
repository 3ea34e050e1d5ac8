"""The three rings (DESIGN §2): imports point inward only; the core never touches files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "sesstool"
RINGS = {"core": 0, "store": 1, "engine": 2, "fleet": 3, "render": 4, "cli": 5}
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


# The [fleet] extra's libraries, and the only ring each may be imported in: fsspec I/O and the
# Parquet writer are store-level (only the store touches files and objects); Dask belongs to the
# fleet ring alone.
EXTRA_HOMES = {
    "fsspec": "store",
    "s3fs": "store",
    "boto3": "store",
    "botocore": "store",
    "pyarrow": "store",
    "dask": "fleet",
    "distributed": "fleet",
}


def test_extra_libraries_stay_in_their_ring() -> None:
    for path in sorted(PKG.rglob("*.py")):
        ring = path.relative_to(PKG).parts[0]
        for name in _imports(path):
            home = EXTRA_HOMES.get(name.split(".")[0])
            assert home is None or home == ring, (
                f"{path.relative_to(PKG)} imports {name} (belongs in {home}/)"
            )


def test_fleet_uses_engine_entry_points_not_the_scanner() -> None:
    """The fleet runs the single-file commands; it never drives the scanner or readers itself."""
    for path in sorted((PKG / "fleet").rglob("*.py")):
        for name in _imports(path):
            assert not name.startswith(
                (
                    "sesstool.core.scanner",
                    "sesstool.store.raw_reader",
                    "sesstool.store.zstd_reader",
                    "sesstool.store.readers",
                )
            ), f"{path.name} imports {name}"


def test_core_install_imports_no_extra_library() -> None:
    """Every single-file command runs without the [fleet] extra: none of its libraries is imported."""
    import subprocess
    import sys

    code = (
        "import sys; from sesstool.cli.main import main\n"
        "fixture = sys.argv[1]\n"
        "for args in (['validate', fixture], ['inspect', '--json', fixture], ['fleet', '--help']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {set(EXTRA_HOMES)!r})\n"
        "sys.stderr.write(repr(loaded))\n"
        "sys.exit(1 if loaded else 0)\n"
    )
    fixture = str(PKG.parent / "fixtures" / "dsh" / "v0-tiny" / "session.jsonl.zstd")
    done = subprocess.run([sys.executable, "-c", code, fixture], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
