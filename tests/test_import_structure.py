"""The import structure, read from the source (ast), never by importing it.

* No cycle between the modules of every tracked Python file (``git ls-files``) through any
  import that runs, function-local ones included (``if TYPE_CHECKING`` blocks excluded: they
  never run). A cycle makes the import order matter, and a function-local import hides it
  from Python, not from a reader: that is how the last two were kept alive.
* No function-local import in ``handlers/``: every module names what it uses at its top. The
  measured cold-path weights are loaded late only through ``cold_path.load("name")`` with a
  name its ``WEIGHTS`` table lists (and nothing else calls ``importlib`` or ``__import__``).
  The one other form is ``try: import x except ImportError`` for a distribution only some
  archives vendor (dm's phone normalisation), which the archive builder reads as optional.
* Outside ``handlers/`` and ``tests/``, a function-local import says why in a comment on the
  line above it (or its own line): a slow library loaded only on one path, the sandbox's own
  copy of the handler modules. One comment serves the imports right below it.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from handlers.common.cold_path import WEIGHTS

ROOT = Path(__file__).resolve().parents[1]
HANDLERS = ROOT / "handlers"
LOCAL_IMPORTS_MAY_STAY = ("handlers", "tests")
"""Folders whose function-local imports other rules govern (the handlers: none at all but
the cold path's) or need no reason (a test imports what its case uses)."""


def tracked(base: Path = ROOT) -> list[Path]:
    """Every Python file git tracks (virtual environments and scratch files are not)."""
    listed = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=base, capture_output=True, text=True, check=True
    ).stdout
    return [base / line for line in listed.split()]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _running_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run: at the top, in try/if blocks and in functions; not in an
    ``if TYPE_CHECKING`` block."""
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if _type_checking(node)  # type: ignore[arg-type]
        for stmt in node.body  # type: ignore[attr-defined]
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
            yield node


def _targets(node: ast.Import | ast.ImportFrom, modules: set[str]) -> set[str]:
    """The project modules an import statement loads (``from pkg import mod`` loads mod; the
    project writes absolute imports)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        names = [base] + [f"{base}.{alias.name}" for alias in node.names]
    return {name for name in names if name in modules}


def import_graph(paths: Iterable[Path], base: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules its imports load."""
    trees = {module_name(p, base): ast.parse(p.read_text()) for p in sorted(paths)}
    modules = set(trees)
    return {
        name: {t for node in _running_imports(tree) for t in _targets(node, modules)} - {name}
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


def unexplained_local_imports(paths: Iterable[Path], base: Path = ROOT) -> list[str]:
    """``path:line what`` for each function-local import with no comment on its line or on
    the line above it (the imports right below one comment share it); an optional
    distribution (``except ImportError``) says why by itself."""
    found: list[str] = []
    for path in sorted(paths):
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text)
        optional = _optional(tree)
        local = {
            node.lineno: node
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(function)
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in optional
        }
        ends = {node.end_lineno: node for node in local.values()}
        for line, node in sorted(local.items()):
            above = line - 1
            while above in ends:  # a group of imports: the comment is above the first
                above = ends[above].lineno - 1
            said = "#" in lines[line - 1] or lines[above - 1].strip().startswith("#")
            if not said:
                found.append(f"{path.relative_to(base)}:{line} {ast.unparse(node)}")
    return found


def _governed(path: Path) -> bool:
    return path.relative_to(ROOT).parts[0] not in LOCAL_IMPORTS_MAY_STAY


def test_no_import_cycle_between_any_tracked_modules() -> None:
    assert cycles(import_graph(tracked())) == []


def test_each_function_local_import_outside_handlers_and_tests_says_why() -> None:
    governed = [path for path in tracked() if _governed(path)]
    assert unexplained_local_imports(governed) == []


def test_the_reason_check_finds_an_unexplained_local_import(tmp_path: Path) -> None:
    """The checker itself: a bare local import is found; one under a comment, the group
    below that comment, one with a comment on its line and an optional one are not."""
    module = tmp_path / "tool.py"
    module.write_text(
        "def f():\n    import json\n    return json\n"
        "def g():\n    # pandas loads slowly: only here\n    import pandas\n"
        "    from pandas import (\n        DataFrame,\n    )\n    return pandas, DataFrame\n"
        "def h():\n    import csv  # why, on its line\n"
        "    try:\n        import splink\n    except ImportError:\n        return None\n"
        "def k():\n    x = 1\n    import os\n    return os, x\n"
    )
    assert unexplained_local_imports([module], tmp_path) == [
        "tool.py:2 import json",
        "tool.py:19 import os",
    ]


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
    """The checker itself: two modules importing each other at the top are one cycle, and
    so are two that do through a function-local import; a ``TYPE_CHECKING`` import is not."""
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
    (package / "d.py").write_text("def late():\n    from handlers.demo import e\n")
    (package / "e.py").write_text("from handlers.demo import d\n")
    graph = import_graph((tmp_path / "handlers").rglob("*.py"), tmp_path)
    assert cycles(graph) == [
        ["handlers.demo.a", "handlers.demo.b"],
        ["handlers.demo.d", "handlers.demo.e"],
    ]
