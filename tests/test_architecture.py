"""The rings (DESIGN §2, docs/architecture.md): imports point inward only, the core never touches
files, the dialect packages sit below the engine, no import cycle, no dialect name compared
outside the dialect packages and the registry."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "sesstool"
# cli → render → fleet → engine → dialects → store → core (render and cli form the outer ring together)
RINGS = {"core": 0, "store": 1, "dialects": 2, "engine": 3, "fleet": 4, "render": 5, "cli": 6}
FORBIDDEN_IN_CORE = {"click", "rich", "zstandard", "os", "io", "pathlib", "shutil", "tempfile"}
# the dialect packages are pure too (paths as names only): the store walks what they describe
FORBIDDEN_IN_DIALECTS = FORBIDDEN_IN_CORE - {"pathlib"}
DIALECT_SHARED = {"base", "envelope", "registry"}  # dialects/*.py: the contract, not a dialect


def _modules(ring: str) -> list[Path]:
    return sorted((PKG / ring).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports; ``from pkg import mod`` counts as ``pkg.mod`` when that is
    a module of the project."""
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            submodules = {f"{node.module}.{a.name}" for a in node.names} if _exists(node.module) else set()
            submodules = {m for m in submodules if _exists(m)}
            names.update(submodules)
            if len(submodules) < len(node.names):  # something else than submodules comes from it
                names.add(node.module)
    return names


def _exists(module: str) -> bool:
    if not module.startswith("sesstool."):
        return False
    rel = Path(*module.split(".")[1:])
    return (PKG / rel).with_suffix(".py").is_file() or (PKG / rel / "__init__.py").is_file()


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


def _forbid_io(ring: str, forbidden: set[str]) -> None:
    for path in _modules(ring):
        imported = {n.split(".")[0] for n in _imports(path)}
        bad = imported & forbidden
        assert not bad, f"{path.relative_to(PKG)} imports {bad}: the {ring} ring does no I/O and no UI"
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("open", "print"), f"{path.name} calls {node.func.id}()"


def test_core_is_pure() -> None:
    _forbid_io("core", FORBIDDEN_IN_CORE)


def test_dialects_are_pure() -> None:
    _forbid_io("dialects", FORBIDDEN_IN_DIALECTS)


def test_a_dialect_package_imports_no_other_dialect() -> None:
    """A dialect builds on the contract (``base``, ``envelope``), never on another dialect; only
    the registry knows them all."""
    for package in sorted(p for p in (PKG / "dialects").iterdir() if p.is_dir() and p.name != "__pycache__"):
        for path in sorted(package.rglob("*.py")):
            for name in _imports(path):
                parts = name.split(".")
                if parts[:2] == ["sesstool", "dialects"] and len(parts) > 2:
                    assert parts[2] in DIALECT_SHARED | {package.name}, (
                        f"{path.relative_to(PKG)} imports {name}: a dialect imports no other dialect"
                    )


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        graph[_module_name(path)] = {n for n in _imports(path) if n.startswith("sesstool.") and _exists(n)}
    # Tarjan's strongly connected components: any component of two or more modules is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_engine_opens_no_file() -> None:
    """DESIGN §2: only the store touches the file system; the engine composes."""
    for path in _modules("engine"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "open", f"{path.relative_to(PKG)} calls open()"


# What asks the file system (or the object store) what a path is: only the store may (DESIGN §2;
# ``store.paths.classify_path`` is the one classifier the engine and the fleet ask).
FS_CALLS = {
    "stat", "lstat", "fstat", "exists", "lexists", "is_dir", "is_file", "is_symlink", "is_fifo",
    "isdir", "isfile", "islink", "iterdir", "glob", "iglob", "rglob", "walk", "scandir", "listdir",
    "resolve", "realpath", "samefile", "getsize", "getmtime", "access",
}  # fmt: skip
FS_MODULES = {"glob", "shutil", "fnmatch", "stat"}
OS_ERRORS = {"OSError", "IOError", "FileNotFoundError", "PermissionError", "NotADirectoryError"}


def _file_system_uses(path: Path) -> list[str]:
    found: list[str] = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            # a method or module function (``os.stat``, ``path.exists()``); a bare name is the
            # store's own function imported by name (``from os import`` is caught below)
            name = func.attr if isinstance(func, ast.Attribute) else None
            if name in FS_CALLS:
                found.append(f"{path.relative_to(PKG)}:{node.lineno} calls {name}()")
        elif isinstance(node, ast.ExceptHandler) and _names_oserror(node.type):
            found.append(f"{path.relative_to(PKG)}:{node.lineno} catches an OSError itself")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "os.path"):
            found.append(f"{path.relative_to(PKG)}:{node.lineno} imports from {node.module}")
    found.extend(
        f"{path.relative_to(PKG)} imports {name}"
        for name in _imports(path)
        if name.split(".")[0] in FS_MODULES
    )
    return found


def _names_oserror(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Tuple):
        return any(_names_oserror(e) for e in node.elts)
    return isinstance(node, ast.Name) and node.id in (
        "OSError",
        "FileNotFoundError",
        "IOError",
        "PermissionError",
    )


@pytest.mark.parametrize("ring", ["engine", "fleet"])
def test_only_the_store_asks_the_file_system(ring: str) -> None:
    """The engine and the fleet never stat, walk, glob or test a path themselves, nor catch the
    OSError of doing so: they ask ``store.paths`` (one classifier) and the store's readers."""
    found = [use for path in _modules(ring) for use in _file_system_uses(path)]
    assert not found, "\n".join(found)


