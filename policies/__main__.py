"""Entry point of the policy pack: serves the pack's policies to the Pulumi engine.

The Python language host runs this file (``python -m pulumi.policy <engine> <pack dir>``) with
the pack directory first on ``sys.path``, from wherever the pack lives: this checkout's
``policies/``, or the folder ``pulumi policy publish`` uploaded and an enforcing CLI
downloaded under another name. So the pack loads its own folder as the package ``policies``
(the name its modules import each other by, and the objects the tests run), whatever the
folder is called, and takes the folder itself off ``sys.path`` so that no module of the pack
(``common``, ``rules``) can shadow a library module. Nothing outside the folder is imported.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PACK_DIR = Path(__file__).resolve().parent
_PACKAGE = "policies"


def _load_pack_package() -> None:
    loaded = sys.modules.get(_PACKAGE)
    paths = [Path(p).resolve() for p in getattr(loaded, "__path__", [])]
    if loaded is not None and _PACK_DIR in paths:
        return  # already this folder (the tests import it before running this file)
    spec = importlib.util.spec_from_file_location(
        _PACKAGE, _PACK_DIR / "__init__.py", submodule_search_locations=[str(_PACK_DIR)]
    )
    if spec is None or spec.loader is None:  # pragma: no cover - the file is right here
        raise ImportError(f"cannot load the policy pack from {_PACK_DIR}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = package
    spec.loader.exec_module(package)


sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _PACK_DIR]
_load_pack_package()

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.pack import ALL_POLICIES  # noqa: E402

PolicyPack(
    name="crm-automations-guard",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=ALL_POLICIES,
)
