"""The handlers' import structure, read from the source (ast), never by importing it.

* No cycle between handler modules through their top-level imports (``if TYPE_CHECKING``
  blocks excluded: they never run). A cycle makes the import order matter and hides behind
  function-local imports, which is how the three the issue found were kept alive.
* No function-local import of the project's own modules in ``handlers/``: every module names
  what it uses at its top, except inside ``try: ... except ImportError`` (a module that needs
  a distribution only some archives vendor, as dm's phone normalisation). Third-party cold-path weights (boto3, botocore, Powertools,
  pydantic, phonenumbers) stay lazy where a measured cold start asked for it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = ROOT / "handlers"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: top-level, in try/if blocks too."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not _type_checking(node):
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                stack.extend(handler.body)


def _targets(node: ast.Import | ast.ImportFrom, modules: set[str]) -> set[str]:
    """The project modules an import statement loads (``from pkg import mod`` loads mod)."""
    found: set[str] = set()
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        names = [base] + [f"{base}.{alias.name}" for alias in node.names]
    for name in names:
        if name in modules:
            found.add(name)
    return found


def import_graph(root: Path = HANDLERS, base: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules its top-level imports load."""
    trees = {module_name(p, base): ast.parse(p.read_text()) for p in sorted(root.rglob("*.py"))}
    modules = set(trees)
    return {
        name: {t for node in _top_level_imports(tree) for t in _targets(node, modules)} - {name}
        for name, tree in trees.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def local_project_imports(root: Path = HANDLERS) -> list[str]:
    """``path:line module`` for every import of a ``handlers`` module inside a function."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        optional = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.Try)
            and any("ImportError" in ast.unparse(h.type or ast.Name("")) for h in node.handlers)
            for stmt in node.body
            for inner in ast.walk(stmt)
        }
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in optional:
                    names = (
                        [node.module or ""]
                        if isinstance(node, ast.ImportFrom)
                        else [a.name for a in node.names]
                    )
                    if any(n == "handlers" or n.startswith("handlers.") for n in names):
                        where = path.relative_to(ROOT)
                        found.append(f"{where}:{node.lineno} {', '.join(names)}")
    return found


def test_no_import_cycle_between_handler_modules() -> None:
    assert cycles(import_graph()) == []


def test_no_function_local_import_of_a_handler_module() -> None:
    assert local_project_imports() == []


def test_the_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    """The checker itself: two modules importing each other at the top are one cycle."""
    package = tmp_path / "handlers" / "demo"
    package.mkdir(parents=True)
    (tmp_path / "handlers" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from handlers.demo import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nfrom handlers.demo.a import thing\n"
        "if TYPE_CHECKING:\n    from handlers.demo import c\n"
    )
    (package / "c.py").write_text("from handlers.demo import b\n")
    graph = import_graph(tmp_path / "handlers", tmp_path)
    assert cycles(graph) == [["handlers.demo.a", "handlers.demo.b"]]
