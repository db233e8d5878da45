"""Where each function lives: the component step that declares it, its entry module, its tests.

``make docs`` writes the map into README.md from the dev stack's graph (every function of both
stacks is in dev). The step is the method of the system's component that calls the function
factory with the function's seed name, found in the component's source, so the map follows the
code when a step moves. Tests are found by name: ``tests/handlers/<system>/test_<function>.py``
(the function's whole name, ``-`` as ``_``); ``TESTS_ELSEWHERE`` names them
for a function whose tests are not (yet) there. ``problems`` says what in the map no longer
fits the tree; a test keeps it empty.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from components.offline.engine import Graph
from components.offline.plan import functions_of, system_components
from components.systems import entry

ROOT = Path(__file__).resolve().parents[2]
FACTORY = "function"
"""The name every system step calls its ``FunctionFactory`` by (``b.function``, its ``Build``'s
field, in components/systems/*.py)."""

TESTS_ELSEWHERE: dict[str, tuple[str, ...]] = {}
"""Test modules under tests/handlers/ of a function that has none at its conventional path.
An entry whose function has gained that module is stale: ``problems`` names it."""


@dataclass(frozen=True)
class Place:
    """Where one function is declared, run and tested (paths from the repository root)."""

    function: str
    """The seed name, ``dm-block``."""
    step: str
    """The component method that declares it, ``DuplicateMerger._block``."""
    step_file: str
    entry: str
    """The entry module, ``handlers/duplicate_merger/functions/block.py``."""
    tests: tuple[str, ...]


def conventional_tests(system: str, function: str) -> str:
    """``tests/handlers/ler/test_ler_junk_writer.py`` for ``ler-junk-writer``: the whole name, so
    a search for the function's name with ``_`` finds its tests."""
    return f"tests/handlers/{system}/test_{function.replace('-', '_')}.py"


def tests_of(system: str, function: str, root: Path = ROOT) -> tuple[str, ...]:
    """The conventional module if it exists, else the explicit ones (else the conventional
    path, which ``problems`` reports as missing)."""
    conventional = conventional_tests(system, function)
    if (root / conventional).is_file() or function not in TESTS_ELSEWHERE:
        return (conventional,)
    return tuple(f"tests/handlers/{path}" for path in TESTS_ELSEWHERE[function])


def _called_name(func: ast.expr) -> str:
    """``function`` for ``function(...)`` and for ``b.function(...)`` (a step's ``Build``)."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _value(node: ast.expr, module: ModuleType) -> object:
    """A ``contract.BLOCK``-style argument, read from the module it is written in."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return getattr(module, node.id, None)
    if isinstance(node, ast.Attribute):
        owner = _value(node.value, module)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


def steps(system: str) -> dict[str, str]:
    """Seed name -> ``Class._method`` of every ``function(<name>, ...)`` call in the system's
    component class."""
    found = entry(system)
    module = importlib.import_module(found.module)
    tree = ast.parse(inspect.getsource(module))
    cls = next(
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == found.class_name
    )
    declared: dict[str, str] = {}
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        for call in ast.walk(method):
            if (
                isinstance(call, ast.Call)
                and _called_name(call.func) == FACTORY
                and call.args
            ):
                name = _value(call.args[0], module)
                if isinstance(name, str):
                    declared[name] = f"{found.class_name}.{method.name}"
    return declared


def places(graph: Graph, root: Path = ROOT) -> list[Place]:
    """One place per function of ``graph``, in the plan's order."""
    found: list[Place] = []
    for system in system_components(graph):
        if system.name not in graph.config.systems.enabled():
            continue
        declared = steps(system.name)
        step_file = entry(system.name).module.replace(".", "/") + ".py"
        for function in functions_of(graph, system):
            name = str(function.inputs["tags"]["crm:function"])
            module = str(function.inputs["handler"]).rsplit(".", 1)[0]
            found.append(
                Place(
                    function=name,
                    step=declared.get(name, ""),
                    step_file=step_file,
                    entry=module.replace(".", "/") + ".py",
                    tests=tests_of(system.name, name, root),
                )
            )
    return found


def problems(mapped: Sequence[Place], root: Path = ROOT) -> list[str]:
    """What in the map does not fit the tree: a step not found, a file that is not there, an
    explicit entry no longer needed or naming no function."""
    found: list[str] = []
    for place in mapped:
        if not place.step:
            found.append(f"{place.function}: no method of {place.step_file} calls {FACTORY}(<its name>)")
        for path in (place.step_file, place.entry, *place.tests):
            if not (root / path).is_file():
                found.append(f"{place.function}: {path} does not exist")
    names = {place.function: place for place in mapped}
    for function in TESTS_ELSEWHERE:
        if function not in names:
            found.append(f"TESTS_ELSEWHERE names {function}, which no stack declares")
            continue
        system = function.split("-", 1)[0]
        if (root / conventional_tests(system, function)).is_file():
            found.append(
                f"TESTS_ELSEWHERE[{function!r}] is stale: "
                f"{conventional_tests(system, function)} exists; remove the entry"
            )
    return found


def _link(path: str, text: str) -> str:
    return f"[`{text}`]({path})"


def render(mapped: Sequence[Place]) -> str:
    """The README's table: function, step, entry module, tests (links from the root)."""
    lines = [
        "| function | declared in | code | tests |",
        "|---|---|---|---|",
    ]
    for place in mapped:
        tests = ", ".join(_link(path, path.removeprefix("tests/handlers/")) for path in place.tests)
        lines.append(
            f"| `{place.function}` | {_link(place.step_file, place.step)} "
            f"| {_link(place.entry, place.entry.removeprefix('handlers/'))} | {tests} |"
        )
    return "\n".join(lines)
