"""The matcher is a package with one face: it imports nothing of dm's around it, and dm's
pipeline and the benchmarks reach it only through ``handlers.duplicate_merger.matcher``'s API.
Read from the source (ast), as ``tests/test_import_structure.py`` reads every module."""

from __future__ import annotations

import ast
from pathlib import Path

from handlers.duplicate_merger import matcher
from tests.test_import_structure import ROOT, import_graph

FACE = "handlers.duplicate_merger.matcher"
CALLERS = ("handlers", "benchmarks", "testsupport", "sandbox")


def test_the_matcher_imports_nothing_of_dm_outside_it() -> None:
    outside = {
        (module, target)
        for module, targets in import_graph((ROOT / "handlers").rglob("*.py")).items()
        if module.startswith(f"{FACE}.")
        for target in targets
        if target.startswith("handlers.duplicate_merger") and not target.startswith(FACE)
    }
    assert outside == set()


def _imports_from_inside(path: Path) -> list[str]:
    """Imports of a module inside the matcher (``handlers.duplicate_merger.matcher.<module>``)."""
    hits: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        hits += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.startswith(f"{FACE}.")]
    return hits


def test_callers_use_only_its_face() -> None:
    package = ROOT / "handlers" / "duplicate_merger" / "matcher"
    found = [
        hit
        for folder in CALLERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if package not in path.parents
        for hit in _imports_from_inside(path)
    ]
    assert found == []


def test_the_face_hands_on_every_name_it_lists() -> None:
    assert sorted(name for name in matcher.__all__ if not hasattr(matcher, name)) == []
