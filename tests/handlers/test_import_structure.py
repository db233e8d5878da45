"""The handlers' import structure, read from the source (ast), never by importing it.

* No cycle between handler modules through their top-level imports (``if TYPE_CHECKING``
  blocks excluded: they never run). A cycle makes the import order matter and hides behind
  function-local imports, which is how the three the issue found were kept alive.
* No function-local import in ``handlers/``: every module names what it uses at its top. The
  measured cold-path weights are loaded late only through ``cold_path.load("name")`` with a
  name its ``WEIGHTS`` table lists (and nothing else calls ``importlib`` or ``__import__``).
  The one other form is ``try: import x except ImportError`` for a distribution only some
  archives vendor (dm's phone normalisation), which the archive builder reads as optional.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from handlers.common.cold_path import WEIGHTS

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


def _optional(tree: ast.Module) -> set[int]:
    """Ids of the nodes inside ``try: ... except ImportError`` (an optional distribution)."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.Try)
        and any("ImportError" in ast.unparse(h.type or ast.Name("")) for h in node.handlers)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }


def late_imports(root: Path = HANDLERS, base: Path = ROOT) -> list[str]:
    """``path:line what`` for every import that does not go through the module top or the
    cold-path helper: an import statement inside a function, ``importlib``/``__import__``
    outside the helper, or a ``cold_path.load`` of a module its table does not list."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = path.relative_to(base)
        optional = _optional(tree)
        helper = path.name == "cold_path.py" and path.parent.name == "common"
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in optional:
                    found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
        for node in ast.walk(tree):
            if helper or not isinstance(node, ast.Call | ast.Import | ast.ImportFrom):
                continue
            text = ast.unparse(node.func if isinstance(node, ast.Call) else node)
            if "importlib" in text or text == "__import__":
                found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
            elif isinstance(node, ast.Call) and text == "cold_path.load":
                name = node.args[0] if len(node.args) == 1 and not node.keywords else None
                if not (isinstance(name, ast.Constant) and name.value in WEIGHTS):
                    found.append(f"{where}:{node.lineno} {ast.unparse(node)} (not in WEIGHTS)")
    return sorted(found, key=lambda line: (line.split(":")[0], int(line.split(":")[1].split()[0])))


def test_no_import_cycle_between_handler_modules() -> None:
    assert cycles(import_graph()) == []


def test_no_function_local_import_but_through_the_cold_path_helper() -> None:
    assert late_imports() == []


def test_the_late_import_check_finds_each_form(tmp_path: Path) -> None:
    """The checker itself: a planted local import, importlib, and an unlisted load are found;
    the helper, a listed load and an optional distribution are not."""
    package = tmp_path / "handlers" / "demo"
    package.mkdir(parents=True)
    (package / "a.py").write_text(
        "import importlib\n"
        "from handlers.common import cold_path\n"
        "def f():\n    import json\n    return json\n"
        "def g():\n    return importlib.import_module('json')\n"
        "def h():\n    return cold_path.load('json'), cold_path.load('boto3')\n"
        "def k():\n    try:\n        import phonenumbers\n    except ImportError:\n"
        "        return None\n    return phonenumbers\n"
    )
    (tmp_path / "handlers" / "common").mkdir()
    (tmp_path / "handlers" / "common" / "cold_path.py").write_text(
        "import importlib\ndef load(name):\n    import sys\n    return importlib.import_module(name)\n"
    )
    found = late_imports(tmp_path / "handlers", tmp_path)
    assert found == [
        "handlers/common/cold_path.py:3 import sys",
        "handlers/demo/a.py:1 import importlib",
        "handlers/demo/a.py:4 import json",
        "handlers/demo/a.py:7 importlib.import_module('json')",
        "handlers/demo/a.py:9 cold_path.load('json') (not in WEIGHTS)",
    ]


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
