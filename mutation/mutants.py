"""The mutants of one module, generated from its AST (pure: source text in, mutated text out).

Operators: arithmetic/bitwise operator swaps, comparison swaps, ``and``/``or``, negated
conditions (and a dropped ``not``), off-by-one integer constants, ``True``/``False``, and dropped
statements. A mutant is named by where it is (function, source line) and what it changes, never
by its line number alone, so that a judgement written in ``equivalent.toml`` survives edits
elsewhere in the file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
SYMBOL: dict[type[ast.AST], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Div: "/",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.And: "and",
    ast.Or: "or",
}
DROPPABLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Raise,
    ast.Continue,
    ast.Break,
    ast.Delete,
)


@dataclass(frozen=True, slots=True)
class Mutant:
    module: str  # path relative to the repository root
    index: int  # position in generation order (stable for one source text)
    qualname: str  # enclosing function/class, "<module>" at top level
    operator: str  # binop | compare | boolop | negate | constant | drop
    change: str  # e.g. "< -> <=", "drop: self._pending.clear()"
    source_line: str  # the stripped first source line of the mutated node
    nth: int  # among mutants with the same (qualname, operator, change, source_line)
    lineno: int
    end_lineno: int

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        return (self.module, self.qualname, self.operator, self.source_line, self.change, self.nth)

    def describe(self) -> str:
        where = f"{self.module}:{self.lineno} [{self.qualname}]"
        return f"{where} {self.operator}: {self.change}  |  {self.source_line}"


@dataclass(frozen=True, slots=True)
class _Site:
    """Where a mutation applies: the path of field names and list indices from the module root
    to the node (so it can be found again in a fresh parse), and what to do there."""

    path: tuple[str | int, ...]
    scope: str
    operator: str
    change: str
    node: ast.AST
    apply: str  # the name of the transformation (see _transform)
    arg: object = None


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_type_checking(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and ast.unparse(stmt.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


class _Finder:
    """Walks the tree in a fixed order and records every mutation site."""

    def __init__(self) -> None:
        self.sites: list[_Site] = []

    def walk(self, node: ast.AST, path: tuple[str | int, ...], scope: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # decorators, annotations and default values are not mutated: decorators and
            # annotations are declarations; defaults are evaluated once at import
            inner = node.name if scope == "<module>" else f"{scope}.{node.name}"
            for i, stmt in enumerate(node.body):
                self.stmt(stmt, (*path, "body", i), inner)
            return
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "type_comment", "decorator_list"):
                continue
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.stmt):
                        self.stmt(item, (*path, name, i), scope)
                    elif isinstance(item, ast.AST):
                        self.expr(item, (*path, name, i), scope)
            elif isinstance(value, ast.stmt):
                self.stmt(value, (*path, name), scope)
            elif isinstance(value, ast.AST):
                self.expr(value, (*path, name), scope)

    def add(self, site: _Site) -> None:
        self.sites.append(site)

    def stmt(self, stmt: ast.stmt, path: tuple[str | int, ...], scope: str) -> None:
        if _is_docstring(stmt) or _is_type_checking(stmt):
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return
        bare = isinstance(stmt, ast.AnnAssign) and stmt.value is None
        constant = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if isinstance(stmt, DROPPABLE) and not bare and not constant:
            first = ast.unparse(stmt).splitlines()[0]
            self.add(_Site(path, scope, "drop", f"{first} -> pass", stmt, "drop"))
        if isinstance(stmt, (ast.If, ast.While)):
            self.negate(stmt.test, (*path, "test"), scope)
        if isinstance(stmt, ast.AugAssign) and type(stmt.op) in BINOP_SWAPS:
            new = BINOP_SWAPS[type(stmt.op)]
            self.add(
                _Site(path, scope, "binop", f"{SYMBOL[type(stmt.op)]}= -> {SYMBOL[new]}=", stmt, "augop", new)
            )
        self.walk(stmt, path, scope)

    def negate(self, test: ast.expr, path: tuple[str | int, ...], scope: str) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return  # dropping the `not` is the same mutant, found by expr()
        self.add(_Site(path, scope, "negate", f"{ast.unparse(test)} -> not (...)", test, "negate"))

    def expr(self, node: ast.AST, path: tuple[str | int, ...], scope: str) -> None:
        if isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAPS:
            new = BINOP_SWAPS[type(node.op)]
            self.add(
                _Site(path, scope, "binop", f"{SYMBOL[type(node.op)]} -> {SYMBOL[new]}", node, "binop", new)
            )
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in COMPARE_SWAPS:
                    swapped = COMPARE_SWAPS[type(op)]
                    self.add(
                        _Site(
                            path,
                            scope,
                            "compare",
                            f"{SYMBOL[type(op)]} -> {SYMBOL[swapped]}",
                            node,
                            "compare",
                            (i, swapped),
                        )
                    )
        elif isinstance(node, ast.BoolOp):
            new_op = "or" if isinstance(node.op, ast.And) else "and"
            self.add(_Site(path, scope, "boolop", f"{SYMBOL[type(node.op)]} -> {new_op}", node, "boolop"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.add(
                _Site(
                    path,
                    scope,
                    "negate",
                    f"not {ast.unparse(node.operand)} -> {ast.unparse(node.operand)}",
                    node,
                    "unnot",
                )
            )
        elif isinstance(node, ast.IfExp):
            self.negate(node.test, (*path, "test"), scope)
        elif isinstance(node, ast.comprehension):
            for i, cond in enumerate(node.ifs):
                self.negate(cond, (*path, "ifs", i), scope)
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                self.add(_Site(path, scope, "constant", f"{value} -> {not value}", node, "const", not value))
            elif isinstance(value, int):
                self.add(_Site(path, scope, "constant", f"{value} -> {value + 1}", node, "const", value + 1))
                self.add(_Site(path, scope, "constant", f"{value} -> {value - 1}", node, "const", value - 1))
        elif isinstance(node, ast.JoinedStr):
            return  # message text is not mutated; its expressions are judged where computed
        if isinstance(node, ast.Lambda):
            self.walk(node, path, f"{scope}.<lambda>")
        else:
            self.walk(node, path, scope)


def _get(root: ast.AST, path: tuple[str | int, ...]) -> object:
    obj: object = root
    for step in path:
        obj = getattr(obj, step) if isinstance(step, str) else obj[step]  # type: ignore[index]
    return obj


def _set(root: ast.AST, path: tuple[str | int, ...], value: ast.AST) -> None:
    holder = _get(root, path[:-1])
    last = path[-1]
    if isinstance(last, int):
        holder[last] = value  # type: ignore[index]
    else:
        setattr(holder, last, value)


def _transform(site: _Site, tree: ast.Module) -> None:
    node = _get(tree, site.path)
    assert isinstance(node, ast.AST)
    if site.apply == "drop":
        _set(tree, site.path, ast.copy_location(ast.Pass(), node))
    elif site.apply == "augop":
        assert isinstance(node, ast.AugAssign) and isinstance(site.arg, type)
        node.op = site.arg()
    elif site.apply == "binop":
        assert isinstance(node, ast.BinOp) and isinstance(site.arg, type)
        node.op = site.arg()
    elif site.apply == "compare":
        assert isinstance(node, ast.Compare) and isinstance(site.arg, tuple)
        i, new = site.arg
        node.ops[i] = new()
    elif site.apply == "boolop":
        assert isinstance(node, ast.BoolOp)
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif site.apply == "negate":
        assert isinstance(node, ast.expr)
        _set(tree, site.path, ast.copy_location(ast.UnaryOp(ast.Not(), node), node))
    elif site.apply == "unnot":
        assert isinstance(node, ast.UnaryOp)
        _set(tree, site.path, node.operand)
    elif site.apply == "const":
        assert isinstance(node, ast.Constant) and isinstance(site.arg, int)
        node.value = site.arg
    else:  # pragma: no cover - every site names one of the above
        raise AssertionError(site.apply)


def _sites(tree: ast.Module) -> list[_Site]:
    finder = _Finder()
    finder.walk(tree, (), "<module>")
    return finder.sites


def mutants(module: str, source: str) -> list[Mutant]:
    """Every mutant of ``source`` (the text of ``module``), in a fixed order."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[Mutant] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for index, site in enumerate(_sites(tree)):
        node, scope = site.node, site.scope
        lineno = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", lineno) or lineno
        text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
        ident = (scope, site.operator, text, site.change)
        nth = seen.get(ident, 0)
        seen[ident] = nth + 1
        out.append(Mutant(module, index, scope, site.operator, site.change, text, nth, lineno, end))
    return out


def mutate(source: str, index: int) -> str:
    """The source text of mutant ``index`` (as ``ast.unparse`` writes it)."""
    tree = ast.parse(source)
    site = _sites(tree)[index]
    _transform(site, tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def original(source: str) -> str:
    """The unmutated module as ``ast.unparse`` writes it: the baseline every mutant differs from."""
    return ast.unparse(ast.parse(source))


def iter_changed(source: str) -> Iterator[tuple[int, str]]:
    """(index, mutated source) for every mutant; each parses (a check on the generator)."""
    for m in mutants("<check>", source):
        text = mutate(source, m.index)
        compile(text, "<mutant>", "exec")
        yield m.index, text