def test_the_file_system_check_catches_each_kind_of_use(tmp_path: Path) -> None:
    """The check above must see every form it forbids (a check that cannot fail is a defect)."""
    sample = PKG / "engine" / "_sample_for_test.py"
    cases = {
        "os.stat(p)": "stat",
        "Path(p).exists()": "exists",
        "os.walk(p)": "walk",
        "Path(p).iterdir()": "iterdir",
        "Path(p).rglob('*')": "rglob",
        "os.path.isdir(p)": "isdir",
        "import glob": "glob",
        "from os.path import isdir": "os.path",
        "try:\n    pass\nexcept OSError:\n    pass": "OSError",
    }
    try:
        for code, word in cases.items():
            sample.write_text(code + "\n")
            uses = _file_system_uses(sample)
            assert uses and word in uses[0], (code, uses)
        sample.write_text("os.cpu_count()\nPath(p).name\n")
        assert _file_system_uses(sample) == []
    finally:
        sample.unlink(missing_ok=True)


def _dialect_names() -> set[str]:
    from sesstool.dialects import registry

    return set(registry.names())


def _outside_dialects() -> list[Path]:
    return [
        p
        for p in sorted(PKG.rglob("*.py"))
        if p.relative_to(PKG).parts[0] != "dialects"
        or (p.name == "__init__.py" and p.parent.name == "dialects")
    ]


def test_no_dialect_name_outside_the_dialects() -> None:
    """No module outside the dialect packages and the registry names a dialect or compares a
    ``dialect`` with a string: it asks the Dialect object."""
    names = _dialect_names()
    assert names >= {"dsh", "mini"}
    for path in _outside_dialects():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in names, (
                    f"{path.relative_to(PKG)}:{node.lineno} names the dialect {node.value!r}"
                )
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                dialectish = any(
                    (isinstance(o, ast.Attribute) and o.attr in ("dialect", "DIALECT"))
                    or (isinstance(o, ast.Name) and o.id in ("dialect", "DIALECT"))
                    for o in operands
                )
                assert not dialectish, f"{path.relative_to(PKG)}:{node.lineno} compares a dialect"


def _rule_table_text(tree: ast.AST) -> set[int]:
    """ids of the string constants inside ``rule_table(...)`` calls (a dialect's rule table)."""
    return {
        id(c)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "rule_table"
        for c in ast.walk(n)
    }


def test_rule_ids_are_named_constants() -> None:
    """Rule ids are written as named constants (``R.SEQ_GAP`` from ``core.rule_ids``; a dialect's
    own rules from its ``dialects/<name>/rule_ids.py``: ``CR.FRAGMENT``, ``CX.EMPTY_FILE``), never
    as bare strings, outside the registry and the dialects' rule tables; each constants module
    names exactly the rules of its table."""
    from sesstool.core import rule_ids
    from sesstool.core.rules import _RULES
    from sesstool.dialects import registry

    def named(module: object) -> set[str]:
        return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}

    constants = named(rule_ids)
    assert constants == {r.id for r in _RULES}
    exempt = {"core/rules.py", "core/rule_ids.py"}
    for dialect in registry.DIALECTS:
        if dialect.rules:
            own = importlib.import_module(f"sesstool.dialects.{dialect.name}.rule_ids")
            assert named(own) == {r.id for r in dialect.rules}, dialect.name
            constants |= named(own)
            exempt.add(f"dialects/{dialect.name}/rule_ids.py")
    for path in sorted(PKG.rglob("*.py")):
        if path.relative_to(PKG).as_posix() in exempt:
            continue  # the registry and the constants themselves
        tree = ast.parse(path.read_text())
        table = _rule_table_text(tree)  # a dialect's rule table names its rules in text
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in table:
                assert node.value not in constants, (
                    f"{path.relative_to(PKG)}:{node.lineno} writes the rule id {node.value!r} as a string"
                )


def test_the_store_takes_no_dialect_decision() -> None:
    """A zstd layout rule is a dialect's (dsh §9.2's header frame, and the one-frame log of a
    generic compressor): the store reports facts (``core.physical.FramingFact``) and holds none
    back, and neither it nor the envelope scanner names the rules (``Dialect.framing_finding``)."""
    layout_rules = {"ZSTD_HEADER_FRAME", "ZSTD_SINGLE_FRAME"}
    paths = [*_modules("store"), PKG / "core" / "scanner.py", PKG / "core" / "physical.py"]
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in layout_rules:
                raise AssertionError(f"{path.relative_to(PKG)}:{node.lineno} decides a dsh layout rule")


def test_only_the_dialect_asks_for_its_framing_findings() -> None:
    """Whether a write rewrites a log's zstd framing is the dialect's answer
    (``Dialect.rewrites_framing``): outside the dialect that owns the layout rules and the rule
    tables, no module looks for them among the findings (engine, render and the rest ask)."""
    layout_rules = {"ZSTD_HEADER_FRAME", "ZSTD_SINGLE_FRAME"}
    homes = {PKG / "core" / "rule_ids.py", PKG / "core" / "rules.py"}
    for path in sorted(PKG.rglob("*.py")):
        if path in homes or path.is_relative_to(PKG / "dialects" / "dsh"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in layout_rules:
                raise AssertionError(f"{path.relative_to(PKG)}:{node.lineno} asks for a dsh layout rule")


def test_one_schema_version() -> None:
    """Every document's ``schema_version`` is ``core.documents.SCHEMA_VERSION`` (one home)."""
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "schema_version":
                    assert isinstance(value, ast.Name) and value.id == "SCHEMA_VERSION", (
                        f"{path.relative_to(PKG)}:{key.lineno}: schema_version is not SCHEMA_VERSION"
                    )


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
