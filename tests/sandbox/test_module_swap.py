"""The sandbox's module swap leaves nothing of its copies behind for the tests after it.

The defect it guards: ``tests/sandbox/test_verify.py`` run before
``tests/handlers/dm/test_dm_merge.py`` in one process failed two dm flows with "'<' not
supported between instances of 'Association' and 'Association'": the sandbox's copy of dm-merge
had registered its own ``wire`` in the handlers' registry, so the test's dm-merge built the
copy's ``MergeService``, whose associations were of the copy's class. A module first imported
while the sandbox ran (a test double) would hand out the copy's classes the same way. Plain
modules in a temporary folder stand for a handler package, its entry module and two doubles.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from handlers.common.entry import registry
from sandbox.modules import ModuleSwap

PACKAGE = "swapfix_handlers"
FILES = {
    f"{PACKAGE}/__init__.py": "",
    f"{PACKAGE}/crm.py": "class Association:\n    pass\n",
    f"{PACKAGE}/merge.py": (
        "from handlers.common.entry import registry\n"
        f"from {PACKAGE}.crm import Association\n\n\n"
        "def wire(config, clock):\n    return Association\n\n\n"
        "registry.register(__name__, object, wire)\n"
    ),
    # A double that takes a class of the package, and one that takes the first double's.
    "swapfix_double.py": (
        f"from {PACKAGE}.crm import Association\n\n\n"
        "def make():\n    return Association()\n"
    ),
    "swapfix_double_user.py": "from swapfix_double import make\n",
}
OURS = (PACKAGE, "swapfix_double", "swapfix_double_user")


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = registry.registrations()
    yield
    for name in [n for n in sys.modules if n.split(".")[0] in OURS]:
        del sys.modules[name]
    registry.reregister(before)


def test_after_the_swap_the_process_wires_and_imports_its_own_modules(package: None) -> None:
    merge = importlib.import_module(f"{PACKAGE}.merge")
    original = sys.modules[f"{PACKAGE}.crm"].Association
    assert registry.registrations()[merge.__name__].wire is merge.wire

    swap = ModuleSwap()
    swap.start({PACKAGE})
    copy = importlib.import_module(f"{PACKAGE}.merge")  # the sandbox's new container
    assert copy is not merge and registry.registrations()[merge.__name__].wire is copy.wire
    importlib.import_module("swapfix_double_user")  # first imported while the sandbox runs
    assert sys.modules["swapfix_double"].Association is not original
    swap.restore()

    assert sys.modules[f"{PACKAGE}.merge"] is merge
    # The process's entry module wires its own service again, not the copy's.
    assert registry.registrations()[merge.__name__].wire is merge.wire
    assert registry.registrations()[merge.__name__].wire(None, None) is original
    # Neither double survives holding the copy's class; imported again, both bind the original.
    assert "swapfix_double" not in sys.modules and "swapfix_double_user" not in sys.modules
    assert type(importlib.import_module("swapfix_double_user").make()) is original
