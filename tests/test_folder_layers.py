"""The non-shipped folders form layers, not a loop: benchmarks -> sandbox -> testsupport.

Every import counts, function-local and ``TYPE_CHECKING`` ones too (a local import hides a
cycle from Python, not from a reader). testsupport holds the shared fakes, events and data
generator; the sandbox plays them; the benchmarks measure both.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("sandbox", "testsupport", "benchmarks")


def _imported_tops(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def folder_imports(repo: Path = REPO) -> dict[str, set[str]]:
    """Which of the folders each folder imports (itself left out)."""
    graph: dict[str, set[str]] = {folder: set() for folder in FOLDERS}
    for folder in FOLDERS:
        for path in (repo / folder).rglob("*.py"):
            graph[folder] |= {t for t in _imported_tops(path) if t in FOLDERS and t != folder}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A path that comes back to its start (depth-first), or None."""
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for target in sorted(graph.get(node, ())):
            found = walk(target, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = walk(start, [])
        if found:
            return found
    return None


def test_find_cycle_names_the_loop() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"b"}}) is None


def test_sandbox_testsupport_benchmarks_form_no_cycle() -> None:
    graph = folder_imports()
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])
    assert graph["testsupport"] == set(), "testsupport is the bottom layer"
