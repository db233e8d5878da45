"""Entry point of ``pulumi preview --policy-pack policies``: serves the pack to the engine.

The Python language host runs this file with the pack directory first on ``sys.path``; the
project root goes there instead, so the pack's modules import as ``policies.*`` (the same
objects the tests run) and no module of the pack can shadow a library module.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACK_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _PACK_DIR]
sys.path.insert(0, str(_PACK_DIR.parent))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.pack import ALL_POLICIES  # noqa: E402

PolicyPack(
    name="crm-automations-guard",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=ALL_POLICIES,
)
