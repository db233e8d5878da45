"""The sandbox's fresh handler modules, and putting the process's own back when it stops.

A sandbox is a new deployment, so it starts new containers: the graph's handler packages are
taken out of ``sys.modules`` (their module caches may hold clients of an earlier sandbox) and
imported again by the runtime. When it stops, the process's own modules go back, so tests in
the same process keep the module objects they imported and patched.

Putting the packages back is not enough: a module first imported while the sandbox ran (a
scenario's test double, ``testsupport.dm``) bound the sandbox's classes
(``handlers.duplicate_merger.crm.Association``), and would hand them to every later importer,
beside the restored originals: two classes of one name that neither compare nor match
``isinstance``. So every module imported during the sandbox that holds anything of the
swapped packages, directly or through another such module, is forgotten too, and the next
import binds the originals. And the handlers' registry (``handlers.common.entry``, which the
swap keeps) goes back to the registrations made before: the copies registered their own
``wire`` under the same function names, so the process's handler modules would otherwise
wire the copies' services (a test's dm-merge building the sandbox's ``MergeService``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from types import FunctionType, ModuleType
from typing import Any

from handlers.common.entry import registry


def _origin(value: Any) -> str | None:
    """The module a global value comes from (its own name for a module)."""
    if isinstance(value, ModuleType):
        return value.__name__
    if isinstance(value, type | FunctionType):
        return getattr(value, "__module__", None)
    return type(value).__module__


class ModuleSwap:
    """Fresh copies of some packages for a while; ``restore`` puts the process's back."""

    def __init__(self) -> None:
        self.packages: set[str] = set()
        self._saved: dict[str, ModuleType] = {}
        self._before: set[str] = set()
        self._registrations: dict[str, Any] = {}

    def _swapped(self, name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in self.packages)

    def start(self, packages: Iterable[str]) -> None:
        """Take ``packages`` (and their submodules) out of ``sys.modules`` until ``restore``."""
        self.packages = set(packages)
        self._registrations = registry.registrations()
        for name in list(sys.modules):
            if self._swapped(name):
                self._saved[name] = sys.modules.pop(name)
        self._before = set(sys.modules)

    def restore(self) -> None:
        """Forget the fresh packages and every module that took something from them, then put
        back the modules the process had before (parents' attributes included)."""
        stale = {name for name in sys.modules if self._swapped(name)}
        stale |= self._dependents(stale)
        for name in stale:
            module = sys.modules.pop(name, None)
            parent, _, child = name.rpartition(".")
            if module is not None and getattr(sys.modules.get(parent), child, None) is module:
                delattr(sys.modules[parent], child)
        for name, module in self._saved.items():
            sys.modules[name] = module
        for name, module in self._saved.items():
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, module)
        self._saved.clear()
        self._before = set()
        registry.reregister(self._registrations)

    def _dependents(self, tainted: set[str]) -> set[str]:
        """Modules imported since ``start`` holding a value of ``tainted`` modules, to a fixed
        point (a double importing another double's class is as stale as that double)."""
        candidates = [n for n in set(sys.modules) - self._before if n not in tainted]
        tainted = set(tainted)
        found: set[str] = set()
        grew = True
        while grew:
            grew = False
            for name in candidates:
                module = sys.modules.get(name)
                if name in found or module is None:
                    continue
                if any(_origin(v) in tainted for v in list(vars(module).values())):
                    found.add(name)
                    tainted.add(name)
                    grew = True
        return found
